// Stage 4b: access logs. Per ProxyConfig, what its spec.accessLog comes to (ir/access-log.ts), the
// collector's Service, ReferenceGrant and BackendTLSPolicy read as a route's backend is. Publishes
// `@accesslog:<namespace>/<name>` when that changes, which assembles its Gateways again, and tells
// the installation stage which ProxyConfigs' statuses (their ResolvedRefs condition) to write again.
// Runs after the Service facts are published, as the route stage does.
import type { ProxyConfig } from '@turnpike/api';
import { flat } from '../compact-values.js';
import { deepEqual } from '../incremental/deep-equal.js';
import type { TranslationRun } from '../incremental/run.js';
import { DEFAULT_ACCESS_LOG, resolveProxyAccessLog, type ResolvedAccessLog } from '../ir/access-log.js';
import type { PolicyStage } from './policy-stage.js';

const PIECE = 'accesslog:';
export const accessLogFact = (namespace: string, name: string): string => flat(`@accesslog:${namespace}/${name}`);

export class AccessLogStage {
  private readonly resolved = new Map<string, ResolvedAccessLog>();
  /** ProxyConfigs (`namespace/name`) whose access log changed in the last run (present or gone). */
  changed = new Set<string>();

  update(run: TranslationRun, policies: PolicyStage): void {
    this.changed = new Set();
    const ctx = {
      inputs: run.inputs,
      backendTLS: (namespace: string, service: string, port: string | undefined) =>
        policies.forBackend(run, namespace, service, port),
    };
    for (const { key, namespace, name, object: pc } of run.dirtyObjects<ProxyConfig>(PIECE, 'ProxyConfig')) {
      const before = this.resolved.get(key);
      if (!pc) {
        run.forget(PIECE, key);
        this.resolved.delete(key);
        if (before) {
          run.facts.add(accessLogFact(namespace, name));
          this.changed.add(key);
        }
        continue;
      }
      const next = run.compute(PIECE, key, () => resolveProxyAccessLog(ctx, pc));
      // Kept as it was when it says the same: its collector cluster keeps its identity for the xDS side.
      if (before && deepEqual(before, next)) continue;
      this.resolved.set(key, next);
      run.facts.add(accessLogFact(namespace, name));
      this.changed.add(key);
    }
  }

  /** What a Gateway's ProxyConfig (if any) logs, recording the dependency on it. */
  forGateway(run: TranslationRun, pc: ProxyConfig | undefined): ResolvedAccessLog {
    if (!pc) return DEFAULT_ACCESS_LOG;
    const namespace = pc.metadata.namespace ?? '';
    run.inputs.depend(accessLogFact(namespace, pc.metadata.name));
    return this.resolved.get(`${namespace}/${pc.metadata.name}`) ?? DEFAULT_ACCESS_LOG;
  }

  /** A ProxyConfig's access log as last resolved. */
  of(key: string): ResolvedAccessLog | undefined {
    return this.resolved.get(key);
  }
}
