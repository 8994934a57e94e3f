// One translation's working state, shared by the stages: the inputs (tracked reads), what changed
// since the previous translation (input keys, then the derived facts the stages publish as they
// go), the dependency index of every memoised piece, and the output editors.
import type { KubeObject } from '@turnpike/api';
import { getObject } from '../snapshot.js';
import type { PieceDependencies } from './dependency-index.js';
import type { InputChanges, Inputs } from './inputs.js';
import type { OutputEditors } from './outputs.js';

export interface Diagnostic {
  level: 'warning' | 'error';
  object: string;
  message: string;
}

export class TranslationRun {
  /** Derived dependency keys (`@…`) whose value changed in this run. */
  readonly facts = new Set<string>();
  /** How many pieces each stage (by prefix, e.g. `route:`) computed in this run: what a change cost. */
  readonly computed = new Map<string, number>();

  constructor(
    readonly inputs: Inputs,
    readonly changes: InputChanges,
    readonly dependencies: PieceDependencies,
    readonly out: OutputEditors,
    readonly controllerName: string,
    /** Where every Gateway's proxy objects live; undefined: beside each Gateway. */
    readonly proxyNamespace: string | undefined,
  ) {}

  /** Changed objects of a kind (added, removed or updated), in a stable order. */
  changedObjects(kind: string): InputChanges['objects'] extends Map<string, infer L> ? L : never {
    return this.changes.objects.get(kind) ?? [];
  }

  /** Ids (without the prefix) of the pieces of one stage that read something that changed so far. */
  dirtyPieces(prefix: string): Set<string> {
    const out = this.dependencies.dependentsOf(prefix, this.changes.keys);
    return this.dependencies.dependentsOf(prefix, this.facts, out);
  }

  /**
   * The objects of one kind whose pieces must be derived again: those that changed, and those whose
   * piece (id `namespace/name` under `prefix`) read something that changed. `object` is undefined
   * for one that is gone. In a stable order.
   */
  dirtyObjects<T extends KubeObject>(
    prefix: string,
    kind: string,
  ): { key: string; namespace: string; name: string; object?: T }[] {
    const keys = this.dirtyPieces(prefix);
    for (const c of this.changedObjects(kind)) keys.add(`${c.namespace}/${c.name}`);
    return [...keys].sort().map((key) => {
      const [namespace, name] = key.split('/') as [string, string];
      const object = getObject<T>(this.inputs.snapshot, kind, namespace, name);
      return object ? { key, namespace, name, object } : { key, namespace, name };
    });
  }

  /** Computes one piece, recording what it read under `prefix + id`. */
  compute<T>(prefix: string, id: string, fn: () => T): T {
    this.computed.set(prefix, (this.computed.get(prefix) ?? 0) + 1);
    const { value, dependencies } = this.inputs.record(fn);
    this.dependencies.record(prefix, id, dependencies);
    return value;
  }

  forget(prefix: string, id: string): void {
    this.dependencies.drop(prefix, id);
  }
}
