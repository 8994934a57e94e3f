// What translating one route yields, whatever its kind.
import type { KubeObject } from '@turnpike/api';
import type { Problem } from '../conditions.js';
import type { ClusterIR, HTTPRouteIR, L4RouteIR } from '../xds-ir.js';
import type { ParentAttachment } from './attachment.js';

export interface RouteResult {
  object: KubeObject;
  kind: string;
  parents: ParentAttachment[];
  /** Every rule is invalid: Accepted=False with this reason. */
  invalid?: Problem;
  /** Some rules are invalid: PartiallyInvalid=True. */
  partiallyInvalid?: Problem;
  /** First reference that does not resolve: ResolvedRefs=False. */
  unresolved?: Problem;
  http?: HTTPRouteIR[];
  l4?: L4RouteIR;
  clusters: ClusterIR[];
  /** BackendTLSPolicies (`namespace/name`) that apply to this route's backends. */
  backendTLSPolicies?: string[];
}

export function notePolicy(result: RouteResult, policy: string | undefined): void {
  if (!policy) return;
  const l = (result.backendTLSPolicies ??= []);
  if (!l.includes(policy)) l.push(policy);
}

