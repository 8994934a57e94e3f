// The console's data on a running controller's log: LiveLog folds its oldest events into a base
// snapshot past its cap, and every moment it still holds looks exactly as on the whole log.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import {
  LOG_FORMAT,
  LOG_VERSION,
  parseEventLog,
  remove,
  upsert,
  type ParsedLog,
  type WatchEvent,
} from '@turnpike/engine';
import { ConsoleData } from '../src/console/console-data.js';
import { LiveLog } from '../src/console/live-log.js';
import { DELETED_AT, recordedLog } from './grant-log.js';

const AT = '2026-12-04T00:00:00.000Z';

/** Upserts numbered from 1, and the route `apps/web` on Gateway `infra/gw` sending to Service `apps/web`. */
function routeLog() {
  let seq = 0;
  const up = (object: KubeObject): WatchEvent => ({ seq: ++seq, at: AT, ...upsert('kube', object) });
  const gone = (kind: string, namespace: string, name: string): WatchEvent => ({
    seq: ++seq,
    at: AT,
    ...remove('kube', kind, namespace, name),
  });
  const svc = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'apps' },
    spec: { ports: [{ port: 8080 }] },
  } as KubeObject;
  const events: WatchEvent[] = [
    up({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'tp' },
      spec: { controllerName: 'turnpike.dev/gateway-controller' },
    } as KubeObject),
    up({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra' },
      spec: {
        gatewayClassName: 'tp',
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
      },
    } as KubeObject),
    up(svc),
    up({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: 'apps' },
      spec: {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }],
      },
    } as KubeObject),
  ];
  const parsed = (outputs: number[] = []): ParsedLog => ({
    header: { format: LOG_FORMAT, version: LOG_VERSION, createdAt: AT, quietMs: 100, maxDelayMs: 500 },
    events,
    outputs: outputs.map((s) => ({ type: 'output' as const, seq: s, hash: 'x' })),
  });
  return { events, up, gone, svc, parsed };
}

describe('console data', () => {
  const full = parseEventLog(recordedLog());

  it('a capped live log keeps later moments exact, and extends as events arrive', () => {
    const live = new LiveLog({ createdAt: full.header.createdAt, quietMs: 10, maxDelayMs: 100 }, 200);
    const capped = new ConsoleData(
      () => live.log(),
      () => live.base,
    );
    const whole = new ConsoleData(() => full);
    for (const e of full.events.slice(0, 250)) live.event(e);
    // Asked while the log grows: the checkpoints extend.
    expect(capped.objects(250)).toEqual(whole.objects(250));
    for (const e of full.events.slice(250)) live.event(e);
    expect(live.log().events.length).toBeLessThanOrEqual(200);
    expect(live.log().events[0]!.seq).toBeGreaterThan(DELETED_AT);
    for (const seq of [500, 550, 600]) expect(capped.objects(seq)).toEqual(whole.objects(seq));
  });

  it('history finds each change; a diff of the same moment is empty', async () => {
    const data = new ConsoleData(() => full);
    const h = await data.history('HTTPRoute/apps/web');
    // 7: the route, refused (no grant yet); 8: the grant; then the grant's deletion. Sampling merged 7 and 8.
    expect(h.changes.map((c) => c.seq)).toEqual([7, 8, DELETED_AT]);
    expect(h.changes[0]!.after.join(' ')).toContain('ResolvedRefs=False/RefNotPermitted');
    expect(data.diff(400, 400).same).toBe(true);
    expect(data.eventAt(0)).toBeUndefined();
    expect(data.eventAt(DELETED_AT)).toMatchObject({
      seq: DELETED_AT,
      type: 'delete',
      kind: 'ReferenceGrant',
      object: 'backends/let-apps',
    });
  });

  it("history follows the controller's recorded translations when the log has them: a state no translation saw is not a change", async () => {
    const last = full.events.at(-1)!.seq;
    const log: ParsedLog = {
      ...full,
      outputs: [8, 200, DELETED_AT, last].map((seq) => ({ type: 'output' as const, seq, hash: 'x' })),
    };
    const h = await new ConsoleData(() => log).history('HTTPRoute/apps/web');
    // Events 7 (route, refused) and 8 (grant) went into one translation: the route was never refused.
    expect(h.changes.map((c) => c.seq)).toEqual([8, DELETED_AT]);
    expect(h.probes).toBe(5);
  });

  it('history lists a change that is undone at the next event, wherever it falls (no sampling)', async () => {
    const { events, up, gone, svc, parsed } = routeLog();
    const filler = (i: number) =>
      up({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `filler-${i}` } } as KubeObject);
    for (let i = 0; i < 37; i++) events.push(filler(i));
    const deleted = gone('Service', 'apps', 'web');
    events.push(deleted);
    const back = up(svc);
    events.push(back);
    for (let i = 37; i < 60; i++) events.push(filler(i));
    const h = await new ConsoleData(() => parsed()).history('HTTPRoute/apps/web');
    expect(h.changes.map((c) => c.seq).slice(-2)).toEqual([deleted.seq, back.seq]);
    expect(h.changes.at(-2)!.after.join(' ')).toContain('ResolvedRefs=False/BackendNotFound');
    expect(h.changes.at(-1)!.after.join(' ')).toContain('ResolvedRefs=True/ResolvedRefs');
  });

  it('a change in a translation of several events is named by the event that caused it, not the last one', async () => {
    const { events, up, gone, parsed } = routeLog();
    const attached = events.at(-1)!.seq;
    // One translation takes the delete that breaks the route and, after it, a write it does not depend on.
    events.push(gone('Service', 'apps', 'web'));
    const unrelated = up({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'infra-gw-proxy', namespace: 'turnpike-system' },
      spec: { ports: [{ port: 80 }] },
    } as KubeObject);
    events.push(unrelated);
    const h = await new ConsoleData(() => parsed([attached, unrelated.seq])).history('HTTPRoute/apps/web');
    const broke = h.changes.at(-1)!;
    expect(broke.seq).toBe(unrelated.seq);
    expect(broke.after.join(' ')).toContain('ResolvedRefs=False/BackendNotFound');
    expect(broke.event).toBe('delete Service apps/web (translated with 1 other event)');
    // The translation of the Gateway, the Service and the route: the route's own event made it what it is.
    expect(h.changes[0]!.event).toBe('upsert HTTPRoute apps/web (translated with 2 other events)');
  });
});
