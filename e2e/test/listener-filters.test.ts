// Pre-routing listener filters (GEP-5224) against a real kube-apiserver with the v1.7.0 experimental
// CRDs and the controller under deploy/'s RBAC: the Gateway CRD admits an ExternalAuth filter on an
// HTTP listener and refuses one on a TCP listener; a cross-namespace auth Service is refused until a
// ReferenceGrant allows it, and then the proxies are served ext_authz ahead of the router, with the
// auth service's cluster, and every resource passes go-control-plane's ValidateAll.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { TYPE } from '@turnpike/xds';
import { adsClient, reader, resourceText, type Stream } from '../../packages/xds/test/ads-client.js';
import { waitFor } from '../harness/cluster.js';
import { clusterWithController } from '../harness/setup.js';
import { cond, gatewayClass, httpRoute, ns, ourParents, service } from '../harness/fixtures.js';
import { proxyCredentials, runXdsCheck, XDS_SERVER_NAME } from '../harness/xds-credentials.js';

const GW = 'gateway.networking.k8s.io/v1';
const EXT_AUTHZ = 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
const ROUTER = 'envoy.extensions.filters.http.router.v3.Router';

const extAuth = { protocol: 'HTTP', backendRef: { name: 'auth', namespace: 'auth', port: 8080 }, http: {} };

function guardedGateway(protocol = 'HTTP'): KubeObject {
  return {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'tp',
      listeners: [
        {
          name: 'guarded',
          port: 80,
          protocol,
          allowedRoutes: { namespaces: { from: 'All' } },
          filters: { requests: [{ type: 'ExternalAuth', externalAuth: extAuth }] },
        },
      ],
    },
  };
}

const grantToAuth: KubeObject = {
  apiVersion: GW,
  kind: 'ReferenceGrant',
  metadata: { name: 'gateways-to-auth', namespace: 'auth' },
  spec: {
    from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }],
    to: [{ group: '', kind: 'Service' }],
  },
};

type ListenerStatus = { name: string; conditions: unknown };
const listenerStatus = (gw: KubeObject | undefined, name: string): ListenerStatus | undefined =>
  ((gw?.status as { listeners?: ListenerStatus[] } | undefined)?.listeners ?? []).find((l) => l.name === name);

describe('listener filters in a real cluster', () => {
  const env = clusterWithController(async (c) => {
    for (const n of ['infra', 'auth', 'apps']) await c.apply(ns(n));
    await c.apply(gatewayClass('tp'));
    await c.apply(service('auth', 'auth'));
    await c.apply(service('apps', 'web'));
  });

  it('the CRD admits ExternalAuth on an HTTP listener and refuses it on a TCP listener', async () => {
    const { cluster } = env;
    expect((await cluster.dryRunCreate(guardedGateway())).accepted).toBe(true);
    const tcp = await cluster.dryRunCreate(guardedGateway('TCP'));
    expect(tcp.accepted).toBe(false);
    expect(tcp.message).toMatch(/[Ff]ilters/);
  });

  it('a cross-namespace auth Service waits for a ReferenceGrant; then ext_authz runs before the router', async () => {
    const { cluster, controller } = env;
    const gw = guardedGateway();
    await cluster.apply(gw);
    await cluster.apply(httpRoute('apps', 'web', [{ name: 'gw', namespace: 'infra' }], [{ name: 'web', port: 8080 }]));
    // GEP-5224: "A cross-namespace `ExternalAuth.backendRef` without a matching ReferenceGrant MUST have
    // `ResolvedRefs=False`, `Reason=RefNotPermitted`".
    const refused = await waitFor('listener RefNotPermitted', async () => {
      const l = listenerStatus(await cluster.get(gw), 'guarded');
      return cond(l?.conditions, 'ResolvedRefs')?.reason === 'RefNotPermitted' ? l : undefined;
    });
    expect(cond(refused.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False' });
    expect(cond(refused.conditions, 'ResolvedRefs')?.message).toMatch(/auth/);
    expect(cond(refused.conditions, 'Programmed')?.status).toBe('False');

    await cluster.apply(grantToAuth);
    const allowed = await waitFor('listener resolved', async () => {
      const l = listenerStatus(await cluster.get(gw), 'guarded');
      return cond(l?.conditions, 'ResolvedRefs')?.status === 'True' &&
        cond(l?.conditions, 'Programmed')?.status === 'True'
        ? l
        : undefined;
    });
    expect(cond(allowed.conditions, 'Accepted')?.status).toBe('True');
    await waitFor('route attached', async () =>
      cond(ourParents(await cluster.get(httpRoute('apps', 'web', [], [])))[0]?.conditions, 'Accepted')?.status ===
      'True'
        ? true
        : undefined,
    );

    // What a proxy of this Gateway is served, over mTLS with the client certificate the controller issued.
    const creds = await proxyCredentials(cluster, 'infra', 'gw');
    const tls = { ca: creds.ca, cert: creds.cert, key: creds.key, serverName: XDS_SERVER_NAME };
    const node = { id: 'e2e-filters', cluster: 'infra/gw' };
    const stream: Stream = adsClient(controller.xdsPort, tls).StreamAggregatedResources();
    const next = reader(stream);
    try {
      stream.write({ node, type_url: TYPE.listener });
      const listeners = resourceText(await next(10_000));
      // The pre-routing filter is in the connection manager, ahead of the router.
      expect(listeners).toContain(EXT_AUTHZ);
      expect(listeners.indexOf(EXT_AUTHZ)).toBeLessThan(listeners.indexOf(ROUTER));
      stream.write({ node, type_url: TYPE.cluster });
      const clusters = resourceText(await next(10_000));
      expect(clusters).toContain('auth/auth');
    } finally {
      stream.end();
    }
    expect(runXdsCheck(controller.xdsPort, 'infra/gw', creds).errors).toEqual([]);
  }, 180_000);
});
