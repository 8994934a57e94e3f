// When the engine hashes its outputs: one output HASH_LATER_MS after it (the push goes first); a burst
// of outputs at once but in slices, never in the middle of the output that made the burst long; only a
// queue long enough to weigh on memory all in one go.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { Subscription, type SchedulerLike } from 'rxjs';
import { HASH_LATER_MS, OutputHashSequence } from '../src/output-hash.js';
import { HASH_SOON_AFTER, MAX_UNHASHED, OutputHashing } from '../src/output-hashing.js';

/** A scheduler whose clock moves only when told to; actions due run in order of their time. */
class ManualScheduler {
  private t = 0;
  private actions: { at: number; seq: number; run: () => void; cancelled: boolean }[] = [];
  private seq = 0;
  now(): number {
    return this.t;
  }
  schedule(work: () => void, delay = 0): Subscription {
    const action = { at: this.t + delay, seq: this.seq++, run: work, cancelled: false };
    this.actions.push(action);
    return new Subscription(() => {
      action.cancelled = true;
    });
  }
  advance(ms: number): void {
    const until = this.t + ms;
    for (;;) {
      const due = this.actions
        .filter((a) => !a.cancelled && a.at <= until)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.actions = this.actions.filter((a) => a !== due);
      this.t = due.at;
      due.run();
    }
    this.t = until;
  }
}

const GW = 'gateway.networking.k8s.io/v1';
const objects = (n: number): KubeObject[] => [
  {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'tp' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  },
  {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: { gatewayClassName: 'tp', listeners: [{ name: 'http', port: 80 + (n % 2), protocol: 'HTTP' }] },
  },
];

function engineLike() {
  const scheduler = new ManualScheduler();
  const sequence = new OutputHashSequence();
  const hashing = new OutputHashing(sequence, scheduler as unknown as SchedulerLike);
  const translator = new Translator();
  let n = 0;
  /** One translation's output queued, as the engine queues it. */
  const output = () => {
    const { result, changes } = translator.translateWithChanges(snapshotFromObjects(objects(n++)));
    const hashed = sequence.add(result, changes);
    hashing.queued();
    return hashed;
  };
  return { scheduler, sequence, output };
}

describe('output hashing', () => {
  it('hashes a lone output HASH_LATER_MS after it, not before', () => {
    const { scheduler, sequence, output } = engineLike();
    output();
    scheduler.advance(HASH_LATER_MS - 1);
    expect(sequence.size).toBe(1);
    scheduler.advance(1);
    expect(sequence.size).toBe(0);
  });

  it('starts on a burst at once, in slices after the output that made it long, not within it', () => {
    const { scheduler, sequence, output } = engineLike();
    for (let i = 0; i < HASH_SOON_AFTER; i++) output();
    // Nothing was worked out while the last output was being made...
    expect(sequence.size).toBe(HASH_SOON_AFTER);
    // ...and all of it right after, long before HASH_LATER_MS.
    scheduler.advance(0);
    expect(sequence.size).toBe(0);
  });

  it('works out a queue of MAX_UNHASHED before going on: each output holds its result until hashed', () => {
    const { sequence, output } = engineLike();
    const hashed = [];
    for (let i = 0; i < MAX_UNHASHED - 1; i++) hashed.push(output());
    expect(sequence.size).toBe(MAX_UNHASHED - 1);
    hashed.push(output());
    expect(sequence.size).toBe(0);
    // Every hash is known, and outputs alternating between two states alternate between two hashes.
    expect(new Set(hashed.map((h) => h.hash())).size).toBe(2);
  });
});
