// What a memoised piece of the translation read. Rules read the snapshot only through `Inputs`;
// while a piece is computed inside `record()`, every read adds a dependency key:
//   `Kind/namespace/name`  one object (present or not),
//   `Kind/namespace/*`     every object of a kind in one namespace,
//   `Kind/*`               every object of a kind,
//   `@…`                   a derived fact another stage publishes (a Gateway's model, a cluster's readiness).
// A piece is recomputed only when one of its keys is among the changes of the next snapshot.
import { OWNED_STATUS_KINDS, type KubeObject } from '@turnpike/api';
import { ReferenceGrantIndex, type Referrer, type Target } from '../policies/reference-grants.js';
import { getObject, kindStore, listObjects, type Snapshot } from '../snapshot.js';
import { deepEqual } from './deep-equal.js';
import { flat } from '../compact-values.js';

export const objectDependency = (kind: string, namespace: string | undefined, name: string): string =>
  flat(`${kind}/${namespace ?? ''}/${name}`);
export const namespaceDependency = (kind: string, namespace: string): string => flat(`${kind}/${namespace}/*`);
export const kindDependency = (kind: string): string => `${kind}/*`;

export class Inputs {
  private recording: Set<string> | undefined;
  private grantIndex: ReferenceGrantIndex | undefined;

  constructor(readonly snapshot: Snapshot) {}

  get<T extends KubeObject>(kind: string, namespace: string | undefined, name: string): T | undefined {
    this.recording?.add(objectDependency(kind, namespace, name));
    return getObject<T>(this.snapshot, kind, namespace, name);
  }

  /** Objects of a kind (in one namespace, or all), in a stable order. */
  list<T extends KubeObject>(kind: string, namespace?: string): T[] {
    this.recording?.add(namespace === undefined ? kindDependency(kind) : namespaceDependency(kind, namespace));
    return listObjects<T>(this.snapshot, kind, namespace);
  }

  /** Records a derived dependency (published by another stage). */
  depend(key: string): void {
    this.recording?.add(key);
  }

  /** ReferenceGrant: true when the reference stays in one namespace or a grant in the target's allows it. */
  allows(from: Referrer, to: Target): boolean {
    if (from.namespace === to.namespace) return true;
    this.recording?.add(namespaceDependency('ReferenceGrant', to.namespace));
    this.grantIndex ??= new ReferenceGrantIndex(this.snapshot);
    return this.grantIndex.allows(from, to);
  }

  /** Runs `compute`, collecting what it read; reads of a nested `record` stay with the inner one. */
  record<T>(compute: () => T): { value: T; dependencies: Set<string> } {
    const outer = this.recording;
    const dependencies = new Set<string>();
    this.recording = dependencies;
    try {
      return { value: compute(), dependencies };
    } finally {
      this.recording = outer;
    }
  }
}

/**
 * An update that changes nothing the translator reads: only resourceVersion or managedFields, or
 * only the status of a kind whose status we write (our own output, never our input).
 */
export function sameForTranslation(prev: KubeObject, next: KubeObject): boolean {
  if (prev === next) return true;
  return deepEqual(comparable(prev), comparable(next));
}

function comparable(o: KubeObject): unknown {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata ?? ({} as KubeObject['metadata']);
  const rest: Record<string, unknown> = { ...o, metadata };
  if (OWNED_STATUS_KINDS.has(o.kind)) delete rest.status;
  return rest;
}

export interface InputChanges {
  /** Dependency keys whose value differs (objects, and the namespace and kind listings they belong to). */
  keys: Set<string>;
  /** Per kind, the `namespace/name` of objects added, removed or changed. */
  objects: Map<string, { namespace: string; name: string; before?: KubeObject; after?: KubeObject }[]>;
}

/**
 * The difference between two snapshots, found by identity: immer keeps an unchanged kind store,
 * namespace shard and object identical, so the cost is proportional to the shards that changed.
 */
export function changedInputs(prev: Snapshot, next: Snapshot): InputChanges {
  const keys = new Set<string>();
  const objects: InputChanges['objects'] = new Map();
  if (prev === next) return { keys, objects };
  for (const kind of new Set([...prev.keys(), ...next.keys()])) {
    const a = kindStore(prev, kind);
    const b = kindStore(next, kind);
    if (a === b) continue;
    const changes: { namespace: string; name: string; before?: KubeObject; after?: KubeObject }[] = [];
    for (const ns of new Set([...a.keys(), ...b.keys()])) {
      const sa = a.get(ns);
      const sb = b.get(ns);
      if (sa === sb) continue;
      let shardChanged = false;
      const change = (name: string, before: KubeObject | undefined, after: KubeObject | undefined) => {
        if (before === after || (before && after && sameForTranslation(before, after))) return;
        shardChanged = true;
        keys.add(objectDependency(kind, ns, name));
        const c: (typeof changes)[number] = { namespace: ns, name };
        if (before) c.before = before;
        if (after) c.after = after;
        changes.push(c);
      };
      // The old shard's names in order, then the new ones (no union set: a shard may hold 10 000 routes).
      for (const [name, before] of sa ?? []) change(name, before, sb?.get(name));
      for (const [name, after] of sb ?? []) if (!sa?.has(name)) change(name, undefined, after);
      if (shardChanged) keys.add(namespaceDependency(kind, ns));
    }
    if (changes.length) {
      keys.add(kindDependency(kind));
      objects.set(kind, changes);
    }
  }
  return { keys, objects };
}

/** Every object of a snapshot as a change from nothing (the first translation). */
export function allInputs(next: Snapshot): InputChanges {
  return changedInputs(new Map(), next);
}
