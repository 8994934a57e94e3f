// The translator's input: every watched object, keyed kind → namespace → name.
// The engine builds it with immer, so an unchanged object keeps its identity between snapshots.
import type { KubeObject } from '@turnpike/api';

export type NamespaceShard = ReadonlyMap<string, KubeObject>;
export type KindStore = ReadonlyMap<string, NamespaceShard>;
export type Snapshot = ReadonlyMap<string, KindStore>;

const EMPTY: KindStore = new Map();

export function kindStore(snapshot: Snapshot, kind: string): KindStore {
  return snapshot.get(kind) ?? EMPTY;
}

export function getObject<T extends KubeObject>(
  snapshot: Snapshot,
  kind: string,
  namespace: string | undefined,
  name: string,
): T | undefined {
  return kindStore(snapshot, kind)
    .get(namespace ?? '')
    ?.get(name) as T | undefined;
}

// Sorted views are cached by the identity of the (immutable) map they sort: with immer, only
// the shards an event touched are new, so only those are sorted again.
const sortedShards = new WeakMap<NamespaceShard, KubeObject[]>();
const sortedStores = new WeakMap<KindStore, KubeObject[]>();

function sortedShard(shard: NamespaceShard): KubeObject[] {
  let list = sortedShards.get(shard);
  if (!list) {
    list = [...shard.keys()].sort().map((name) => shard.get(name) as KubeObject);
    sortedShards.set(shard, list);
  }
  return list;
}

/** Objects of a kind in a stable order (namespace, then name), whatever order they arrived in. */
export function listObjects<T extends KubeObject>(snapshot: Snapshot, kind: string, namespace?: string): T[] {
  const store = kindStore(snapshot, kind);
  if (namespace !== undefined) {
    const shard = store.get(namespace);
    return shard ? (sortedShard(shard) as T[]) : [];
  }
  let list = sortedStores.get(store);
  if (!list) {
    list = [];
    for (const ns of [...store.keys()].sort()) list.push(...sortedShard(store.get(ns) as NamespaceShard));
    sortedStores.set(store, list);
  }
  return list as T[];
}

/** Builds a snapshot from a flat list (offline translation and tests). Later duplicates win. */
export function snapshotFromObjects(objects: readonly KubeObject[]): Snapshot {
  const kinds = new Map<string, Map<string, Map<string, KubeObject>>>();
  for (const o of objects) {
    let byNs = kinds.get(o.kind);
    if (!byNs) kinds.set(o.kind, (byNs = new Map()));
    const ns = o.metadata.namespace ?? '';
    let byName = byNs.get(ns);
    if (!byName) byNs.set(ns, (byName = new Map()));
    byName.set(o.metadata.name, o);
  }
  return kinds;
}
