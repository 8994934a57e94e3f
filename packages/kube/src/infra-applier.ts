// The infra applier (leader only): server-side apply, under one field manager, of every
// Gateway's proxy objects; objects no Gateway needs any more are pruned. An object whose desired
// content has not changed since its last successful apply is not sent again; failures are
// retried with backoff.
import { createHash } from 'node:crypto';
import type { KubeObject } from '@turnpike/api';
import { GATEWAY_NAME_LABEL, GATEWAY_NAMESPACE_LABEL, type InfraIR } from '@turnpike/translator';
import { KubeApiError, type KubeClient } from './client.js';
import {
  heldPluginCopies,
  InfraInputPending,
  infraObjects,
  MANAGED_SELECTOR,
  type InfraContext,
} from './infra-objects.js';
import { WorkTimer } from './work-timer.js';

export const FIELD_MANAGER = 'turnpike';

interface KindPath {
  kind: string;
  base: string;
  plural: string;
  /** Served only where someone installed its CRD: objects of it are applied (and pruned) only then. */
  optional?: boolean;
}
const KINDS: KindPath[] = [
  { kind: 'ServiceAccount', base: '/api/v1', plural: 'serviceaccounts' },
  { kind: 'Secret', base: '/api/v1', plural: 'secrets' },
  { kind: 'ConfigMap', base: '/api/v1', plural: 'configmaps' },
  { kind: 'Deployment', base: '/apis/apps/v1', plural: 'deployments' },
  { kind: 'Service', base: '/api/v1', plural: 'services' },
  { kind: 'PodDisruptionBudget', base: '/apis/policy/v1', plural: 'poddisruptionbudgets' },
  { kind: 'HorizontalPodAutoscaler', base: '/apis/autoscaling/v2', plural: 'horizontalpodautoscalers' },
  // The Prometheus Operator's.
  { kind: 'PodMonitor', base: '/apis/monitoring.coreos.com/v1', plural: 'podmonitors', optional: true },
];
/** How long an optional kind found not served is taken as such before the API server is asked again. */
const SERVED_RECHECK_MS = 60_000;

