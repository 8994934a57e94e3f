// Where the controller under test puts a Gateway's proxy objects: by default every proxy in its own
// namespace (deploy/'s Role allows writes there only); with deploy/overlays/gateway-namespace, beside
// the Gateway. The names come from the same function the translator uses.
import { proxyPlacement, type ProxyPlacement } from '@turnpike/translator';

export const CONTROLLER_NAMESPACE = 'turnpike-system';

export function proxyObjectsOf(namespace: string, gateway: string, besideGateway = false): ProxyPlacement {
  return proxyPlacement(namespace, gateway, besideGateway ? undefined : CONTROLLER_NAMESPACE);
}
