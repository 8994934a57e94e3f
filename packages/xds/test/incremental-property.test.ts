// The xDS snapshot builder and cache, kept up to date from each translation's changes, serve
// exactly what a fresh build of the same translation serves, after every step of a random history.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { Translator, type Snapshot } from '@turnpike/translator';
import fc from 'fast-check';
import { SnapshotCache, XdsSnapshotBuilder, type NodeSnapshot } from '../src/index.js';
import { apply, history, startingSnapshot } from '../../translator/test/histories.js';

const RUNS = Number(process.env.FC_RUNS ?? 250);

/** A node snapshot as what a client would be sent: per type its version and each resource's version. */
function served(snap: NodeSnapshot | undefined): unknown {
  if (!snap) return undefined;
  return [...snap].map(([type, ts]) => [
    type,
    ts.version,
    [...ts.resources.values()].map((r) => `${r.name}@${r.version}`),
  ]);
}

describe('incremental xDS snapshots (property)', () => {
  it('after every step, the cache kept from changes serves what a fresh build serves', () => {
    fc.assert(
      fc.property(history, ([base, initial, ops]) => {
        let snapshot: Snapshot = startingSnapshot(base, initial);
        const translator = new Translator();
        const builder = new XdsSnapshotBuilder();
        const cache = new SnapshotCache();
        for (const o of [undefined, ...ops]) {
          if (o) snapshot = apply(snapshot, o);
          const current = snapshot;
          const lookup = (kind: string, ns: string, name: string) =>
            current.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
          const { result, changes } = translator.translateWithChanges(current);
          cache.update(builder.update(result.xdsIR, changes, lookup));
          const fresh = new XdsSnapshotBuilder().build(result.xdsIR, lookup);
          expect(cache.nodeNames()).toEqual([...fresh.keys()].sort());
          for (const node of fresh.keys()) expect(served(cache.get(node))).toEqual(served(fresh.get(node)));
        }
      }),
      { numRuns: RUNS },
    );
  });
});
