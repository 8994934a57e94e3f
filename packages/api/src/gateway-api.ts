// The subset of Gateway API v1.7 (standard and experimental channels) the translator reads.
// Hand-written so the names read like the spec; fields we do not use are left out.
import type { Condition, KubeObject, LabelSelector } from './meta.js';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

export interface ParametersReference {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface GatewayClass extends KubeObject {
  spec: { controllerName: string; parametersRef?: ParametersReference; description?: string };
  status?: { conditions?: Condition[]; supportedFeatures?: { name: string }[] };
}

export interface SecretObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

export interface GatewayTLSConfig {
  mode?: 'Terminate' | 'Passthrough';
  certificateRefs?: SecretObjectReference[];
  options?: Record<string, string>;
  frontendValidation?: { caCertificateRefs?: SecretObjectReference[]; mode?: string };
}

export interface RouteGroupKind {
  group?: string;
  kind: string;
}

export interface AllowedRoutes {
  namespaces?: { from?: 'All' | 'Same' | 'Selector'; selector?: LabelSelector };
  kinds?: RouteGroupKind[];
}

export interface Listener {
  name: string;
  hostname?: string;
  port: number;
  protocol: string;
  tls?: GatewayTLSConfig;
  allowedRoutes?: AllowedRoutes;
  /** Pre-routing filters (v1.7 experimental, GEP-5224): run on every request before route matching. */
  filters?: { requests?: ListenerFilter[] };
}

/** One pre-routing filter of a listener (GEP-5224); its payloads are HTTPRouteFilter's. */
export interface ListenerFilter {
  type: 'ExternalAuth' | 'ExtensionRef' | string;
  externalAuth?: HTTPExternalAuthFilter;
  extensionRef?: { group: string; kind: string; name: string };
}

/** HTTPRouteFilter's ExternalAuth payload (GEP-1494), as ListenerFilter reuses it. */
export interface HTTPExternalAuthFilter {
  protocol: 'HTTP' | 'GRPC' | string;
  backendRef: BackendRef;
  grpc?: { allowedHeaders?: string[] };
  http?: { path?: string; allowedHeaders?: string[]; allowedResponseHeaders?: string[] };
  forwardBody?: { maxSize?: number };
}

export interface GatewayAddress {
  type?: string;
  value?: string;
  /** v1.7 experimental (GEP-5093): empty for the default scope, `Cluster`, or a prefixed value. */
  routability?: string;
}

export interface Gateway extends KubeObject {
  spec: {
    gatewayClassName: string;
    listeners?: Listener[];
    addresses?: GatewayAddress[];
    infrastructure?: {
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
      parametersRef?: { group: string; kind: string; name: string };
    };
    allowedListeners?: { namespaces?: { from?: 'All' | 'Same' | 'Selector' | 'None'; selector?: LabelSelector } };
    tls?: {
      backend?: { clientCertificateRef?: SecretObjectReference };
      frontend?: {
        default?: { validation?: FrontendValidation };
        perPort?: { port: number; tls: { validation?: FrontendValidation } }[];
      };
    };
  };
  status?: GatewayStatus;
}

export interface FrontendValidation {
  caCertificateRefs?: SecretObjectReference[];
  mode?: string;
}

export interface ListenerStatus {
  name: string;
  supportedKinds: RouteGroupKind[];
  attachedRoutes: number;
  conditions: Condition[];
}

export interface GatewayStatus {
  addresses?: GatewayAddress[];
  conditions?: Condition[];
  listeners?: ListenerStatus[];
  attachedListenerSets?: number;
}

export interface ListenerSet extends KubeObject {
  spec: { parentRef: { group?: string; kind?: string; name: string; namespace?: string }; listeners: Listener[] };
  status?: { conditions?: Condition[]; listeners?: ListenerStatus[] };
}

export interface ParentReference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export interface BackendRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  port?: number;
  weight?: number;
  filters?: HTTPRouteFilter[];
}

export interface HTTPHeader {
  name: string;
  value: string;
}
export interface HeaderModifier {
  set?: HTTPHeader[];
  add?: HTTPHeader[];
  remove?: string[];
}
export interface HTTPPathModifier {
  type: 'ReplaceFullPath' | 'ReplacePrefixMatch' | string;
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}

