// What the proxies said, on the Gateway (status-gateways.ts): ConfigRejected and ProxiesInSync; and what
// the serving path withheld from them (ConfigWithheld).
import { describe, expect, it } from '@jest/globals';
import { gateway, gatewayClass, http, run, statusOf } from './builders.js';

describe('proxy feedback', () => {
  it('a configuration the proxies rejected shows on the Gateway as turnpike.dev/ConfigRejected', () => {
    const ps = {
      apiVersion: 'turnpike.dev/internal',
      kind: 'ProxyStatus',
      metadata: { name: 'gw', namespace: 'infra' },
      status: {
        rejected: {
          typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
          version: 'abc',
          message: 'unsupported lb_policy',
          node: 'infra/gw',
        },
      },
    };
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
    const ps = {
      apiVersion: 'turnpike.dev/internal',
      kind: 'ProxyStatus',
      metadata: { name: 'gw', namespace: 'infra' },
      status: {
        withheld: [
          {
            resource: 'RouteConfiguration tcp-80',
            field: 'virtual_hosts[0].routes[0]',
            message: 'route withheld: RE2 cannot compile "(?=b)"',
            source: 'HTTPRoute apps/bad spec.rules[0].matches[0]',
          },
        ],
      },
    };
    const r = run([gatewayClass(), gateway('gw', [http()]), ps]);
    const c = statusOf(r, 'Gateway', 'infra', 'gw').conditions.find(
      (x: { type: string }) => x.type === 'turnpike.dev/ConfigWithheld',
    );
    expect(c).toMatchObject({ status: 'True', reason: 'RefusedByEnvoyRules' });
    expect(c.message).toContain(
      'HTTPRoute apps/bad spec.rules[0].matches[0] (RouteConfiguration tcp-80 virtual_hosts[0].routes[0])',
    );
  });
});
