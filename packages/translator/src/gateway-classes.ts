// GatewayClass: ours when controllerName matches. Accepted unless its parametersRef is
// missing or of the wrong kind or scope (InvalidParameters).
import { CONTROLLER_NAME, TURNPIKE_GROUP, type GatewayClass, type ProxyConfig } from '@turnpike/api';
import type { Problem } from './conditions.js';
import type { ClassModel } from './model.js';
import { getObject, listObjects, type Snapshot } from './snapshot.js';

export function resolveClassParameters(snapshot: Snapshot, gc: GatewayClass): { proxyConfig?: ProxyConfig; problem?: Problem } {
  const ref = gc.spec?.parametersRef;
  if (!ref) return {};
  if (ref.group !== TURNPIKE_GROUP || ref.kind !== 'ProxyConfig') {
    return { problem: { reason: 'InvalidParameters', message: `spec.parametersRef: kind ${ref.group}/${ref.kind} is not supported, use ${TURNPIKE_GROUP}/ProxyConfig` } };
  }
  if (!ref.namespace) {
    return { problem: { reason: 'InvalidParameters', message: 'spec.parametersRef.namespace must be set: ProxyConfig is namespaced' } };
  }
  const pc = getObject<ProxyConfig>(snapshot, 'ProxyConfig', ref.namespace, ref.name);
  if (!pc) return { problem: { reason: 'InvalidParameters', message: `spec.parametersRef: ProxyConfig ${ref.namespace}/${ref.name} not found` } };
  return { proxyConfig: pc };
}

export interface ClassResult { model: ClassModel; problem?: Problem }

export function processClasses(snapshot: Snapshot, controllerName = CONTROLLER_NAME): Map<string, ClassResult> {
  const out = new Map<string, ClassResult>();
  for (const gc of listObjects<GatewayClass>(snapshot, 'GatewayClass')) {
    if (gc.spec?.controllerName !== controllerName) continue;
    const { proxyConfig, problem } = resolveClassParameters(snapshot, gc);
    const model: ClassModel = { object: gc, accepted: !problem };
    if (proxyConfig) model.proxyConfig = proxyConfig;
    out.set(gc.metadata.name, problem ? { model, problem } : { model });
  }
  return out;
}

/** Features this implementation serves, published on every class we accept (sorted). */
export const SUPPORTED_FEATURES = [
  'BackendTLSPolicy', 'GRPCRoute', 'Gateway', 'GatewayAddressEmpty', 'GatewayInfrastructurePropagation', 'GatewayPort8080',
  'HTTPRoute', 'HTTPRouteBackendTimeout', 'HTTPRouteDestinationPortMatching', 'HTTPRouteHostRewrite', 'HTTPRouteMethodMatching',
  'HTTPRouteParentRefPort', 'HTTPRoutePathRedirect', 'HTTPRoutePathRewrite', 'HTTPRoutePortRedirect', 'HTTPRouteQueryParamMatching',
  'HTTPRouteRequestMirror', 'HTTPRouteRequestMultipleMirrors', 'HTTPRouteRequestPercentageMirror', 'HTTPRouteRequestTimeout',
  'HTTPRouteResponseHeaderModification', 'HTTPRouteSchemeRedirect', 'ListenerSet', 'ReferenceGrant', 'TCPRoute', 'TLSRoute',
  'TLSRouteModeTerminate', 'UDPRoute',
].sort();
