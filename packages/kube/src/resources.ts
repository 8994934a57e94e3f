// Where each watched kind lives in the API: group, version, plural, and whether it is namespaced.
import { CLUSTER_TRUST_BUNDLE_GROUP, type ServedAPI, type WatchedKind } from '@turnpike/api';

export interface ResourceInfo {
  kind: WatchedKind;
  group: string;
  /** The version listed and watched first; objects are stored in its form whichever version served them. */
  version: string;
  /** Older versions with the same fields, listed in order when `version` is not served (404). */
  fallbackVersions?: string[];
  /**
   * A built-in API that a cluster may not serve, and on which the translation depends: the source says
   * whether (and which version) it is served with a ServedAPI event.
   */
  reportServed?: true;
  plural: string;
  namespaced: boolean;
}

const GW = 'gateway.networking.k8s.io';
const X_GW = 'gateway.networking.x-k8s.io';

export const RESOURCES: ResourceInfo[] = [
  { kind: 'GatewayClass', group: GW, version: 'v1', plural: 'gatewayclasses', namespaced: false },
  { kind: 'Gateway', group: GW, version: 'v1', plural: 'gateways', namespaced: true },
  { kind: 'ListenerSet', group: GW, version: 'v1', plural: 'listenersets', namespaced: true },
  { kind: 'HTTPRoute', group: GW, version: 'v1', plural: 'httproutes', namespaced: true },
  { kind: 'GRPCRoute', group: GW, version: 'v1', plural: 'grpcroutes', namespaced: true },
  { kind: 'TLSRoute', group: GW, version: 'v1', plural: 'tlsroutes', namespaced: true },
  { kind: 'TCPRoute', group: GW, version: 'v1', plural: 'tcproutes', namespaced: true },
  { kind: 'UDPRoute', group: GW, version: 'v1', plural: 'udproutes', namespaced: true },
  { kind: 'BackendTLSPolicy', group: GW, version: 'v1', plural: 'backendtlspolicies', namespaced: true },
  { kind: 'ReferenceGrant', group: GW, version: 'v1', plural: 'referencegrants', namespaced: true },
  {
    kind: 'XTelemetryPolicy',
    group: 'gateway.networking.x-k8s.io',
    version: 'v1alpha1',
    plural: 'xtelemetrypolicies',
    namespaced: true,
  },
  { kind: 'XBackend', group: X_GW, version: 'v1alpha1', plural: 'xbackends', namespaced: true },
  { kind: 'Service', group: '', version: 'v1', plural: 'services', namespaced: true },
  { kind: 'EndpointSlice', group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', namespaced: true },
  // Read only, cluster-wide, for XBackends of type EndpointSelector; slimmed as they arrive (slimPod).
  { kind: 'Pod', group: '', version: 'v1', plural: 'pods', namespaced: true },
  { kind: 'Secret', group: '', version: 'v1', plural: 'secrets', namespaced: true },
  { kind: 'Namespace', group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  { kind: 'ConfigMap', group: '', version: 'v1', plural: 'configmaps', namespaced: true },
  // GA (v1) in Kubernetes 1.37; v1beta1 (same fields) on older clusters that enable it; none on the
  // rest, which the translator must know (GEP-5075: InvalidKind, the feature not advertised).
  {
    kind: 'ClusterTrustBundle',
    group: CLUSTER_TRUST_BUNDLE_GROUP,
    version: 'v1',
    fallbackVersions: ['v1beta1'],
    reportServed: true,
    plural: 'clustertrustbundles',
    namespaced: false,
  },
  // Only ours (MANAGED_SELECTOR): their rollout tells when a plugin is installed.
  { kind: 'Deployment', group: 'apps', version: 'v1', plural: 'deployments', namespaced: true },
  { kind: 'ProxyConfig', group: 'turnpike.dev', version: 'v1alpha1', plural: 'proxyconfigs', namespaced: true },
  {
    kind: 'PluginInstallation',
    group: 'turnpike.dev',
    version: 'v1alpha1',
    plural: 'plugininstallations',
    namespaced: true,
  },
  // Every replica's, in the controller's namespace only (kubeSource's reportNamespace).
  { kind: 'ProxyReport', group: 'turnpike.dev', version: 'v1alpha1', plural: 'proxyreports', namespaced: true },
];

export function resourceInfo(kind: string): ResourceInfo | undefined {
  return RESOURCES.find((r) => r.kind === kind);
}

/** The collection path, across namespaces (list/watch) or in one. */
export function collectionPath(r: ResourceInfo, namespace?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return namespace && r.namespaced ? `${base}/namespaces/${namespace}/${r.plural}` : `${base}/${r.plural}`;
}

export function objectPath(r: ResourceInfo, namespace: string | undefined, name: string): string {
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
}

/** The API versions to try for a kind, in order of preference. */
export function versionsOf(r: ResourceInfo): string[] {
  return [r.version, ...(r.fallbackVersions ?? [])];
}

/** `apiVersion` of the stored objects of a kind (its preferred version, whichever served them). */
export function apiVersionOf(r: ResourceInfo): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** The internal fact that says which version of a kind's API the cluster serves; `undefined`: none. */
export function servedAPI(r: ResourceInfo, version: string | undefined): ServedAPI {
  return {
    apiVersion: 'turnpike.dev/internal',
    kind: 'ServedAPI',
    metadata: { name: r.group ? `${r.plural}.${r.group}` : r.plural },
    status: version === undefined ? { served: false } : { served: true, version },
  };
}
