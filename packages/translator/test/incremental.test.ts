// The safety net of the incremental engine: one long-lived Translator fed random upserts and
// deletes of every kind gives, after every step, exactly what a fresh Translator gives for the
// same snapshot; and the changes it reports are exactly the output keys whose value changed.
import { describe, expect, it } from '@jest/globals';
import { CONTROLLER_NAME, type KubeObject } from '@turnpike/api';
import fc from 'fast-check';
import { Translator, type Snapshot, type TranslateResult } from '../src/index.js';
import { apply, GW, history, meta, startingSnapshot } from './histories.js';
import { proxiesSaid, type GatewaySaid } from './proxy-reports.js';

const RUNS = Number(process.env.FC_RUNS ?? 250);
const json = (r: TranslateResult) => JSON.stringify(r);

type Printed = {
  statuses: Record<string, unknown>;
  xdsIR: Record<string, Record<string, unknown>>;
  infraIR: Record<string, Record<string, unknown>>;
  pluginFetches: Record<string, unknown>;
  diagnostics: unknown[];
};

/** `section key: live … fresh …` for every entry of every output that differs. */
function differences(live: Printed, fresh: Printed): string[] {
  const out: string[] = [];
  const compare = (name: string, a: Record<string, unknown>, b: Record<string, unknown>) => {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (JSON.stringify(a[k]) !== JSON.stringify(b[k]))
        out.push(`${name} ${k}: live ${JSON.stringify(a[k])} fresh ${JSON.stringify(b[k])}`);
    }
  };
  compare('status', live.statuses, fresh.statuses);
  compare('xds', live.xdsIR.gateways!, fresh.xdsIR.gateways!);
  compare('endpoints', live.xdsIR.endpoints!, fresh.xdsIR.endpoints!);
  compare('infra', live.infraIR.gateways!, fresh.infraIR.gateways!);
  compare('plugin fetch', live.pluginFetches, fresh.pluginFetches);
  if (JSON.stringify(live.diagnostics) !== JSON.stringify(fresh.diagnostics))
    out.push(`diagnostics: live ${JSON.stringify(live.diagnostics)} fresh ${JSON.stringify(fresh.diagnostics)}`);
  return out;
}

function changedKeys(before: ReadonlyMap<string, unknown>, after: ReadonlyMap<string, unknown>): string[] {
  const out: string[] = [];
  for (const k of new Set([...before.keys(), ...after.keys()]))
    if (JSON.stringify(before.get(k)) !== JSON.stringify(after.get(k))) out.push(k);
  return out.sort();
}

/** A Service with one port 8080 (`port` adds to or overrides it), in namespace apps. */
const service = (port: Record<string, unknown> = {}, labels?: Record<string, string>) =>
  ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta('svc1', 'apps', labels ? { labels } : {}),
    spec: { ports: [{ name: 'http', port: 8080, ...port }] },
  }) as KubeObject;

/** One Gateway of ours (infra/gw1, HTTP on 80) and one HTTPRoute (apps/r1) to `svc` port 8080, as a snapshot. */
function oneRouteSnapshot(svc: KubeObject, ...more: KubeObject[]): Snapshot {
  const objs: KubeObject[] = [
    { apiVersion: GW, kind: 'GatewayClass', metadata: meta('turnpike'), spec: { controllerName: CONTROLLER_NAME } },
    {
      apiVersion: GW,
      kind: 'Gateway',
      metadata: meta('gw1', 'infra'),
      spec: {
        gatewayClassName: 'turnpike',
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
      },
    },
    svc,
    {
      apiVersion: GW,
      kind: 'HTTPRoute',
      metadata: meta('r1', 'apps'),
      spec: {
        parentRefs: [{ name: 'gw1', namespace: 'infra' }],
        rules: [{ backendRefs: [{ name: 'svc1', port: 8080 }] }],
      },
    },
    ...more,
  ];
  let snapshot: Snapshot = new Map();
  for (const o of objs) snapshot = apply(snapshot, { type: 'upsert', object: o });
  return snapshot;
}

