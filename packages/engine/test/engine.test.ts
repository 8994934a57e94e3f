// The pipeline end to end on virtual time: no translation before sync, a burst gives one
// translation, and unchanged output is flagged as such.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { Subject, VirtualTimeScheduler } from 'rxjs';
import { runEngine, type EngineOutput } from '../src/engine.js';
import { synced, upsert, type SourceEvent } from '../src/events.js';

const svc = (name: string, label = 'a'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'apps', labels: { l: label } },
  spec: {},
});

describe('engine', () => {
  it('translates once after sync, then once per burst; identical output is not "changed"', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 10_000);
    const a = new Subject<SourceEvent>(),
      b = new Subject<SourceEvent>();
    const outputs: (EngineOutput & { t: number })[] = [];
    runEngine({ sources: [a, b], sourceNames: ['a', 'b'], scheduler, quietMs: 100, maxDelayMs: 500 }).subscribe((o) =>
      outputs.push({ ...o, t: scheduler.now() }),
    );
    const at = (t: number, f: () => void) => scheduler.schedule(f, t);
    at(0, () => a.next(upsert('a', svc('s1'))));
    at(10, () => a.next(synced('a')));
    at(400, () => b.next(synced('b'))); // gate opens: first translation now
    at(1000, () => a.next(upsert('a', svc('s2'))));
    at(1050, () => a.next(upsert('a', svc('s3')))); // burst → one translation at 1150
    at(2000, () => a.next(upsert('a', svc('s3')))); // same object again: not relevant, no translation
    scheduler.flush();
    expect(outputs.map((o) => [o.t, o.seq])).toEqual([
      [400, 3],
      [1150, 5],
    ]);
    // Services nobody references do not change the output: the second translation is flagged.
    expect(outputs.map((o) => o.changed)).toEqual([true, false]);
    expect(outputs[1]!.hash).toBe(outputs[0]!.hash);
    expect(outputs[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
  });
  it('an empty source still gets a first translation once synced', () => {
    const scheduler = new VirtualTimeScheduler();
    const a = new Subject<SourceEvent>();
    const outputs: EngineOutput[] = [];
    runEngine({ sources: [a], sourceNames: ['a'], scheduler }).subscribe((o) => outputs.push(o));
    scheduler.schedule(() => a.next(synced('a')), 5);
    scheduler.flush();
    expect(outputs).toHaveLength(1);
    expect(outputs[0]!.result.statuses.size).toBe(0);
  });
});
