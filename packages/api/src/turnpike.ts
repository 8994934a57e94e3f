// Turnpike's own API group, turnpike.dev/v1alpha1.
import type { Condition, KubeObject } from './meta.js';

export const TURNPIKE_GROUP = 'turnpike.dev';
export const TURNPIKE_API_VERSION = 'turnpike.dev/v1alpha1';
export const CONTROLLER_NAME = 'turnpike.dev/gateway-controller';

export interface PluginRef {
  name: string;
  namespace?: string;
}

export interface ProxyConfig extends KubeObject {
  spec: {
    replicas?: number;
    image?: string;
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
    service?: { type?: 'ClusterIP' | 'LoadBalancer' | 'NodePort'; annotations?: Record<string, string> };
    pod?: {
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
      nodeSelector?: Record<string, string>;
      tolerations?: Record<string, unknown>[];
      affinity?: Record<string, unknown>;
      /** A constraint without labelSelector selects the Gateway's proxy Pods. */
      topologySpreadConstraints?: Record<string, unknown>[];
      priorityClassName?: string;
    };
    /** A HorizontalPodAutoscaler for the proxy Deployments, which then leave `replicas` to it. */
    autoscaling?: {
      minReplicas?: number;
      maxReplicas: number;
      targetCPUUtilizationPercentage?: number;
      targetMemoryUtilizationPercentage?: number;
    };
    /** The proxy PodDisruptionBudget (default maxUnavailable 1). */
    disruptionBudget?: { minAvailable?: number | string; maxUnavailable?: number | string };
    /** How a proxy Pod that stops drains first (Gateway API durations: "60s", "1m30s"). */
    shutdown?: { drainTimeout?: string; minDrainDuration?: string };
    metrics?: { enabled?: boolean; podMonitor?: boolean };
    accessLog?: ProxyAccessLog;
    http?: ProxyHttp;
    tags?: Record<string, string>;
    plugins?: PluginRef[];
    proxylessGRPC?: boolean;
    /** How changes that need new proxy Pods reach them. */
    rollout?: {
      /** Keep the proxy Deployments' pod template as it is until released (xDS changes still flow). */
      hold?: boolean;
      /** The Deployments' spec.progressDeadlineSeconds: a rollout stuck this long is reported failed. */
      progressDeadlineSeconds?: number;
    };
  };
  status?: { conditions?: Condition[]; plugins?: { name: string; namespace: string; conditions: Condition[] }[] };
}

/** ProxyConfig.spec.accessLog: JSON lines on stdout unless told otherwise. */
export interface ProxyAccessLog {
  disabled?: boolean;
  format?: 'JSON' | 'Text';
  /** JSON fields to add or replace (an Envoy command operator string); "" removes a default field. */
  json?: Record<string, string>;
  /** The Text format (Envoy's format string). */
  text?: string;
  /** Write to the proxy's stdout (default true). */
  stdout?: boolean;
  /** Also send every entry to an OpenTelemetry collector (OTLP logs over gRPC). */
  openTelemetry?: { backendRef: { name: string; namespace?: string; port: number } };
}

/**
 * ProxyConfig.spec.http: what legitimately differs between deployments of the proxies' HTTP side.
 * The rest of the edge hardening is fixed (xds/src/http-connection-manager.ts, docs/proxies.md).
 */
export interface ProxyHttp {
  /** ALPN protocols HTTPS listeners offer, in order of preference (default h2, http/1.1). */
  alpn?: HttpAlpnProtocol[];
  /** Proxies in front of this one whose X-Forwarded-For entries are trusted for the client's address (default 0). */
  xffNumTrustedHops?: number;
  /** What a request whose path holds %2F or %5C gets (default UnescapeAndRedirect). */
  escapedSlashes?: EscapedSlashesAction;
  /** What a request with an underscore in a header name gets (default RejectRequest). */
  headersWithUnderscores?: HeadersWithUnderscoresAction;
  /** The most request headers may weigh, in KiB (default 60), and their number (default 100). */
  maxRequestHeadersKiB?: number;
  maxRequestHeaders?: number;
  /** Gateway API durations; "0s" turns one off. */
  timeouts?: { requestHeaders?: string; streamIdle?: string; connectionIdle?: string };
}

export type HttpAlpnProtocol = 'h2' | 'http/1.1';
export type EscapedSlashesAction = 'UnescapeAndRedirect' | 'RejectRequest' | 'UnescapeAndForward' | 'KeepUnchanged';
export type HeadersWithUnderscoresAction = 'RejectRequest' | 'DropHeader' | 'Allow';

/** A Gateway annotation that holds the rollout of its proxies, as ProxyConfig.spec.rollout.hold does for all of its Gateways. */
export const ROLLOUT_HOLD_ANNOTATION = 'turnpike.dev/rollout-hold';

/** Who uses a plugin: a ProxyConfig that installs it, or a Gateway whose proxies install it or whose routes run it. */
export interface PluginConsumer {
  group: string;
  kind: 'ProxyConfig' | 'Gateway';
  namespace: string;
  name: string;
}

export interface PluginInstallation extends KubeObject {
  spec: {
    image: string;
    type: 'lua' | 'wasm';
    pullSecretRef?: { name: string; namespace?: string };
    /** Check the artifact's cosign signature with this public key before its content is used. */
    verify?: { publicKeyRef: { kind?: 'Secret' | 'ConfigMap'; name: string; key?: string } };
  };
  status?: {
    conditions?: Condition[];
    observedGeneration?: number;
    digest?: string;
    storage?: { configMap?: string; url?: string; sha256?: string; size?: number };
    /** The first consumers (at most MAX_PLUGIN_CONSUMERS, sorted), and how many there are. */
    consumers?: PluginConsumer[];
    consumerCount?: number;
  };
}

/** The bound on PluginInstallation.status.consumers, as the Gateway API bounds policy ancestors. */
export const MAX_PLUGIN_CONSUMERS = 16;

/** Why a plugin is not fetched (the `Fetched` condition's reason when False). */
export type PluginFetchReason =
  | 'Pending'
  | 'FetchFailed'
  | 'NotFound'
  | 'Unauthorized'
  | 'TooLarge'
  | 'InvalidArtifact'
  | 'RefNotPermitted'
  | 'SignatureMissing'
  | 'SignatureInvalid'
  /** Nothing uses it (the translator's words; the worker fetches nothing for it). */
  | 'NotUsed';

/**
 * Internal (never stored in the cluster): the fetch worker's latest result for one
 * PluginInstallation, same namespace and name. A success carries where the content is stored;
 * the content itself stays out of the stream and is looked up by sha256.
 */
export interface PluginFetch extends KubeObject {
  status: {
    /** The PluginInstallation generation and image this result is for. */
    observedGeneration?: number;
    image: string;
    fetched: boolean;
    reason: 'Fetched' | PluginFetchReason;
    message: string;
    /** The manifest digest the content came from. */
    digest?: string;
    /** sha256 (hex) and size of the plugin file itself. */
    sha256?: string;
    size?: number;
    storage?: { configMap?: string; url?: string };
  };
}
