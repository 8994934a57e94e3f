// Intermediate model shared by the translator's stages: accepted classes, gateways and the
// merged listener list of each Gateway (its own listeners, then its ListenerSets').
import type {
  Condition,
  Gateway,
  GatewayClass,
  Listener,
  ListenerSet,
  ProxyConfig,
  RouteGroupKind,
} from '@turnpike/api';
import type { Problem } from './status/conditions.js';
import type { ListenerFilterModel } from './gateways/listener-filters.js';

export interface ClassModel {
  object: GatewayClass;
  accepted: boolean;
  proxyConfig?: ProxyConfig;
}

export interface CertificateModel {
  /** `namespace/name` of the Secret. */
  secret: string;
  fingerprint: string;
  /** sha256 of the served chain and key. */
  sha256: string;
  dnsNames: string[];
}

export interface ListenerModel {
  /** The Gateway this listener serves on. */
  gateway: Gateway;
  /** The object that declares it: the Gateway itself or a ListenerSet. */
  owner: Gateway | ListenerSet;
  ownerKind: 'Gateway' | 'ListenerSet';
  spec: Listener;
  /** Protocol is one we serve; routes may attach (and are counted) even if it is not programmed. */
  attachable: boolean;
  supportedKinds: RouteGroupKind[];
  /** Set when the listener is not accepted. */
  notAccepted?: Problem;
  conflicted?: Problem;
  /** Lost a precedence contest against an earlier listener (ListenerSet merge). */
  lostPrecedence?: boolean;
  refsProblem?: Problem;
  /** refsProblem names invalid certificateRefs, but others are valid and served. */
  someCertificatesInvalid?: boolean;
  overlappingTLS?: Problem;
  certificates: CertificateModel[];
  /** Frontend client validation CA bundle, PEM, when configured and valid. */
  clientCA?: string;
  /** The frontend validation mode is AllowInsecureFallback. */
  clientCAOptional?: boolean;
  /** Pre-routing filters (GEP-5224), resolved, in the listener's order. */
  preRouting?: ListenerFilterModel[];
  /** The PluginInstallations (`namespace/name`) its ExtensionRef filters name, resolved or not. */
  preRoutingPlugins?: string[];
  /**
   * BackendTLSPolicies (`namespace/name`) its ExternalAuth Services fall under, valid or not (`attached`),
   * and those meant for such a Service that name none of its ports (`detached`): the listener's Gateway
   * is among their ancestors, as a route's parent is for its backends.
   */
  preRoutingTLSPolicies?: { attached: string[]; detached: string[] };
}

export interface GatewayModel {
  object: Gateway;
  class: ClassModel;
  proxyConfig?: ProxyConfig;
  /** parametersRef problem on the Gateway itself. */
  parametersProblem?: Problem;
  /** Gateway-level reference problem (spec.tls.backend.clientCertificateRef). */
  refsProblem?: Problem;
  /** spec.tls.backend.clientCertificateRef, resolved: presented to backends that speak TLS. */
  backendClientCertificate?: CertificateModel;
  addressProblem?: Problem;
  /**
   * Why the Gateway is not accepted (parameters, addresses, or no valid listener of its own).
   * A Gateway that is not accepted is not Programmed and its ListenerSets are not served.
   */
  notAccepted?: Problem;
  listeners: ListenerModel[];
  listenerSets: ListenerSetModel[];
}

export interface ListenerSetModel {
  object: ListenerSet;
  gateway?: Gateway;
  notAccepted?: Problem;
  listeners: ListenerModel[];
}

export type { Condition };
