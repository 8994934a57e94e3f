// Stage 2: BackendTLSPolicies. Each policy's own verdict is memoised with what it read (CA
// ConfigMaps and Secrets); conflicts between policies are decided over all of them (there are
// few). Publishes `@btls:<namespace>/<service>` for every Service whose winning policy changed.
import type { BackendTLSPolicy } from '@turnpike/api';
import { BackendTLSIndex, evaluateBackendTLSPolicy, type BackendTLSModel } from '../policies/backend-tls-policies.js';
import { deepEqual } from '../incremental/deep-equal.js';
import type { TranslationRun } from '../incremental/run.js';
import { flat } from '../compact-values.js';

const PIECE = 'policy:';
export const backendTLSFact = (namespace: string, service: string): string => flat(`@btls:${namespace}/${service}`);

export class PolicyStage {
  private readonly verdicts = new Map<string, { policy: BackendTLSPolicy; model: BackendTLSModel }>();
  index = new BackendTLSIndex([], () => {
    throw new Error('unreachable');
  });
  /** True when the policies changed in the last run (their statuses are re-derived). */
  changed = false;

  update(run: TranslationRun): void {
    const dirty = run.dirtyPieces(PIECE);
    for (const c of run.changedObjects('BackendTLSPolicy')) dirty.add(`${c.namespace}/${c.name}`);
    this.changed = dirty.size > 0;
    if (!this.changed) return;
    for (const key of dirty) {
      this.verdicts.delete(key);
      run.forget(PIECE, key);
    }
    const policies = run.inputs.snapshot.get('BackendTLSPolicy');
    const all: BackendTLSPolicy[] = [];
    for (const ns of [...(policies?.keys() ?? [])].sort()) {
      const shard = policies!.get(ns)!;
      for (const name of [...shard.keys()].sort()) all.push(shard.get(name) as BackendTLSPolicy);
    }
    const next = new BackendTLSIndex(all, (p) => {
      const key = `${p.metadata.namespace}/${p.metadata.name}`;
      let v = this.verdicts.get(key);
      if (!v || v.policy !== p) {
        v = { policy: p, model: run.compute(PIECE, key, () => evaluateBackendTLSPolicy(run.inputs, p)) };
        this.verdicts.set(key, v);
      }
      return v.model;
    });
    for (const target of new Set([...this.index.byTarget.keys(), ...next.byTarget.keys()])) {
      const a = this.index.byTarget.get(target);
      const b = next.byTarget.get(target);
      if (a && b && deepEqual(a, b)) continue;
      const [ns, service] = target.split('/') as [string, string];
      run.facts.add(backendTLSFact(ns, service));
    }
    // The routes to a Service also name the policies that fail to attach to it (their ancestors).
    for (const target of new Set([...this.index.detachedByService.keys(), ...next.detachedByService.keys()])) {
      const [ns, service] = target.split('/') as [string, string];
      if (this.index.detachedFrom(ns, service).join() !== next.detachedFrom(ns, service).join())
        run.facts.add(backendTLSFact(ns, service));
    }
    this.index = next;
  }

  /** The policy for a Service port, recording the dependency on it. */
  forBackend(
    run: TranslationRun,
    namespace: string,
    service: string,
    portName: string | undefined,
  ): BackendTLSModel | undefined {
    run.inputs.depend(backendTLSFact(namespace, service));
    return this.index.forBackend(namespace, service, portName);
  }

  /** The policies whose sectionName names no port of this Service, recording the dependency on them. */
  detachedFrom(run: TranslationRun, namespace: string, service: string): string[] {
    run.inputs.depend(backendTLSFact(namespace, service));
    return this.index.detachedFrom(namespace, service);
  }
}
