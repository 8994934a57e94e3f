// Condition reasons. Those of the Gateway API are spelt as its apis/v1 types name them; ours follow.
// `condition()` and `Problem` take only these, so a misspelt reason is a compile error.

/** Reasons the Gateway API defines (GatewayClass, Gateway, listener, route, policy, ListenerSet). */
export const GATEWAY_API_REASONS = [
  'Accepted',
  'AddressNotAssigned',
  'AddressNotUsable',
  // AddressesAssigned (v1.7 experimental, GEP-5093; its reasons are the Go constants' values).
  'AddressesAssigned',
  'Attached',
  'BackendNotFound',
  'ConfigurationChanged',
  'Conflicted',
  'HostnameConflict',
  'IncompatibleFilters',
  'Invalid',
  'InvalidCACertificateKind',
  'InvalidCACertificateRef',
  'InvalidCertificateRef',
  'InvalidClientCertificateRef',
  'InvalidKind',
  // Listener filters (v1.7 experimental, GEP-5224 "Status Reporting"; not yet Go constants in v1.7.0).
  'InvalidListenerFilter',
  'InvalidListenerFilterOrder',
  'InvalidListenerFilterRef',
  'InvalidParameters',
  'InvalidRouteKinds',
  'ListenerConflict',
  'ListenersNotReady',
  'ListenersNotResolved',
  'ListenersNotValid',
  'NoConflicts',
  'NoMatchingListenerHostname',
  'NoMatchingParent',
  'NoResources',
  'NoValidCACertificate',
  'NotAllowed',
  'NotAllowedByListeners',
  'NotAssigned',
  'NotReconciled',
  'OverlappingCertificates',
  'OverlappingHostnames',
  'ParentNotAccepted',
  'PartiallyAssigned',
  'Pending',
  'PortUnavailable',
  'Programmed',
  'ProtocolConflict',
  'Ready',
  'RefNotPermitted',
  'ResolvedRefs',
  'Scheduled',
  'SupportedVersion',
  'TargetNotFound',
  'TooManyListeners',
  'Unsupported',
  'UnsupportedAddress',
  'UnsupportedProtocol',
  'UnsupportedValue',
  'UnsupportedVersion',
  'Waiting',
] as const;

/** Reasons of our own conditions and of Gateway API conditions the spec leaves to implementations. */
export const TURNPIKE_REASONS = [
  // Route conditions BackendsAvailable and RouteRulesOverlap (implementation-specific in the spec).
  'BackendsAvailable',
  'EndpointsNotFound',
  'RouteRulesOverlap',
  // A route backend whose BackendTLSPolicy cannot be used; an ancestor list that is full.
  'InvalidBackendTLSPolicy',
  'Aggregated',
  // turnpike.dev/ConfigRejected and turnpike.dev/ProxiesInSync, from the proxies.
  'Rejected',
  // turnpike.dev/ConfigWithheld, from the serving path's last check.
  'RefusedByEnvoyRules',
  'InSync',
  'Behind',
  // PluginInstallation and ProxyConfig conditions (Fetched, Installed) and plugin references.
  'Fetched',
  'Installed',
  // Installed=False and turnpike.dev/PluginsInstalled=False while the proxies do not run a plugin yet.
  'RolloutInProgress',
  'RolloutHeld',
  'RolloutFailed',
  'InvalidImage',
  'InvalidPullSecret',
  'PluginNotFound',
  'PluginNotFetched',
  // Fetched=False: nothing uses the plugin, so it is not fetched.
  'NotUsed',
  'FetchFailed',
  'NotFound',
  'Unauthorized',
  'TooLarge',
  'InvalidArtifact',
  'SignatureMissing',
  'SignatureInvalid',
] as const;

export type Reason = (typeof GATEWAY_API_REASONS)[number] | (typeof TURNPIKE_REASONS)[number];
