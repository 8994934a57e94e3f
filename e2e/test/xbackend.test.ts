// XBackend (GEP-4894) against a real kube-apiserver with the v1.7.0 experimental CRDs and the
// controller under deploy/'s RBAC: the CRD admits an ExternalHostname XBackend and a route to it,
// refuses a port on the ref, and the controller writes the route's status and the XBackend's ancestors;
// an EndpointSelector XBackend's route has endpoints once a Pod with its labels runs Ready (the fake
// kubelet makes it so), and none once that Pod is deleted; session persistence the CRD admits is served,
// or refused by field where Envoy cannot honour it.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { waitFor } from '../harness/cluster.js';
import { FakeKubelet } from '../harness/fake-kubelet.js';
import { clusterWithController } from '../harness/setup.js';
import { cond, gateway, gatewayClass, httpRoute, ns, ourParents } from '../harness/fixtures.js';
import { proxyCredentials, runXdsCheck } from '../harness/xds-credentials.js';

const X = 'gateway.networking.x-k8s.io';
const CONTROLLER = 'turnpike.dev/gateway-controller';
const STATEFUL_SESSION = 'envoy.filters.http.stateful_session';

const xbackend: KubeObject = {
  apiVersion: `${X}/v1alpha1`,
  kind: 'XBackend',
  metadata: { name: 'ext', namespace: 'apps' },
  spec: {
    type: 'ExternalHostname',
    port: { number: 443 },
    externalHostname: { hostname: 'api.example.com' },
    tls: { mode: 'None' },
  },
};

type Ancestor = { ancestorRef: Record<string, unknown>; controllerName: string; conditions: unknown };

