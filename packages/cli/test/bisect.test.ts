// bisect on a log where a ReferenceGrant is deleted at a known event, among hundreds of unrelated ones:
// it names that event, the condition before and after, the diff, in about log2(n) translations.
import { describe, expect, it } from '@jest/globals';
import { applyEvents, EMPTY_SNAPSHOT, parseEventLog, snapshotObjects, type WatchEvent } from '@turnpike/engine';
import { bisectLog } from '../src/commands/bisect.js';
import { LogCheckpoints } from '../src/log-checkpoints.js';
import { tmp, turnpike, write } from './cli-helpers.js';

const GW = 'gateway.networking.k8s.io/v1';
const OBJECTS = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'infra' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'backends' } },
  { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tp' }, spec: { controllerName: 'turnpike.dev/gateway-controller' } },
  { apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra' },
    spec: { gatewayClassName: 'tp', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'backends' }, spec: { ports: [{ name: 'http', port: 80 }] } },
  { apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'web', namespace: 'apps' },
    spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{ backendRefs: [{ name: 'db', namespace: 'backends', port: 80 }] }] } },
  { apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'let-apps', namespace: 'backends' },
    spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }], to: [{ group: '', kind: 'Service' }] } },
];
const DELETED_AT = 318;
const EVENTS = 600;

function recordedLog(): string {
  const events: WatchEvent[] = [];
  const at = (seq: number) => new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString();
  const push = (e: Omit<WatchEvent, 'seq' | 'at' | 'source'>) => events.push({ seq: events.length + 1, at: at(events.length + 1), source: 'kube', ...e } as WatchEvent);
  for (const o of OBJECTS) push({ type: 'upsert', kind: o.kind, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}), name: o.metadata.name, object: o } as never);
  push({ type: 'synced', kind: '*' } as never);
  while (events.length < EVENTS) {
    const seq = events.length + 1;
    if (seq === DELETED_AT) push({ type: 'delete', kind: 'ReferenceGrant', namespace: 'backends', name: 'let-apps' } as never);
    else push({ type: 'upsert', kind: 'ConfigMap', namespace: 'apps', name: `noise-${seq % 7}`, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `noise-${seq % 7}`, namespace: 'apps' }, data: { seq: String(seq) } } } as never);
  }
  const header = { format: 'turnpike.events', version: 1, createdAt: at(0), quietMs: 50, maxDelayMs: 500, source: 'test' };
  return [header, ...events].map((l) => JSON.stringify(l)).join('\n') + '\n';
}

describe('turnpike bisect', () => {
  const text = recordedLog();

  it('names the event that deleted the grant, the condition before and after, and what it changed', () => {
    const log = write(tmp(), 'events.ndjson', text);
    const r = turnpike('bisect', log, '--object', 'HTTPRoute/apps/web', '--condition', 'ResolvedRefs=False', '--no-color');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`event ${DELETED_AT} at ${new Date(Date.UTC(2026, 0, 1) + DELETED_AT * 1000).toISOString()}: delete ReferenceGrant backends/let-apps (source kube)`);
    expect(lines[1]).toBe('HTTPRoute/apps/web ResolvedRefs: parent infra/gw True/ResolvedRefs → parent infra/gw False/RefNotPermitted');
    expect(r.stdout).toMatch(/found in \d+ translation\(s\) over 600 event\(s\)/);
    expect(r.stdout).toContain('ResolvedRefs: True/ResolvedRefs → False/RefNotPermitted');
  });

  it('costs about log2(n) translations, and "changed" without a status finds the same event', () => {
    const log = parseEventLog(text);
    const reached = bisectLog(log, 'HTTPRoute/apps/web', 'ResolvedRefs', 'False');
    const changed = bisectLog(log, 'HTTPRoute/apps/web', 'ResolvedRefs');
    expect([reached.found?.event.seq, changed.found?.event.seq]).toEqual([DELETED_AT, DELETED_AT]);
    expect(reached.translations).toBeLessThanOrEqual(Math.ceil(Math.log2(EVENTS)) + 3);
    expect(changed.baseline.value).toEqual([{ where: 'parent infra/gw', status: 'True', reason: 'ResolvedRefs', message: expect.any(String) }]);
  });

  it('exits 1 when the condition never changes, saying from what', () => {
    const log = write(tmp(), 'events.ndjson', text);
    const r = turnpike('bisect', log, '--object', 'Gateway/infra/gw', '--condition', 'Accepted=False');
    expect([r.code, r.stdout.trim()]).toEqual([1, expect.stringMatching(/^Gateway\/infra\/gw Accepted=False: never reached from event 9 \(True\/Accepted\) to the end of the log; \d+ translation\(s\) over 600 event\(s\)$/)]);
    const bad = turnpike('bisect', log, '--object', 'Gateway/infra/gw', '--condition', 'Accepted=Maybe');
    expect([bad.code, bad.stderr.trim()]).toEqual([2, 'turnpike: --condition Accepted=Maybe: use TYPE or TYPE=STATUS (True, False or Unknown)']);
  });

  it('checkpoints give the store an event-by-event application gives, at every index', () => {
    const log = parseEventLog(text);
    const checkpoints = new LogCheckpoints(log, 64);
    let snapshot = EMPTY_SNAPSHOT;
    log.events.forEach((e, i) => {
      snapshot = applyEvents(snapshot, [e]).snapshot;
      if (i % 37 === 0 || i === log.events.length - 1) expect(snapshotObjects(checkpoints.after(i))).toEqual(snapshotObjects(snapshot));
    });
    // The grant is there before its deletion and gone after it (the comparison is not vacuous).
    const grants = (i: number) => snapshotObjects(checkpoints.after(i)).filter((o) => o.kind === 'ReferenceGrant').length;
    expect([grants(DELETED_AT - 2), grants(DELETED_AT - 1)]).toEqual([1, 0]);
    expect(snapshotObjects(checkpoints.after(-1))).toEqual([]);
  });
});
