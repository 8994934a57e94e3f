// bisect on a log where a ReferenceGrant is deleted at a known event, among hundreds of unrelated ones:
// it names that event, the condition before and after, the diff; and it is exact when the condition
// changes back at once.
import { describe, expect, it } from '@jest/globals';
import { applyEvents, EMPTY_SNAPSHOT, parseEventLog, snapshotObjects } from '@turnpike/engine';
import { bisectLog } from '../src/commands/bisect.js';
import { LogCheckpoints } from '../src/log-checkpoints.js';
import { tmp, turnpike, write } from './cli-helpers.js';
import { DELETED_AT, recordedLog } from './grant-log.js';

describe('turnpike bisect', () => {
  const text = recordedLog();

  it('names the event that deleted the grant, the condition before and after, and what it changed', () => {
    const log = write(tmp(), 'events.ndjson', text);
    const r = turnpike(
      'bisect',
      log,
      '--object',
      'HTTPRoute/apps/web',
      '--condition',
      'ResolvedRefs=False',
      '--no-color',
    );
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(
      `event ${DELETED_AT} at ${new Date(Date.UTC(2026, 0, 1) + DELETED_AT * 1000).toISOString()}: delete ReferenceGrant backends/let-apps (source kube)`,
    );
    expect(lines[1]).toBe(
      'HTTPRoute/apps/web ResolvedRefs: parent Gateway infra/gw True/ResolvedRefs → parent Gateway infra/gw False/RefNotPermitted',
    );
    expect(r.stdout).toMatch(/found in \d+ translation\(s\) over 600 event\(s\)/);
    expect(r.stdout).toContain('ResolvedRefs: True/ResolvedRefs → False/RefNotPermitted');
  });

  it('"changed" without a status finds the same event; the baseline is the value at the first translation', () => {
    const log = parseEventLog(text);
    const reached = bisectLog(log, 'HTTPRoute/apps/web', 'ResolvedRefs', 'False');
    const changed = bisectLog(log, 'HTTPRoute/apps/web', 'ResolvedRefs');
    expect([reached.found?.event.seq, changed.found?.event.seq]).toEqual([DELETED_AT, DELETED_AT]);
    expect(changed.baseline.value).toEqual([
      {
        where: 'parent Gateway infra/gw',
        type: 'ResolvedRefs',
        status: 'True',
        reason: 'ResolvedRefs',
        message: expect.any(String),
        trouble: false,
      },
    ]);
  });

  it('a change that reverts at the next event is found, with STATUS or without, and --all lists every change', () => {
    // The grant is created again right after its deletion: ResolvedRefs is False for one event only.
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const grant = lines.find((l) => l.kind === 'ReferenceGrant' && l.type === 'upsert');
    const at = lines.findIndex((l) => l.seq === DELETED_AT);
    lines.splice(at + 1, 0, { ...grant, seq: DELETED_AT + 1 });
    for (let i = at + 2; i < lines.length; i++) lines[i].seq = lines[i - 1].seq + 1;
    const reverting = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    const log = parseEventLog(reverting);
    expect(bisectLog(log, 'HTTPRoute/apps/web', 'ResolvedRefs', 'False').found?.event.seq).toBe(DELETED_AT);
    const changed = bisectLog(log, 'HTTPRoute/apps/web', 'ResolvedRefs');
    expect(changed.found?.event.seq).toBe(DELETED_AT);
    expect(changed.changes.map((c) => [c.event.seq, c.after[0]?.status])).toEqual([
      [DELETED_AT, 'False'],
      [DELETED_AT + 1, 'True'],
    ]);
    const cli = turnpike(
      'bisect',
      write(tmp(), 'events.ndjson', reverting),
      '--object',
      'HTTPRoute/apps/web',
      '--condition',
      'ResolvedRefs',
      '--all',
      '--no-color',
    );
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('every change (2):');
    expect(cli.stdout).toContain(`event ${DELETED_AT + 1} at`);
  });

  it('exits 1 when the condition never changes, saying from what', () => {
    const log = write(tmp(), 'events.ndjson', text);
    const r = turnpike('bisect', log, '--object', 'Gateway/infra/gw', '--condition', 'Accepted=False');
    expect([r.code, r.stdout.trim()]).toEqual([
      1,
      expect.stringMatching(
        /^Gateway\/infra\/gw Accepted=False: never reached from event 9 \(True\/Accepted, listener http True\/Accepted\) to the end of the log; \d+ translation\(s\) over 600 event\(s\)$/,
      ),
    ]);
    const bad = turnpike('bisect', log, '--object', 'Gateway/infra/gw', '--condition', 'Accepted=Maybe');
    expect([bad.code, bad.stderr.trim()]).toEqual([
      2,
      'turnpike: --condition Accepted=Maybe: use TYPE or TYPE=STATUS (True, False or Unknown)',
    ]);
  });

  it('checkpoints give the store an event-by-event application gives, at every index', () => {
    const log = parseEventLog(text);
    const checkpoints = new LogCheckpoints(log, 64);
    let snapshot = EMPTY_SNAPSHOT;
    log.events.forEach((e, i) => {
      snapshot = applyEvents(snapshot, [e]).snapshot;
      if (i % 37 === 0 || i === log.events.length - 1)
        expect(snapshotObjects(checkpoints.after(i))).toEqual(snapshotObjects(snapshot));
    });
    // The grant is there before its deletion and gone after it (the comparison is not vacuous).
    const grants = (i: number) =>
      snapshotObjects(checkpoints.after(i)).filter((o) => o.kind === 'ReferenceGrant').length;
    expect([grants(DELETED_AT - 2), grants(DELETED_AT - 1)]).toEqual([1, 0]);
    expect(snapshotObjects(checkpoints.after(-1))).toEqual([]);
  });
});