describe('XBackend in a real cluster', () => {
  const env = clusterWithController(async (c) => {
    for (const n of ['infra', 'apps']) await c.apply(ns(n));
    await c.apply(gatewayClass('tp'));
    await c.apply(gateway('infra', 'gw', 'tp'));
  });

  it('the CRD admits it and a route to it; the route resolves and the XBackend lists the Gateway', async () => {
    const { cluster } = env;
    await cluster.apply(xbackend);
    const ref = { group: X, kind: 'XBackend', name: 'ext' };
    // The CRD's rule on BackendObjectReference: "Must not have port for Backend reference".
    const withPort = httpRoute('apps', 'with-port', [{ name: 'gw', namespace: 'infra' }], [{ ...ref, port: 443 }]);
    const refused = await cluster.dryRunCreate(withPort);
    expect(refused.accepted).toBe(false);
    expect(refused.message).toContain('Must not have port for Backend reference');
    const route = httpRoute('apps', 'to-ext', [{ name: 'gw', namespace: 'infra' }], [ref]);
    await cluster.apply(route);
    const resolved = await waitFor('route ResolvedRefs True', async () => {
      const c = cond(ourParents(await cluster.get(route))[0]?.conditions, 'ResolvedRefs');
      return c?.status === 'True' ? c : undefined;
    });
    expect(resolved.reason).toBe('ResolvedRefs');
    const ours = await waitFor('XBackend ancestors', async () => {
      const o = await cluster.get(xbackend);
      const list = ((o?.status as { ancestors?: Ancestor[] } | undefined)?.ancestors ?? []).filter(
        (a) => a.controllerName === CONTROLLER,
      );
      return list.length ? list : undefined;
    });
    expect(ours.map((a) => a.ancestorRef)).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' },
    ]);
    expect(cond(ours[0]!.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    // The route gone, the ancestor entry goes with it.
    await cluster.delete(route);
    await waitFor('ancestors removed', async () => {
      const o = await cluster.get(xbackend);
      const list = ((o?.status as { ancestors?: Ancestor[] } | undefined)?.ancestors ?? []).filter(
        (a) => a.controllerName === CONTROLLER,
      );
      return list.length === 0 ? true : undefined;
    });
  }, 180_000);

  it('EndpointSelector: a Pod created with its labels and made Ready gives the route endpoints; deleted, none', async () => {
    const { cluster } = env;
    const kubelet = new FakeKubelet(cluster.admin);
    await kubelet.start();
    try {
      const selector: KubeObject = {
        apiVersion: `${X}/v1alpha1`,
        kind: 'XBackend',
        metadata: { name: 'pods', namespace: 'apps' },
        spec: { type: 'EndpointSelector', port: { number: 8080 }, endpointSelector: { matchLabels: { app: 'web' } } },
      };
      await cluster.apply(selector);
      const route = httpRoute(
        'apps',
        'to-pods',
        [{ name: 'gw', namespace: 'infra' }],
        [{ group: X, kind: 'XBackend', name: 'pods' }],
      );
      await cluster.apply(route);
      const available = (want: string) =>
        waitFor(`route BackendsAvailable ${want}`, async () => {
          const conditions = ourParents(await cluster.get(route))[0]?.conditions;
          const c = cond(conditions, 'BackendsAvailable');
          return c?.status === want && cond(conditions, 'ResolvedRefs')?.status === 'True' ? c : undefined;
        });
      // No Pod yet: resolved, no endpoints (as a Service without endpoints).
      expect((await available('False')).message).toBe('No ready endpoints for XBackend apps/pods:8080');
      const pod: KubeObject = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-1', namespace: 'apps', labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'example.com/web:1' }] },
      };
      await cluster.apply(pod);
      await available('True');
      // Deleted (terminating, then gone): no endpoints again.
      await cluster.delete(pod);
      await available('False');
    } finally {
      kubelet.stop();
    }
  }, 180_000);

  it('sessionPersistence: the CRD admits a Permanent cookie and a session cookie with an absoluteTimeout; the controller serves the first and refuses the second by field', async () => {
    const { cluster } = env;
    const sticky = (name: string, sessionPersistence: Record<string, unknown>): KubeObject => ({
      apiVersion: `${X}/v1alpha1`,
      kind: 'XBackend',
      metadata: { name, namespace: 'apps' },
      spec: {
        type: 'EndpointSelector',
        port: { number: 8080 },
        endpointSelector: { matchLabels: { app: name } },
        sessionPersistence,
      },
    });
    const served = sticky('sticky', {
      type: 'Cookie',
      absoluteTimeout: '1h',
      cookie: { name: 'sid', lifetimeType: 'Permanent' },
    });
    const refused = sticky('session-bounded', { type: 'Cookie', absoluteTimeout: '1h', cookie: { name: 'sid' } });
    // The CRD's rule: "AbsoluteTimeout must be specified when cookie lifetimeType is Permanent".
    const unbounded = await cluster.dryRunCreate(
      sticky('unbounded', { type: 'Cookie', cookie: { name: 'sid', lifetimeType: 'Permanent' } }),
    );
    expect(unbounded.message).toContain('AbsoluteTimeout must be specified when cookie lifetimeType is Permanent');
    for (const o of [served, refused]) await cluster.apply(o);
    const resolvedRefs = async (backend: string) => {
      const route = httpRoute(
        'apps',
        `to-${backend}`,
        [{ name: 'gw', namespace: 'infra' }],
        [{ group: X, kind: 'XBackend', name: backend }],
      );
      await cluster.apply(route);
      return waitFor(`route to ${backend} ResolvedRefs`, async () => {
        const c = cond(ourParents(await cluster.get(route))[0]?.conditions, 'ResolvedRefs');
        // Its XBackend may reach the controller after it (another watch): wait for the verdict on it.
        return c && c.reason !== 'BackendNotFound' ? c : undefined;
      });
    };
    expect(await resolvedRefs('sticky')).toMatchObject({ status: 'True' });
    const no = await resolvedRefs('session-bounded');
    expect(no).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(no.message).toContain('spec.sessionPersistence.absoluteTimeout');

    // With a Ready Pod behind it (without one the rule answers 503 and keeps no session), what the
    // Gateway's proxies are served passes go-control-plane's ValidateAll (the stateful session filter and
    // its cookie state included); the served route carries its session, the refused one none.
    const kubelet = new FakeKubelet(cluster.admin);
    await kubelet.start();
    try {
      await cluster.apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'sticky-1', namespace: 'apps', labels: { app: 'sticky' } },
        spec: { containers: [{ name: 'web', image: 'example.com/web:1' }] },
      });
      const creds = await proxyCredentials(cluster, 'infra', 'gw');
      const checked = await waitFor('the sticky route served', async () => {
        const report = runXdsCheck(env.controller.xdsPort, 'infra/gw', creds);
        return report.routeFilters['httproute/apps/to-sticky/rule/0/match/0']?.includes(STATEFUL_SESSION)
          ? report
          : undefined;
      });
      expect(checked.errors).toEqual([]);
      expect(Object.values(checked.httpFilters).flat()).toContain(STATEFUL_SESSION);
      expect(checked.routeFilters['httproute/apps/to-session-bounded/rule/0/match/0'] ?? []).not.toContain(
        STATEFUL_SESSION,
      );
    } finally {
      kubelet.stop();
    }
  }, 180_000);
});
