// Statuses judged by every replica's proxies (proxies/gateway-proxies.ts): a Gateway's proxies are the
// union of the live replicas' reports, a proxy named by two counts once (the newer connection), and a
// report that changes one Gateway's entry re-reports that Gateway only.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject, ReportedGateway } from '@turnpike/api';
import { snapshotFromObjects, translate, Translator } from '../src/index.js';
import { gateway, gatewayClass, http, run, statusOf } from './builders.js';
import { CONNECTED_AT, replicaReport } from './proxy-reports.js';
import { gatewayProxies } from '../src/proxies/gateway-proxies.js';
import { Inputs } from '../src/incremental/inputs.js';

const LATER = '2026-12-05T10:00:07.000Z';

const condition = (objects: KubeObject[], gw: string, type: string) =>
  (
    statusOf(run(objects), 'Gateway', 'infra', gw).conditions as { type: string; status: string; message: string }[]
  ).find((c) => c.type === type);

const entry = (
  gw: string,
  proxies: ReportedGateway['proxies'],
  extra: Partial<ReportedGateway> = {},
): ReportedGateway => ({
  namespace: 'infra',
  name: gw,
  connected: proxies.length,
  proxies,
  ...extra,
});

const base = [gatewayClass(), gateway('gw', [http()]), gateway('other', [http()])];

describe("a Gateway's proxies, over every replica's report", () => {
  it("ProxiesInSync sums both replicas' proxies and names a follower's proxy that is behind", () => {
    const c = condition(
      [
        ...base,
        replicaReport('leader', [entry('gw', [{ id: 'gw-a', connectedAt: CONNECTED_AT }])]),
        replicaReport('follower', [
          entry('gw', [
            { id: 'gw-b', connectedAt: CONNECTED_AT, behind: true },
            { id: 'gw-c', connectedAt: CONNECTED_AT },
          ]),
        ]),
      ],
      'gw',
      'turnpike.dev/ProxiesInSync',
    );
    expect(c).toMatchObject({ status: 'False', reason: 'Behind' });
    expect(c!.message).toBe('1 of 3 connected proxies have not acknowledged the current configuration: gw-b');
  });

  it("a follower proxy's NACK is the Gateway's ConfigRejected, naming the proxy", () => {
    const rejected = { typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster', version: 'v7', message: 'no' };
    const c = condition(
      [
        ...base,
        replicaReport('leader', [entry('gw', [{ id: 'gw-a', connectedAt: CONNECTED_AT }])]),
        replicaReport('follower', [entry('gw', [{ id: 'gw-b', connectedAt: CONNECTED_AT, behind: true, rejected }])]),
      ],
      'gw',
      'turnpike.dev/ConfigRejected',
    );
    expect(c?.message).toBe('proxy gw-b rejected Cluster version v7: no; the previous configuration stays in force');
  });

  it('a proxy named by two reports counts once, as the one with its newer connection says', () => {
    const old = replicaReport('dead', [entry('gw', [{ id: 'gw-a', connectedAt: CONNECTED_AT, behind: true }])]);
    const moved = replicaReport('alive', [entry('gw', [{ id: 'gw-a', connectedAt: LATER }])]);
    const c = condition([...base, old, moved], 'gw', 'turnpike.dev/ProxiesInSync');
    expect(c).toMatchObject({ status: 'True', message: 'All 1 connected proxies run the current configuration' });
    // The other way round: the newer connection is behind.
    const back = replicaReport('alive', [entry('gw', [{ id: 'gw-a', connectedAt: LATER, behind: true }])]);
    const stale = replicaReport('dead', [entry('gw', [{ id: 'gw-a', connectedAt: CONNECTED_AT }])]);
    expect(condition([...base, stale, back], 'gw', 'turnpike.dev/ProxiesInSync')).toMatchObject({ status: 'False' });
  });

  it('a replica whose proxies just connected holds nothing back until one of them is late', () => {
    const ran = ['infra/p@' + 'a'.repeat(64)];
    const acked = replicaReport('leader', [entry('gw', [{ id: 'gw-a', connectedAt: CONNECTED_AT }], { plugins: ran })]);
    const fresh = (behind: boolean) =>
      replicaReport('other', [
        entry('gw', [{ id: 'gw-b', connectedAt: LATER, ...(behind ? { behind: true as const } : {}) }]),
      ]);
    // The plugins every proxy acknowledged, as the Gateway's report reads them (Installed's input).
    const pluginsOf = (objects: KubeObject[]) =>
      gatewayProxies(new Inputs(snapshotFromObjects([...base, ...objects])), base[1] as never).sync?.plugins;
    expect(pluginsOf([acked, fresh(false)])).toEqual(ran);
    expect(pluginsOf([acked, fresh(true)])).toBeUndefined();
    // Nothing acknowledged anywhere: nothing is known to run.
    expect(pluginsOf([fresh(false)])).toBeUndefined();
  });

  it("a report's proxies beyond those listed still count as connected", () => {
    const many = replicaReport('leader', [
      { ...entry('gw', [{ id: 'gw-a', connectedAt: CONNECTED_AT, behind: true }]), connected: 700 },
    ]);
    expect(condition([...base, many], 'gw', 'turnpike.dev/ProxiesInSync')!.message).toBe(
      '1 of 700 connected proxies have not acknowledged the current configuration: gw-a',
    );
  });

  it('without a live report naming the Gateway, ProxiesInSync is absent', () => {
    expect(condition([...base], 'gw', 'turnpike.dev/ProxiesInSync')).toBeUndefined();
    const elsewhere = replicaReport('leader', [entry('other', [{ id: 'o-1', connectedAt: CONNECTED_AT }])]);
    expect(condition([...base, elsewhere], 'gw', 'turnpike.dev/ProxiesInSync')).toBeUndefined();
  });

  it("a report whose one Gateway's entry changed re-reports that Gateway only, as a fresh translation would", () => {
    const t = new Translator();
    const report = (behind: boolean) =>
      replicaReport('leader', [
        entry('gw', [{ id: 'gw-a', connectedAt: CONNECTED_AT, ...(behind ? { behind: true as const } : {}) }]),
        entry('other', [{ id: 'o-1', connectedAt: CONNECTED_AT }]),
      ]);
    t.translate(snapshotFromObjects([...base, report(false)]));
    const next = t.translateWithChanges(snapshotFromObjects([...base, report(true)]));
    expect(next.changes.statuses).toEqual(['Gateway/infra/gw']);
    expect(t.piecesComputed().get('report:')).toBe(1);
    expect(t.piecesComputed().get('assembly:')).toBeUndefined();
    expect(Object.fromEntries(next.result.statuses)).toEqual(
      Object.fromEntries(translate(snapshotFromObjects([...base, report(true)])).statuses),
    );
    // The replica goes (its report removed or expired): both Gateways lose the proxies it reported.
    const gone = t.translateWithChanges(snapshotFromObjects([...base]));
    expect([...gone.changes.statuses].sort()).toEqual(['Gateway/infra/gw', 'Gateway/infra/other']);
  });

  it('what one replica withheld reaches the Gateway once, whichever replicas say it', () => {
    const withheld = [{ resource: 'RouteConfiguration tcp-80', field: 'x', message: 'refused' }];
    const said = (replica: string) =>
      replicaReport(replica, [entry('gw', [{ id: `${replica}-p`, connectedAt: CONNECTED_AT }], { withheld })]);
    const c = condition([...base, said('a'), said('b')], 'gw', 'turnpike.dev/ConfigWithheld');
    expect(c!.message).toBe('withheld from the proxies, the rest is served: RouteConfiguration tcp-80 x: refused');
  });
});
