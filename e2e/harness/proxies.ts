// Where the controller under test puts a Gateway's proxy objects: by default every proxy in its own
// namespace (deploy/'s Role allows writes there only); with deploy/overlays/gateway-namespace, beside
// the Gateway. The names come from the same function the translator uses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { proxyPlacement, type ProxyPlacement } from '@turnpike/translator';
import { parse } from 'yaml';
import { loadYaml, ROOT, type Cluster } from './cluster.js';

export const CONTROLLER_NAMESPACE = 'turnpike-system';

export function proxyObjectsOf(namespace: string, gateway: string, besideGateway = false): ProxyPlacement {
  return proxyPlacement(namespace, gateway, besideGateway ? undefined : CONTROLLER_NAMESPACE);
}

const OVERLAY = join(ROOT, 'deploy/overlays/gateway-namespace');

/** The values deploy/overlays/gateway-namespace's JSON patch appends to the controller's arguments. */
export function gatewayNamespaceArgs(): string[] {
  const ops = parse(readFileSync(join(OVERLAY, 'controller-args.yaml'), 'utf8')) as { op: string; value: string }[];
  return ops.map((o) => o.value);
}

/** Applies the overlay's RBAC (what it adds to deploy/'s). */
export async function applyGatewayNamespaceRbac(c: Cluster): Promise<void> {
  for (const o of loadYaml(join(OVERLAY, 'rbac.yaml'))) await c.apply(o);
}
