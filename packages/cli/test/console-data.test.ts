// The console's data on a running controller's log: LiveLog folds its oldest events into a base
// snapshot past its cap, and every moment it still holds looks exactly as on the whole log.
import { describe, expect, it } from '@jest/globals';
import { parseEventLog } from '@turnpike/engine';
import { ConsoleData } from '../src/console/console-data.js';
import { LiveLog } from '../src/console/live-log.js';
import { DELETED_AT, recordedLog } from './grant-log.js';

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

  it('history finds each change with few translations; a diff of the same moment is empty', () => {
    const data = new ConsoleData(() => full);
    const h = data.history('HTTPRoute/apps/web');
    expect(h.changes.map((c) => c.seq)).toEqual([7, DELETED_AT]);
    expect(h.probes).toBeLessThan(16 + 2 * 10);
    expect(data.diff(400, 400).same).toBe(true);
    expect(data.eventAt(0)).toBeUndefined();
    expect(data.eventAt(DELETED_AT)).toMatchObject({
      seq: DELETED_AT,
      type: 'delete',
      kind: 'ReferenceGrant',
      object: 'backends/let-apps',
    });
  });
});
