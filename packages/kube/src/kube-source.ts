// The Kubernetes source: one reflector per watched kind, merged into one observable of events.
// It reports `synced` once every kind has been listed (or found missing), and, for the APIs a
// cluster may lack (reportServed), a ServedAPI event whenever which version is served changes.
import { slimPod } from '@turnpike/api';
import { synced, upsert, type SourceEvent } from '@turnpike/engine';
import { Observable } from 'rxjs';
import type { KubeClient } from './client.js';
import { MANAGED_SELECTOR } from './infra-objects.js';
import { ProxyReportLiveness } from './proxy-report-liveness.js';
import { Reflector, type ReflectorOptions } from './reflector.js';
import { RESOURCES, servedAPI } from './resources.js';

export const KUBE_SOURCE = 'kube';

/** Secrets that can never matter (Helm releases, service account tokens) stay out of memory. */
export const SECRET_FIELD_SELECTOR = 'type!=helm.sh/release.v1,type!=kubernetes.io/service-account-token';

/** ConfigMaps we write ourselves (proxy bootstraps, plugin content) are never input. */
export const CONFIGMAP_LABEL_SELECTOR = 'app.kubernetes.io/managed-by notin (turnpike,turnpike-plugins)';

export interface KubeSourceOptions extends Partial<
  Omit<ReflectorOptions, 'client' | 'resource' | 'source' | 'emit' | 'onSynced' | 'namespace'>
> {
  client: KubeClient;
  /** Where the proxy Deployments live; undefined: beside their Gateways, in every namespace. */
  proxyNamespace?: string;
  /** Where the replicas write their ProxyReports (the controller's namespace); undefined: not read. */
  reportNamespace?: string;
  /** A replica's report expired (the leader deletes it). */
  onReportExpired?: (namespace: string, name: string) => void;
  /** How many replicas' reports are live, whenever that changes. */
  onReportsLive?: (count: number) => void;
  onReflectors?: (r: Reflector[]) => void;
}

export function kubeSource(opts: KubeSourceOptions): Observable<SourceEvent> {
  return new Observable<SourceEvent>((subscriber) => {
    const resources = RESOURCES.filter((r) => r.kind !== 'ProxyReport' || opts.reportNamespace !== undefined);
    const pending = new Set(resources.map((r) => r.kind));
    /** Per kind, the version last said to be served ('' for none). */
    const served = new Map<string, string>();
    const liveness = new ProxyReportLiveness({
      emit: (e) => subscriber.next(e),
      ...(opts.onReportExpired ? { onExpired: opts.onReportExpired } : {}),
      ...(opts.onReportsLive ? { onLive: opts.onReportsLive } : {}),
    });
    const reflectors = resources.map(
      (resource) =>
        new Reflector({
          ...opts,
          resource,
          source: KUBE_SOURCE,
          ...(resource.kind === 'Secret' ? { fieldSelector: SECRET_FIELD_SELECTOR } : {}),
          ...(resource.kind === 'ConfigMap' ? { labelSelector: CONFIGMAP_LABEL_SELECTOR } : {}),
          // Pods change often and carry much the translator never reads: cut down before the store.
          ...(resource.kind === 'Pod'
            ? {
                slim: slimPod,
                // RBAC of a release before Pods were read must not keep the controller from starting.
                optional:
                  'XBackends of type EndpointSelector have no endpoints until Pods can be read ' +
                  '(grant list and watch on pods, as deploy/rbac.yaml does)',
              }
            : {}),
          ...(resource.kind === 'Deployment'
            ? {
                // The proxy Deployments we apply: the only Deployments read.
                labelSelector: MANAGED_SELECTOR,
                ...(opts.proxyNamespace !== undefined ? { namespace: opts.proxyNamespace } : {}),
                optional:
                  'plugins are reported installed only once the proxy Deployments can be read ' +
                  '(grant list and watch on deployments, as deploy/rbac.yaml does)',
              }
            : {}),
          ...(resource.kind === 'ProxyReport'
            ? {
                namespace: opts.reportNamespace!,
                optional:
                  'statuses count only the proxies of this replica (grant proxyreports, as deploy/rbac.yaml does)',
              }
            : {}),
          emit: resource.kind === 'ProxyReport' ? (e) => liveness.accept(e) : (e) => subscriber.next(e),
          ...(resource.reportServed
            ? {
                onServed: (version: string | undefined) => {
                  if (served.get(resource.kind) === (version ?? '')) return;
                  served.set(resource.kind, version ?? '');
                  subscriber.next(upsert(KUBE_SOURCE, servedAPI(resource, version)));
                },
              }
            : {}),
          onSynced: () => {
            subscriber.next(synced(KUBE_SOURCE, resource.kind));
            pending.delete(resource.kind);
            if (pending.size === 0) subscriber.next(synced(KUBE_SOURCE));
          },
        }),
    );
    opts.onReflectors?.(reflectors);
    for (const r of reflectors) r.start();
    return () => {
      for (const r of reflectors) r.stop();
      liveness.stop();
    };
  });
}
