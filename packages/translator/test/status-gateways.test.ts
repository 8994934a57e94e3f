// What the proxies said, on the Gateway (status-gateways.ts): ConfigRejected and ProxiesInSync; and what
// the serving path withheld from them (ConfigWithheld).
import { describe, expect, it } from '@jest/globals';
import { snapshotFromObjects, Translator } from '../src/index.js';
import { gateway, gatewayClass, http, httpRoute, run, statusOf } from './builders.js';

import { proxiesSaid, type GatewaySaid } from './proxy-reports.js';

/** What the replica serving Gateway infra/gw's proxies reports of them. */
const proxyStatus = (said: GatewaySaid) => proxiesSaid('infra/gw', said);

describe('proxy feedback', () => {
  it('a configuration the proxies rejected shows on the Gateway as turnpike.dev/ConfigRejected', () => {
    const ps = proxyStatus({
      rejected: {
        typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
        version: 'abc',
        message: 'unsupported lb_policy',
        node: 'infra/gw',
      },
    });
    const r = run([gatewayClass(), gateway('gw', [http()]), ps]);
    const c = statusOf(r, 'Gateway', 'infra', 'gw').conditions.find(
      (x: { type: string }) => x.type === 'turnpike.dev/ConfigRejected',
    );
    expect(c).toMatchObject({ status: 'True', reason: 'Rejected' });
    expect(c.message).toContain('rejected Cluster version abc: unsupported lb_policy');
    const clean = run([gatewayClass(), gateway('gw', [http()])]);
    expect(statusOf(clean, 'Gateway', 'infra', 'gw').conditions.map((x: { type: string }) => x.type)).not.toContain(
      'turnpike.dev/ConfigRejected',
    );
  });

  it('configuration the serving path withheld shows on the Gateway as turnpike.dev/ConfigWithheld, naming the route', () => {
    const ps = proxyStatus({
      withheld: [
        {
          resource: 'RouteConfiguration tcp-80',
          field: 'virtual_hosts[0].routes[0]',
          message: 'route withheld: RE2 cannot compile "(?=b)"',
          source: 'HTTPRoute apps/bad spec.rules[0].matches[0]',
          object: 'HTTPRoute/apps/bad',
        },
      ],
    });
    const route = httpRoute('bad', { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{}] });
    const r = run([gatewayClass(), gateway('gw', [http()]), route, ps]);
    const c = statusOf(r, 'Gateway', 'infra', 'gw').conditions.find(
      (x: { type: string }) => x.type === 'turnpike.dev/ConfigWithheld',
    );
    // The route says so too, on its parent entry for that Gateway.
    const onRoute = statusOf(r, 'HTTPRoute', 'apps', 'bad').parents[0].conditions.find(
      (x: { type: string }) => x.type === 'turnpike.dev/ConfigWithheld',
    );
    expect(onRoute).toMatchObject({ status: 'True', reason: 'RefusedByEnvoyRules' });
    expect(onRoute.message).toContain("withheld from Gateway infra/gw's proxies");
    expect(onRoute.message).toContain('RE2 cannot compile');
    expect(c).toMatchObject({ status: 'True', reason: 'RefusedByEnvoyRules' });
    expect(c.message).toContain(
      'HTTPRoute apps/bad spec.rules[0].matches[0] (RouteConfiguration tcp-80 virtual_hosts[0].routes[0])',
    );
  });

  it('the withheld condition comes and goes on the route when the report does, translating incrementally', () => {
    const ps = proxyStatus({
      withheld: [
        {
          resource: 'RouteConfiguration tcp-80',
          field: 'virtual_hosts[0].routes[0]',
          message: 'route withheld: x',
          object: 'HTTPRoute/apps/bad',
        },
      ],
    });
    const base = [
      gatewayClass(),
      gateway('gw', [http()]),
      httpRoute('bad', { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{}] }),
    ];
    const translator = new Translator();
    const types = (r: ReturnType<Translator['translate']>) =>
      statusOf(r, 'HTTPRoute', 'apps', 'bad').parents[0].conditions.map((c: { type: string }) => c.type);
    expect(types(translator.translate(snapshotFromObjects(base)))).not.toContain('turnpike.dev/ConfigWithheld');
    expect(types(translator.translate(snapshotFromObjects([...base, ps])))).toContain('turnpike.dev/ConfigWithheld');
    expect(types(translator.translate(snapshotFromObjects(base)))).not.toContain('turnpike.dev/ConfigWithheld');
  });
});