function pathOf(kind: string, namespace: string, name?: string): string {
  const k = KINDS.find((x) => x.kind === kind)!;
  return `${k.base}/namespaces/${namespace}/${k.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
}

export interface InfraApplierOptions extends InfraContext {
  client: KubeClient;
  /** Every proxy lives in this namespace: prune looks there only (the controller may list nothing else). */
  namespace?: string;
  log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  onError?: () => void;
}

export class InfraApplier {
  private applied = new Map<string, string>();
  private desired = new Map<string, KubeObject>();
  /** Objects a held rollout keeps as they are: not applied, not pruned. */
  private kept = new Set<string>();
  private readonly timer = new WorkTimer(() => this.run());
  private running = false;
  private dirty = false;
  private failures = 0;
  private pendingInfra?: InfraIR;
  private lastInfra?: InfraIR;
  readonly stats = { applies: 0, prunes: 0, errors: 0 };
  /** Optional kinds: whether served, and when that was learnt. */
  private readonly served = new Map<string, { served: boolean; at: number }>();

  constructor(private readonly o: InfraApplierOptions) {}

  update(infra: InfraIR): void {
    this.pendingInfra = undefined;
    this.lastInfra = infra;
    const next = new Map<string, KubeObject>();
    const kept = new Set<string>();
    for (const ir of infra.gateways.values()) {
      for (const key of heldPluginCopies(ir)) kept.add(key);
      let objects: KubeObject[];
      try {
        objects = infraObjects(ir, this.o);
      } catch (e) {
        // Keep what this Gateway had (nothing is pruned) and try again shortly.
        if (!(e instanceof InfraInputPending)) throw e;
        this.o.log?.('warn', `not applying the proxy objects yet: ${e.message}`, {
          gateway: `${ir.gateway.namespace}/${ir.gateway.name}`,
        });
        // Its objects, by both labels: in one proxy namespace, two Gateways may share a name.
        const ofThisGateway = (o: KubeObject) =>
          o.metadata.namespace === ir.namespace &&
          o.metadata.labels?.[GATEWAY_NAME_LABEL] === ir.labels[GATEWAY_NAME_LABEL] &&
          o.metadata.labels?.[GATEWAY_NAMESPACE_LABEL] === ir.labels[GATEWAY_NAMESPACE_LABEL];
        for (const [k, o] of this.desired) if (ofThisGateway(o)) next.set(k, o);
        this.pendingInfra = infra;
        setTimeout(() => {
          if (this.pendingInfra === infra) this.update(infra);
        }, 1000).unref();
        continue;
      }
      for (const obj of objects) next.set(`${obj.kind}/${obj.metadata.namespace}/${obj.metadata.name}`, obj);
    }
    this.desired = next;
    this.kept = kept;
    this.dirty = true;
    this.timer.schedule(0);
  }

  /** Derive the objects again from the last infra IR (credentials were issued or renewed). */
  refresh(): void {
    if (this.lastInfra && !this.timer.stopped) this.update(this.lastInfra);
  }

  /** Forget what was applied (e.g. on becoming leader) so everything is applied again. */
  resync(): void {
    this.applied.clear();
    this.dirty = true;
    this.timer.schedule(0);
  }

  stop(): void {
    this.timer.stop();
  }

  /**
   * Server-side apply, forced. An object of ours whose name someone else took with a value the API
   * server will not change in place (a Secret's `type`) is replaced: deleted, then applied, so it
   * cannot keep a Gateway's proxies from their configuration.
   */
  private async applyReplacing(obj: KubeObject): Promise<void> {
    const path = pathOf(obj.kind, obj.metadata.namespace!, obj.metadata.name);
    const apply = () =>
      this.o.client.must(
        'PATCH',
        `${path}?fieldManager=${FIELD_MANAGER}&force=true`,
        obj,
        'application/apply-patch+yaml',
      );
    try {
      await apply();
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 422 && /field is immutable/.test(e.message))) throw e;
      this.o.log?.('warn', `replacing an object whose immutable fields differ from ours: ${e.message}`, {
        object: `${obj.kind}/${obj.metadata.namespace}/${obj.metadata.name}`,
      });
      await this.o.client.must('DELETE', path);
      await apply();
    }
  }

  private async run(): Promise<void> {
    if (this.running) {
      this.timer.schedule(100);
      return;
    }
    this.running = true;
    this.dirty = false;
    let ok = true;
    try {
      for (const [key, obj] of this.desired) {
        if (!(await this.isServed(obj.kind))) continue;
        const hash = createHash('sha256').update(JSON.stringify(obj)).digest('hex');
        if (this.applied.get(key) === hash) continue;
        try {
          await this.applyReplacing(obj);
          this.applied.set(key, hash);
          this.stats.applies++;
        } catch (e) {
          ok = false;
          this.stats.errors++;
          this.o.onError?.();
          this.o.log?.('warn', `apply failed, will retry: ${(e as Error).message}`, { object: key });
        }
      }
      if (ok) await this.prune();
    } catch (e) {
      ok = false;
      this.o.log?.('warn', `prune failed, will retry: ${(e as Error).message}`);
    } finally {
      this.running = false;
    }
    if (!ok) {
      this.failures++;
      this.timer.schedule(Math.min(30_000, 500 * 2 ** Math.min(this.failures, 6)));
    } else {
      this.failures = 0;
      if (this.dirty) this.timer.schedule(0);
    }
  }

  /**
   * Whether the API server serves `kind` (always, but for optional kinds: asked through discovery, the
   * answer kept a minute). A PodMonitor where no Prometheus Operator runs is left out, not an error.
   */
  private async isServed(kind: string): Promise<boolean> {
    const k = KINDS.find((x) => x.kind === kind);
    if (!k?.optional) return true;
    const known = this.served.get(kind);
    if (known && Date.now() - known.at < SERVED_RECHECK_MS) return known.served;
    let served = false;
    try {
      const list = await this.o.client.must<{ resources?: { name: string }[] }>('GET', k.base);
      served = (list.resources ?? []).some((r) => r.name === k.plural);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 404)) throw e;
    }
    if (known?.served !== served)
      this.o.log?.('info', served ? `${kind} is served: applying them` : `${kind} is not served: not applying any`);
    this.served.set(kind, { served, at: Date.now() });
    return served;
  }

  private async prune(): Promise<void> {
    for (const k of KINDS) {
      if (!(await this.isServed(k.kind))) continue;
      const scope = this.o.namespace === undefined ? '' : `/namespaces/${this.o.namespace}`;
      const list = await this.o.client.must<{ items: KubeObject[] }>(
        'GET',
        `${k.base}${scope}/${k.plural}?labelSelector=${encodeURIComponent(MANAGED_SELECTOR)}`,
      );
      for (const item of list.items ?? []) {
        const key = `${k.kind}/${item.metadata.namespace}/${item.metadata.name}`;
        if (this.desired.has(key) || this.kept.has(key)) continue;
        try {
          await this.o.client.must('DELETE', pathOf(k.kind, item.metadata.namespace!, item.metadata.name));
          this.stats.prunes++;
          this.applied.delete(key);
          this.o.log?.('info', 'pruned an object no Gateway needs', { object: key });
        } catch (e) {
          if (!(e instanceof KubeApiError && e.status === 404)) throw e;
        }
      }
    }
  }
}