describe('incremental translation', () => {
  it('after every step of a random history, a long-lived Translator equals a fresh one, and reports exactly what changed', () => {
    fc.assert(
      fc.property(history, ([base, initial, ops]) => {
        let snapshot: Snapshot = startingSnapshot(base, initial);
        const live = new Translator();
        let previous = live.translate(snapshot);
        expect(json(previous)).toBe(json(new Translator().translate(snapshot)));
        for (const o of ops) {
          snapshot = apply(snapshot, o);
          const { result, changes } = live.translateWithChanges(snapshot);
          const fresh = json(new Translator().translate(snapshot));
          // First the entries that differ (a readable failure), then the whole output, which decides.
          expect(differences(JSON.parse(json(result)), JSON.parse(fresh))).toEqual([]);
          expect(json(result)).toBe(fresh);
          expect(changes.statuses).toEqual(changedKeys(previous.statuses, result.statuses));
          expect(changes.gateways).toEqual(changedKeys(previous.xdsIR.gateways, result.xdsIR.gateways));
          expect(changes.endpoints).toEqual(changedKeys(previous.xdsIR.endpoints, result.xdsIR.endpoints));
          expect(changes.infra).toEqual(changedKeys(previous.infraIR.gateways, result.infraIR.gateways));
          expect(changes.pluginFetches).toEqual(changedKeys(previous.pluginFetches, result.pluginFetches));
          previous = result;
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('an EndpointSlice change that keeps a ready endpoint touches the endpoints of one cluster and nothing else', () => {
    const slice = (ips: string[]) =>
      ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: meta('svc1-a', 'apps', { labels: { 'kubernetes.io/service-name': 'svc1' } }),
        ports: [{ name: 'http', port: 8080 }],
        endpoints: ips.map((ip) => ({ addresses: [ip] })),
      }) as KubeObject;
    const snapshot = oneRouteSnapshot(service(), slice(['10.1.0.1']));
    const t = new Translator();
    const first = t.translate(snapshot);
    const { result, changes } = t.translateWithChanges(
      apply(snapshot, { type: 'upsert', object: slice(['10.1.0.1', '10.1.0.2']) }),
    );
    expect(changes).toEqual({
      statuses: [],
      gateways: [],
      endpoints: ['apps/svc1/8080'],
      infra: [],
      pluginFetches: [],
    });
    expect(result.xdsIR.gateways.get('infra/gw1')).toBe(first.xdsIR.gateways.get('infra/gw1'));
    expect(result.statuses).toBe(first.statuses);
    expect(result.xdsIR.endpoints.get('apps/svc1/8080')!.map((e) => e.address)).toEqual(['10.1.0.1', '10.1.0.2']);
  });

  it('a Service is read by its facts: a label touches nothing, an appProtocol only the cluster, a port the route', () => {
    let snapshot = oneRouteSnapshot(service());
    const t = new Translator();
    const first = t.translate(snapshot);
    const gatewayOf = (r: TranslateResult) => r.xdsIR.gateways.get('infra/gw1')!;

    snapshot = apply(snapshot, { type: 'upsert', object: service({}, { tier: 'web' }) });
    const relabelled = t.translateWithChanges(snapshot);
    expect(relabelled.changes).toEqual({ statuses: [], gateways: [], endpoints: [], infra: [], pluginFetches: [] });
    expect(t.piecesComputed().get('route:')).toBeUndefined();
    expect(gatewayOf(relabelled.result)).toBe(gatewayOf(first));

    snapshot = apply(snapshot, { type: 'upsert', object: service({ appProtocol: 'kubernetes.io/h2c' }) });
    const h2c = t.translateWithChanges(snapshot);
    expect(h2c.changes.gateways).toEqual(['infra/gw1']);
    expect(h2c.changes.statuses).toEqual([]);
    expect(t.piecesComputed().get('route:')).toBeUndefined();
    expect(t.piecesComputed().get('assembly:')).toBe(1);
    expect(gatewayOf(h2c.result).clusters).toEqual([
      { name: 'apps/svc1/8080', service: { namespace: 'apps', name: 'svc1', port: 8080 }, protocol: 'h2' },
    ]);

    snapshot = apply(snapshot, { type: 'upsert', object: service({ port: 9090 }) });
    const moved = t.translateWithChanges(snapshot);
    expect(t.piecesComputed().get('route:')).toBe(1);
    expect(moved.changes.statuses).toEqual(['HTTPRoute/apps/r1']);
    expect(JSON.stringify(moved.result.statuses.get('HTTPRoute/apps/r1'))).toContain('has no TCP port 8080');
  });

  it("what the proxies said makes their Gateway's report again: no route translated, no IR assembled", () => {
    const snapshot = oneRouteSnapshot(service());
    const t = new Translator();
    const first = t.translate(snapshot);
    const proxyStatus = (said: GatewaySaid) => proxiesSaid('infra/gw1', said);
    const connected = t.translateWithChanges(
      apply(snapshot, { type: 'upsert', object: proxyStatus({ sync: { connected: 2, behind: [] } }) }),
    );
    expect(connected.changes.statuses).toEqual(['Gateway/infra/gw1']);
    expect(connected.changes.gateways).toEqual([]);
    expect(connected.result.xdsIR.gateways.get('infra/gw1')).toBe(first.xdsIR.gateways.get('infra/gw1'));
    expect(t.piecesComputed().get('route:')).toBeUndefined();
    expect(t.piecesComputed().get('assembly:')).toBeUndefined();
    expect(t.piecesComputed().get('report:')).toBe(1);
    expect(JSON.stringify(connected.result.statuses.get('Gateway/infra/gw1'))).toContain('ProxiesInSync');
    // What the serving path withheld of the route reaches the route's status, still without assembling.
    const withheld = {
      sync: { connected: 2, behind: [] },
      withheld: [{ object: 'HTTPRoute/apps/r1', resource: 'RouteConfiguration', field: 'x', message: 'refused' }],
    } satisfies GatewaySaid;
    const told = t.translateWithChanges(apply(snapshot, { type: 'upsert', object: proxyStatus(withheld) }));
    expect(t.piecesComputed().get('assembly:')).toBeUndefined();
    expect(told.changes.statuses).toEqual(expect.arrayContaining(['Gateway/infra/gw1', 'HTTPRoute/apps/r1']));
    expect(JSON.stringify(told.result.statuses.get('HTTPRoute/apps/r1'))).toContain('refused');
    const fresh = new Translator().translate(apply(snapshot, { type: 'upsert', object: proxyStatus(withheld) }));
    expect(told.result.statuses).toEqual(fresh.statuses);
  });
});