export interface HTTPRouteFilter {
  type: string;
  requestHeaderModifier?: HeaderModifier;
  responseHeaderModifier?: HeaderModifier;
  requestRedirect?: { scheme?: string; hostname?: string; path?: HTTPPathModifier; port?: number; statusCode?: number };
  urlRewrite?: { hostname?: string; path?: HTTPPathModifier };
  requestMirror?: { backendRef: BackendRef; percent?: number; fraction?: { numerator: number; denominator?: number } };
  cors?: {
    allowOrigins?: string[];
    allowMethods?: string[];
    allowHeaders?: string[];
    exposeHeaders?: string[];
    allowCredentials?: boolean;
    maxAge?: number;
  };
  extensionRef?: { group: string; kind: string; name: string };
}

export interface HTTPRouteMatch {
  path?: { type?: 'Exact' | 'PathPrefix' | 'RegularExpression' | string; value?: string };
  headers?: { type?: 'Exact' | 'RegularExpression' | string; name: string; value: string }[];
  queryParams?: { type?: 'Exact' | 'RegularExpression' | string; name: string; value: string }[];
  method?: string;
}

export interface HTTPRouteRule {
  name?: string;
  matches?: HTTPRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: BackendRef[];
  timeouts?: { request?: string; backendRequest?: string };
  retry?: { codes?: number[]; attempts?: number; backoff?: string };
  /** Experimental, deprecated in v1.7 for the XBackend's (GEP-4894); not implemented: the rule is refused. */
  sessionPersistence?: Record<string, unknown>;
}

export interface RouteParentStatus {
  parentRef: ParentReference;
  controllerName: string;
  conditions: Condition[];
}

export interface RouteStatus {
  parents: RouteParentStatus[];
}

export interface HTTPRoute extends KubeObject {
  spec: { parentRefs?: ParentReference[]; hostnames?: string[]; rules?: HTTPRouteRule[] };
  status?: RouteStatus;
}

export interface GRPCRouteMatch {
  method?: { type?: 'Exact' | 'RegularExpression' | string; service?: string; method?: string };
  headers?: { type?: 'Exact' | 'RegularExpression' | string; name: string; value: string }[];
}

export interface GRPCRouteRule {
  name?: string;
  matches?: GRPCRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: BackendRef[];
  /** As HTTPRouteRule's: refused. */
  sessionPersistence?: Record<string, unknown>;
}

export interface GRPCRoute extends KubeObject {
  spec: { parentRefs?: ParentReference[]; hostnames?: string[]; rules?: GRPCRouteRule[] };
  status?: RouteStatus;
}

export interface L4RouteRule {
  name?: string;
  backendRefs?: BackendRef[];
}

export interface TLSRoute extends KubeObject {
  spec: { parentRefs?: ParentReference[]; hostnames?: string[]; rules?: L4RouteRule[] };
  status?: RouteStatus;
}
export interface TCPRoute extends KubeObject {
  spec: { parentRefs?: ParentReference[]; rules?: L4RouteRule[] };
  status?: RouteStatus;
}
export interface UDPRoute extends KubeObject {
  spec: { parentRefs?: ParentReference[]; rules?: L4RouteRule[] };
  status?: RouteStatus;
}

export interface ReferenceGrant extends KubeObject {
  spec: {
    from: { group: string; kind: string; namespace: string }[];
    to: { group: string; kind: string; name?: string }[];
  };
}

export interface PolicyTargetReferenceWithSectionName {
  group: string;
  kind: string;
  name: string;
  sectionName?: string;
}

export interface PolicyAncestorStatus {
  ancestorRef: ParentReference;
  controllerName: string;
  conditions: Condition[];
}

export interface BackendTLSPolicy extends KubeObject {
  spec: {
    targetRefs: PolicyTargetReferenceWithSectionName[];
    validation: {
      caCertificateRefs?: { group: string; kind: string; name: string }[];
      wellKnownCACertificates?: string;
      hostname: string;
      subjectAltNames?: { type: 'Hostname' | 'URI'; hostname?: string; uri?: string }[];
    };
    options?: Record<string, string>;
  };
  status?: { ancestors: PolicyAncestorStatus[] };
}
