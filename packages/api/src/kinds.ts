import type { KubeObject } from './meta.js';
// The kinds Turnpike watches, with the group each belongs to, and the order they are listed in.
import { GATEWAY_GROUP } from './gateway-api.js';
import { TURNPIKE_GROUP } from './turnpike.js';
import { TELEMETRY_POLICY_GROUP } from './telemetry-policy.js';
import { X_GATEWAY_GROUP } from './xbackend.js';

/** The group of ClusterTrustBundle (GEP-5075: the only group a caCertificateRef to one may name). */
export const CLUSTER_TRUST_BUNDLE_GROUP = 'certificates.k8s.io';

interface KindInfo {
  /** API group ('' for the core group). */
  group: string;
  /** No namespace. */
  clusterScoped?: true;
  /** The controller writes its status. */
  ownsStatus?: true;
}

/** Every kind Turnpike watches, in the order they are listed, with what the rest of the code needs to know of it. */
const KINDS = {
  GatewayClass: { group: GATEWAY_GROUP, clusterScoped: true, ownsStatus: true },
  Gateway: { group: GATEWAY_GROUP, ownsStatus: true },
  ListenerSet: { group: GATEWAY_GROUP, ownsStatus: true },
  HTTPRoute: { group: GATEWAY_GROUP, ownsStatus: true },
  GRPCRoute: { group: GATEWAY_GROUP, ownsStatus: true },
  TLSRoute: { group: GATEWAY_GROUP, ownsStatus: true },
  TCPRoute: { group: GATEWAY_GROUP, ownsStatus: true },
  UDPRoute: { group: GATEWAY_GROUP, ownsStatus: true },
  BackendTLSPolicy: { group: GATEWAY_GROUP, ownsStatus: true },
  ReferenceGrant: { group: GATEWAY_GROUP },
  // GEP-4768: tracing for the Gateways it targets (its status: one ancestor per targeted Gateway).
  XTelemetryPolicy: { group: TELEMETRY_POLICY_GROUP, ownsStatus: true },
  Service: { group: '' },
  // GEP-4894: a backendRef target that is not a Service (its status: the Gateways that use it).
  XBackend: { group: X_GATEWAY_GROUP, ownsStatus: true },
  EndpointSlice: { group: 'discovery.k8s.io' },
  // Only for XBackends of type EndpointSelector; slimmed at the edge (pod.ts, slimPod).
  Pod: { group: '' },
  Secret: { group: '' },
  Namespace: { group: '', clusterScoped: true },
  ConfigMap: { group: '' },
  ClusterTrustBundle: { group: CLUSTER_TRUST_BUNDLE_GROUP, clusterScoped: true },
  // Only the proxy Deployments this controller applies (labelled as ours): their rollout decides
  // whether a plugin is installed (isProxyDeployment).
  Deployment: { group: 'apps' },
  ProxyConfig: { group: TURNPIKE_GROUP, ownsStatus: true },
  PluginInstallation: { group: TURNPIKE_GROUP, ownsStatus: true },
  // What each controller replica's proxies said (read only in the controller's namespace).
  ProxyReport: { group: TURNPIKE_GROUP },
} as const satisfies Record<string, KindInfo>;

export type WatchedKind = keyof typeof KINDS;

export const WATCHED_KINDS = Object.keys(KINDS) as readonly WatchedKind[];

export const KIND_GROUP: Record<WatchedKind, string> = Object.fromEntries(
  WATCHED_KINDS.map((k) => [k, KINDS[k].group]),
) as Record<WatchedKind, string>;

const kindsWhere = (flag: keyof KindInfo) =>
  new Set<string>(WATCHED_KINDS.filter((k) => (KINDS[k] as KindInfo)[flag] === true));

/** Kinds without a namespace. */
export const CLUSTER_SCOPED = kindsWhere('clusterScoped');

/** Kinds whose status the controller writes. */
export const OWNED_STATUS_KINDS = kindsWhere('ownsStatus');

/**
 * Kinds the controller itself feeds into the stream (never read from manifests or the API):
 * PluginFetch carries what the plugin fetch worker got from a registry; ServedAPI carries which
 * version of an API the cluster may lack (ClusterTrustBundle) the API server serves, if any;
 * DigestKey carries the key Secret values are digested under (secret-data.ts, DIGEST_KEY_KIND).
 */
export const INTERNAL_KINDS = ['PluginFetch', 'ServedAPI', 'DigestKey'] as const;

/**
 * Internal (kube source): whether the API server serves an API a cluster may lack, and which version
 * of it. Cluster-scoped, named `<plural>.<group>` (CLUSTER_TRUST_BUNDLE_API). Upserted whenever it
 * changes, never deleted. Without one (files, `translate -f`) the API counts as served: there is no
 * cluster to ask, and files may hold its objects.
 */
export interface ServedAPI extends KubeObject {
  status: { served: boolean; version?: string };
}

/** The ServedAPI that says whether ClusterTrustBundles exist in this cluster (GEP-5075, "API Availability"). */
export const CLUSTER_TRUST_BUNDLE_API = 'clustertrustbundles.certificates.k8s.io';

/**
 * A bundle of CA certificates published cluster-wide (certificates.k8s.io: v1 since Kubernetes 1.37,
 * v1beta1 before; the same fields in both, stored as v1).
 */
export interface ClusterTrustBundle extends KubeObject {
  spec: { signerName?: string; trustBundle: string };
}

export const ROUTE_KINDS = ['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute'] as const;
export type RouteKind = (typeof ROUTE_KINDS)[number];

export function isWatchedKind(kind: string): kind is WatchedKind {
  return (WATCHED_KINDS as readonly string[]).includes(kind);
}

/** Labels of every proxy object the controller applies (the Deployment among them). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';
/** Tells apart two Gateways of one name whose proxies share a namespace (and their pod selectors). */
export const GATEWAY_NAMESPACE_LABEL = 'turnpike.dev/gateway-namespace';

/** A Deployment that runs a Gateway's proxies and that we applied: the only Deployments we read. */
export function isProxyDeployment(o: KubeObject): boolean {
  const labels = o.metadata.labels ?? {};
  return o.kind === 'Deployment' && labels[MANAGED_BY_LABEL] === 'turnpike' && !!labels[GATEWAY_NAME_LABEL];
}

/** Whether an object of a file or a cluster is input: a watched kind, and of Deployments only ours. */
export function isInputObject(o: KubeObject): boolean {
  return isWatchedKind(o.kind) && (o.kind !== 'Deployment' || isProxyDeployment(o));
}

/** `kind/namespace/name`, the identity used across the engine, logs and diffs. */
export function objectKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}
