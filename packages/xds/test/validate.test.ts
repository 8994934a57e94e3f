// The offline PGV checker: every Envoy resource we emit for the golden corpus validates and
// encodes; resources that break Envoy's rules are caught, naming the field.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { loadManifests } from '@turnpike/engine';
import { snapshotFromObjects, translate } from '@turnpike/translator';
import { buildBootstrap, decodeMessage, encodeMessage, envoyResourcesFor, validateMessage, validateResources } from '../src/index.js';

const corpus = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../shared/corpus/gateway-api-golden');

describe('PGV validation of emitted resources', () => {
  it('every resource for every golden corpus case validates and encodes', () => {
    expect(existsSync(corpus)).toBe(true);
    const cases = readdirSync(corpus).filter((c) => existsSync(join(corpus, c, 'input.yaml')));
    expect(cases.length).toBeGreaterThanOrEqual(100);
    let gateways = 0;
    const failures: string[] = [];
    for (const c of cases) {
      const objects = loadManifests([join(corpus, c, 'input.yaml')]).objects;
      const result = translate(snapshotFromObjects(objects));
      const secrets = new Map(objects.filter((o) => o.kind === 'Secret').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
      for (const gw of result.xdsIR.gateways.values()) {
        gateways++;
        const res = envoyResourcesFor(gw, (kind, ns, name) => (kind === 'Secret' ? secrets.get(`${ns}/${name}`) : undefined), undefined, result.xdsIR.endpoints);
        for (const e of validateResources(res)) failures.push(`${c}: ${e}`);
        for (const l of res.listeners) encodeMessage('envoy.config.listener.v3.Listener', l);
        for (const r of res.routes) encodeMessage('envoy.config.route.v3.RouteConfiguration', r);
        for (const cl of res.clusters) encodeMessage('envoy.config.cluster.v3.Cluster', cl);
        for (const e of res.endpoints) encodeMessage('envoy.config.endpoint.v3.ClusterLoadAssignment', e);
      }
    }
    expect(failures).toEqual([]);
    expect(gateways).toBeGreaterThan(100);
  });

  it('catches an empty domain list, an unnamed filter, a zero connect timeout and unknown fields', () => {
    expect(validateMessage('envoy.config.route.v3.VirtualHost', { name: 'v', domains: [] })).toContain('envoy.config.route.v3.VirtualHost.domains: must have at least 1 item(s)');
    expect(validateMessage('envoy.config.listener.v3.Filter', { name: '' }).join()).toMatch(/name: must have at least 1 character/);
    expect(validateMessage('envoy.config.cluster.v3.Cluster', { name: 'c', connect_timeout: { seconds: '0', nanos: 0 } }).join()).toMatch(/connect_timeout: must be a positive duration/);
    expect(validateMessage('envoy.config.route.v3.Route', { match: { prefix: '/' }, bogus: 1 }).join()).toMatch(/bogus: no such field/);
    expect(validateMessage('envoy.config.route.v3.Route', { match: {} }).join()).toMatch(/one of prefix, path, safe_regex/);
  });

  it('looks inside Any: a bad field of an HTTP connection manager is found', () => {
    const l = { name: 'l', address: { socket_address: { address: '0.0.0.0', port_value: 80 } }, filter_chains: [{ filters: [{ name: 'hcm', typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager', stat_prefix: '', http_filters: [] } }] }] };
    expect(validateMessage('envoy.config.listener.v3.Listener', l).join()).toMatch(/<HttpConnectionManager>\.stat_prefix: must have at least 1 character/);
  });

  it('encodes and decodes a resource without losing fields', () => {
    const c = { name: 'apps/web/8080', type: 'EDS', eds_cluster_config: { service_name: 'apps/web/8080', eds_config: { ads: {}, resource_api_version: 'V3' } }, connect_timeout: { seconds: '5' } };
    const back = decodeMessage('envoy.config.cluster.v3.Cluster', encodeMessage('envoy.config.cluster.v3.Cluster', c));
    expect(back).toMatchObject({ name: 'apps/web/8080', type: 'EDS', connect_timeout: { seconds: '5' } });
    expect((back.eds_cluster_config as { service_name: string }).service_name).toBe('apps/web/8080');
  });

  it('the bootstrap validates and names the node after the Gateway', () => {
    const b = buildBootstrap({ namespace: 'infra', name: 'gw', xdsHost: 'turnpike.turnpike-system.svc', xdsPort: 18000 });
    expect(validateMessage('envoy.config.bootstrap.v3.Bootstrap', b)).toEqual([]);
    expect(b.node).toEqual({ id: 'infra/gw', cluster: 'infra/gw' });
    expect(b.admin?.address?.socket_address?.address).toBe('127.0.0.1');
    expect(b.static_resources?.clusters?.[0]?.type).toBe('STRICT_DNS');
  });
});
