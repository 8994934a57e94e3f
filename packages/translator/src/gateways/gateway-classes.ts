// GatewayClass: ours when controllerName matches. Accepted unless its parametersRef is
// missing or of the wrong kind or scope (InvalidParameters).
import { TURNPIKE_GROUP, type GatewayClass, type ProxyConfig } from '@turnpike/api';
import { clusterTrustBundleServed } from '../policies/ca-certificate-refs.js';
import type { Problem } from '../status/conditions.js';
import type { ClassModel } from '../model.js';
import type { Inputs } from '../incremental/inputs.js';

export function resolveClassParameters(
  inputs: Inputs,
  gc: GatewayClass,
): { proxyConfig?: ProxyConfig; problem?: Problem } {
  const ref = gc.spec?.parametersRef;
  if (!ref) return {};
  if (ref.group !== TURNPIKE_GROUP || ref.kind !== 'ProxyConfig') {
    return {
      problem: {
        reason: 'InvalidParameters',
        message: `spec.parametersRef: kind ${ref.group}/${ref.kind} is not supported, use ${TURNPIKE_GROUP}/ProxyConfig`,
      },
    };
  }
  if (!ref.namespace) {
    return {
      problem: {
        reason: 'InvalidParameters',
        message: 'spec.parametersRef.namespace must be set: ProxyConfig is namespaced',
      },
    };
  }
  const pc = inputs.get<ProxyConfig>('ProxyConfig', ref.namespace, ref.name);
  if (!pc)
    return {
      problem: {
        reason: 'InvalidParameters',
        message: `spec.parametersRef: ProxyConfig ${ref.namespace}/${ref.name} not found`,
      },
    };
  return { proxyConfig: pc };
}

export interface ClassResult {
  model: ClassModel;
  problem?: Problem;
  /** What its status.supportedFeatures lists (sorted). */
  supportedFeatures: readonly string[];
}

/** One GatewayClass of ours: accepted unless its parametersRef does not resolve. */
export function processClass(inputs: Inputs, gc: GatewayClass): ClassResult {
  const { proxyConfig, problem } = resolveClassParameters(inputs, gc);
  const model: ClassModel = { object: gc, accepted: !problem };
  if (proxyConfig) model.proxyConfig = proxyConfig;
  const supportedFeatures = featuresFor(clusterTrustBundleServed(inputs));
  return problem ? { model, problem, supportedFeatures } : { model, supportedFeatures };
}

/**
 * Features this implementation serves (sorted), published on every class we accept; ClusterTrustBundle
 * only where the cluster serves its API (featuresFor).
 */
export const SUPPORTED_FEATURES = [
  'BackendTLSPolicy',
  'BackendTLSPolicySANValidation',
  'ClusterTrustBundle',
  'GRPCRoute',
  'GRPCRouteNamedRouteRule',
  'GRPCRouteRequestHeaderModifier',
  'Gateway',
  'GatewayAddressEmpty',
  // GEP-5093 (experimental): static-addresses.ts.
  'GatewayAddressRoutability',
  'GatewayAddressRoutabilityCluster',
  'GatewayBackendClientCertificate',
  'GatewayFrontendClientCertificateValidation',
  'GatewayFrontendClientCertificateValidationInsecureFallback',
  'GatewayHTTPListenerIsolation',
  'GatewayHTTPSListenerDetectMisdirectedRequests',
  'GatewayInfrastructure',
  // GEP-5224 (experimental): ExternalAuth and ExtensionRef before routing (gateways/listener-filters.ts).
  'GatewayListenerFilters',
  'GatewayPort8080',
  'GatewayRouteHostnameIntersectionPrecedence',
  'GatewayStaticAddresses',
  'HTTPRoute',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'HTTPRouteBackendProtocolH2C',
  'HTTPRouteBackendProtocolWebSocket',
  'HTTPRouteBackendRequestHeaderModification',
  'HTTPRouteBackendTimeout',
  'HTTPRouteBackendURLRewrite',
  'HTTPRouteCORS',
  'HTTPRouteDestinationPortMatching',
  'HTTPRouteHostRewrite',
  'HTTPRouteMethodMatching',
  'HTTPRouteNamedRouteRule',
  'HTTPRouteParentRefPort',
  'HTTPRoutePathRedirect',
  'HTTPRoutePathRewrite',
  'HTTPRoutePortRedirect',
  'HTTPRouteQueryParamMatching',
  'HTTPRouteRequestMirror',
  'HTTPRouteRequestMultipleMirrors',
  'HTTPRouteRequestPercentageMirror',
  'HTTPRouteRequestTimeout',
  'HTTPRouteResponseHeaderModification',
  'HTTPRouteRetryCodes',
  'HTTPRouteRetryConnectionError',
  'HTTPRouteSchemeRedirect',
  'ListenerSet',
  'ReferenceGrant',
  'TCPRoute',
  'TLSRoute',
  'TLSRouteModeMixed',
  'TLSRouteModeTerminate',
  'UDPRoute',
].sort();

const WITHOUT_CLUSTER_TRUST_BUNDLE = SUPPORTED_FEATURES.filter((f) => f !== 'ClusterTrustBundle');

/**
 * The features a class lists, given whether the cluster serves ClusterTrustBundle. GEP-5075: the
 * feature is advertised "only when the API is present, so that the reported feature set reflects
 * the cluster, not just the binary".
 */
export function featuresFor(clusterTrustBundleServed: boolean): readonly string[] {
  return clusterTrustBundleServed ? SUPPORTED_FEATURES : WITHOUT_CLUSTER_TRUST_BUNDLE;
}
