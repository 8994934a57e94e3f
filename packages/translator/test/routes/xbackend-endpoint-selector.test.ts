// XBackend type EndpointSelector (GEP-4894): the ready, non-terminating Pods with an address that its
// matchLabels select in its namespace are the cluster's endpoints, at spec.port; none answers 503 as a
// Service without endpoints does. A Pod change re-derives only the selectors it could match.
import { describe, expect, it } from '@jest/globals';
import { slimPod, type KubeObject } from '@turnpike/api';
import { gateway, gatewayClass, http, irRoutes, parent, route, run, sr, xbackend } from '../builders.js';
import { snapshotFromObjects, Translator } from '../../src/index.js';

const X = 'gateway.networking.x-k8s.io';
const CLUSTER = 'apps/XBackend/sel';

const selector = (extra: Record<string, unknown> = {}, labels: Record<string, string> = { app: 'web' }) =>
  xbackend('sel', {
    type: 'EndpointSelector',
    port: { number: 8080 },
    endpointSelector: { matchLabels: labels },
    ...extra,
  });

const pod = (
  name: string,
  ip: string,
  o: { labels?: Record<string, string>; ready?: boolean; ns?: string; deleting?: boolean; phase?: string } = {},
): KubeObject =>
  slimPod({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.ns ?? 'apps',
      labels: o.labels ?? { app: 'web', tier: 'front' },
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    status: {
      phase: o.phase ?? 'Running',
      podIPs: [{ ip }],
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  });

const toX = () =>
  route('HTTPRoute', 'r', {
    parentRefs: [{ name: 'gw', namespace: 'infra' }],
    rules: [{ backendRefs: [{ group: X, kind: 'XBackend', name: 'sel' }] }],
  });

const base = () => [gatewayClass(), gateway('gw', [http()])];
const addresses = (r: ReturnType<typeof run>) => (r.xdsIR.endpoints.get(CLUSTER) ?? []).map((e) => e.address);

describe('XBackend EndpointSelector (GEP-4894)', () => {
  it('the Pods matchLabels selects are the endpoints of an EDS cluster, at spec.port, and the route resolves', () => {
    const r = run([...base(), selector(), toX(), pod('a', '10.2.0.2'), pod('b', '10.2.0.1')]);
    const p = parent(r, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(irRoutes(r)[0].backends).toEqual([{ cluster: CLUSTER, weight: 1 }]);
    const cluster = r.xdsIR.gateways.get('infra/gw')!.clusters.find((c) => c.name === CLUSTER);
    expect(cluster).toMatchObject({ protocol: 'http', endpointSelector: { matchLabels: { app: 'web' } } });
    expect(cluster?.external).toBeUndefined();
    expect(r.xdsIR.endpoints.get(CLUSTER)).toEqual([
      { address: '10.2.0.1', port: 8080, ready: true },
      { address: '10.2.0.2', port: 8080, ready: true },
    ]);
    const xb = r.statuses.get('XBackend/apps/sel') as {
      ancestors: { conditions: { type: string; status: string }[] }[];
    };
    expect(xb.ancestors[0]!.conditions[0]).toMatchObject({ type: 'Accepted', status: 'True' });
  });

  it('left out: a Pod not Ready, one being deleted, one not running, one in another namespace, one missing a label', () => {
    const r = run([
      ...base(),
      selector({}, { app: 'web', tier: 'front' }),
      toX(),
      pod('ok', '10.2.0.1'),
      pod('unready', '10.2.0.2', { ready: false }),
      pod('deleting', '10.2.0.3', { deleting: true }),
      pod('done', '10.2.0.4', { phase: 'Succeeded' }),
      pod('elsewhere', '10.2.0.5', { ns: 'other' }),
      pod('partial', '10.2.0.6', { labels: { app: 'web' } }),
    ]);
    expect(addresses(r)).toEqual(['10.2.0.1']);
  });

  it('loopback and link-local Pod addresses are left out, with a warning naming the Pod, as EndpointSlice addresses are', () => {
    const r = run([
      ...base(),
      selector(),
      toX(),
      pod('a', '127.0.0.1'),
      pod('b', '169.254.169.254'),
      pod('c', '10.2.0.1'),
    ]);
    expect(addresses(r)).toEqual(['10.2.0.1']);
    expect(r.diagnostics.map((d) => d.object)).toEqual(['Pod/apps/a', 'Pod/apps/b']);
  });

  it('no Pod matches: the route resolves, its backend has no endpoints (503) and BackendsAvailable says so', () => {
    const r = run([...base(), selector(), toX(), pod('x', '10.2.0.1', { labels: { app: 'api' } })]);
    const p = parent(r, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(irRoutes(r)[0].directResponse).toEqual({ status: 503 });
    expect(sr(p.conditions, 'BackendsAvailable')).toBe('False/EndpointsNotFound');
    expect(p.conditions.find((c: { type: string }) => c.type === 'BackendsAvailable')?.message).toBe(
      'No ready endpoints for XBackend apps/sel:8080',
    );
  });

  it('a Pod whose labels change moves in and out, incrementally as a fresh translation does; other Pods re-derive nothing', () => {
    const t = new Translator();
    const objects = [...base(), selector(), toX(), pod('a', '10.2.0.1')];
    const first = t.translate(snapshotFromObjects(objects));
    expect(addresses(first)).toEqual(['10.2.0.1']);
    const moved = [...base(), selector(), toX(), pod('a', '10.2.0.1', { labels: { app: 'api' } })];
    const out = t.translateWithChanges(snapshotFromObjects(moved));
    expect(out.changes.endpoints).toEqual([CLUSTER]);
    expect(addresses(out.result)).toEqual([]);
    expect(irRoutes(out.result)[0].directResponse).toEqual({ status: 503 });
    expect(JSON.stringify(out.result)).toBe(JSON.stringify(new Translator().translate(snapshotFromObjects(moved))));
    // A Pod no selector could match: nothing changes.
    const unrelated = [...moved, pod('z', '10.2.0.9', { labels: { other: 'x' } })];
    expect(t.translateWithChanges(snapshotFromObjects(unrelated)).changes).toMatchObject({
      endpoints: [],
      gateways: [],
    });
    const back = t.translateWithChanges(
      snapshotFromObjects([...objects, pod('z', '10.2.0.9', { labels: { other: 'x' } })]),
    );
    expect(addresses(back.result)).toEqual(['10.2.0.1']);
    expect(irRoutes(back.result)[0].directResponse).toBeUndefined();
  });

  it("the XBackend's selector or port changing recomputes its endpoints (the cluster keeps its name)", () => {
    const t = new Translator();
    t.translate(
      snapshotFromObjects([
        ...base(),
        selector(),
        toX(),
        pod('a', '10.2.0.1'),
        pod('b', '10.2.0.2', { labels: { app: 'api' } }),
      ]),
    );
    const next = t.translate(
      snapshotFromObjects([
        ...base(),
        selector({ port: { number: 9090 } }, { app: 'api' }),
        toX(),
        pod('a', '10.2.0.1'),
        pod('b', '10.2.0.2', { labels: { app: 'api' } }),
      ]),
    );
    expect(next.xdsIR.endpoints.get(CLUSTER)).toEqual([{ address: '10.2.0.2', port: 9090, ready: true }]);
  });

  it('protocol and TLS as for ExternalHostname: H2C is an HTTP/2 cluster of the Pods', () => {
    const r = run([...base(), selector({ protocol: 'H2C' }), toX(), pod('a', '10.2.0.1')]);
    expect(irRoutes(r)[0].backends).toEqual([{ cluster: `${CLUSTER}/h2`, weight: 1 }]);
    expect(r.xdsIR.endpoints.get(`${CLUSTER}/h2`)?.map((e) => e.address)).toEqual(['10.2.0.1']);
  });
});
