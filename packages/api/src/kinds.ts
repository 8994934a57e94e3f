import type { KubeObject } from './meta.js';
// The kinds Turnpike watches, with the group each belongs to, and the order they are listed in.
import { GATEWAY_GROUP } from './gateway-api.js';
import { TURNPIKE_GROUP } from './turnpike.js';

export const WATCHED_KINDS = [
  'GatewayClass',
  'Gateway',
  'ListenerSet',
  'HTTPRoute',
  'GRPCRoute',
  'TLSRoute',
  'TCPRoute',
  'UDPRoute',
  'BackendTLSPolicy',
  'ReferenceGrant',
  'Service',
  'EndpointSlice',
  'Secret',
  'Namespace',
  'ConfigMap',
  'ClusterTrustBundle',
  'ProxyConfig',
  'PluginInstallation',
] as const;

export type WatchedKind = (typeof WATCHED_KINDS)[number];

export const KIND_GROUP: Record<WatchedKind, string> = {
  GatewayClass: GATEWAY_GROUP,
  Gateway: GATEWAY_GROUP,
  ListenerSet: GATEWAY_GROUP,
  HTTPRoute: GATEWAY_GROUP,
  GRPCRoute: GATEWAY_GROUP,
  TLSRoute: GATEWAY_GROUP,
  TCPRoute: GATEWAY_GROUP,
  UDPRoute: GATEWAY_GROUP,
  BackendTLSPolicy: GATEWAY_GROUP,
  ReferenceGrant: GATEWAY_GROUP,
  Service: '',
  EndpointSlice: 'discovery.k8s.io',
  Secret: '',
  Namespace: '',
  ConfigMap: '',
  ClusterTrustBundle: 'certificates.k8s.io',
  ProxyConfig: TURNPIKE_GROUP,
  PluginInstallation: TURNPIKE_GROUP,
};

/**
 * Kinds the controller itself feeds into the stream (never read from manifests or the API):
 * ProxyStatus carries what the xDS server learned from a Gateway's proxies (a rejected config);
 * PluginFetch carries what the plugin fetch worker got from a registry.
 */
export const INTERNAL_KINDS = ['ProxyStatus', 'PluginFetch'] as const;

/**
 * What a Gateway's proxies told the xDS server: a configuration they rejected (NACK; cleared when a
 * newer one is accepted), and how many are connected and which have not acknowledged the current one.
 */
export interface ProxyStatus extends KubeObject {
  status: {
    rejected?: { typeUrl: string; version: string; message: string; node: string };
    sync?: { connected: number; behind: string[] };
  };
}

/** Kinds without a namespace. */
export const CLUSTER_SCOPED = new Set<string>(['GatewayClass', 'Namespace', 'ClusterTrustBundle']);

/** A bundle of CA certificates published cluster-wide (certificates.k8s.io, beta in Kubernetes 1.33). */
export interface ClusterTrustBundle extends KubeObject {
  spec: { signerName?: string; trustBundle: string };
}

/** Kinds whose status the controller writes. */
export const OWNED_STATUS_KINDS = new Set<string>([
  'GatewayClass',
  'Gateway',
  'ListenerSet',
  'HTTPRoute',
  'GRPCRoute',
  'TLSRoute',
  'TCPRoute',
  'UDPRoute',
  'BackendTLSPolicy',
  'ProxyConfig',
  'PluginInstallation',
]);

export const ROUTE_KINDS = ['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute'] as const;
export type RouteKind = (typeof ROUTE_KINDS)[number];

export function isWatchedKind(kind: string): kind is WatchedKind {
  return (WATCHED_KINDS as readonly string[]).includes(kind);
}

/** `kind/namespace/name`, the identity used across the engine, logs and diffs. */
export function objectKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}
