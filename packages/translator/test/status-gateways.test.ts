// What the proxies said, on the Gateway (status-gateways.ts): ConfigRejected and ProxiesInSync.
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
});
