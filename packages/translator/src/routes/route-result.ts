// What translating one route yields, whatever its kind.
import type { BackendRef, KubeObject } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import type { ClusterIR, HTTPRouteIR, L4RouteIR } from '@turnpike/api';
import type { ParentAttachment } from './attachment.js';
import { flat } from '../compact-values.js';

export interface RouteResult {
  object: KubeObject;
  kind: string;
  parents: ParentAttachment[];
  /** Every rule is invalid: Accepted=False with this reason. */
  invalid?: Problem;
  /** Some rules are invalid: PartiallyInvalid=True. */
  partiallyInvalid?: Problem;
  /** Backends with no ready endpoint: BackendsAvailable=False. */
  unavailable?: Problem;
  /** First reference that does not resolve: ResolvedRefs=False. */
  unresolved?: Problem;
  http?: HTTPRouteIR[];
  l4?: L4RouteIR;
  clusters: ClusterIR[];
  /** Every backendRef considered and what became of it (for `explain`). */
  backendVerdicts?: BackendVerdict[];
  /** BackendTLSPolicies (`namespace/name`) that apply to this route's backends. */
  backendTLSPolicies?: string[];
  /**
   * Matches that cannot be compiled (an RE2 error, an unknown type): left out of the configuration, they
   * serve nothing, and what they would match goes to whatever else matches it (for `explain`).
   */
  leftOut?: { rule: number; match: number; problem: Problem }[];
  /** BackendTLSPolicies whose sectionName names no port of a Service this route sends to (not attached). */
  detachedTLSPolicies?: string[];
  /**
   * PluginInstallations (`namespace/name`) its ExtensionRef filters name and may use, fetched or not
   * (plugins/plugin-uses.ts): what it uses is known before the plugin is fetched.
   */
  plugins?: string[];
  /** XBackends (`namespace/name`) this route's backendRefs reached, and the first problem with each. */
  xbackends?: { key: string; problem?: Problem }[];
}

export interface BackendVerdict {
  field: string;
  ref: string;
  weight: number;
  cluster?: string;
  problem?: Problem;
}

export function noteBackend(result: RouteResult, v: BackendVerdict): void {
  (result.backendVerdicts ??= []).push(v);
}

export function notePolicy(
  result: RouteResult,
  {
    policy,
    detachedPolicies,
    xbackend,
    problem,
  }: { policy?: string; detachedPolicies?: readonly string[]; xbackend?: string; problem?: Problem },
): void {
  if (xbackend) {
    const l = (result.xbackends ??= []);
    const seen = l.find((x) => x.key === xbackend);
    if (!seen) l.push(problem ? { key: xbackend, problem } : { key: xbackend });
    else if (problem) seen.problem ??= problem;
  }
  if (policy) {
    const l = (result.backendTLSPolicies ??= []);
    if (!l.includes(policy)) l.push(policy);
  }
  for (const p of detachedPolicies ?? []) {
    const l = (result.detachedTLSPolicies ??= []);
    if (!l.includes(p)) l.push(p);
  }
}

/** Notes the PluginInstallations (`namespace/name`) a filter list of the route uses. */
export function notePlugins(result: RouteResult, plugins: readonly string[] | undefined): void {
  for (const p of plugins ?? []) {
    const l = (result.plugins ??= []);
    if (!l.includes(p)) l.push(p);
  }
}

export function verdictOf(
  field: string,
  ref: BackendRef,
  route: KubeObject,
  r: { backend?: { cluster: ClusterIR }; problem?: Problem },
): BackendVerdict {
  const v: BackendVerdict = {
    field: flat(field),
    ref: flat(
      `${ref.kind ?? 'Service'} ` +
        `${ref.namespace ?? route.metadata.namespace}/${ref.name}${ref.port !== undefined ? ':' + ref.port : ''}`,
    ),
    weight: ref.weight ?? 1,
  };
  if (r.problem) v.problem = r.problem;
  if (r.backend) v.cluster = r.backend.cluster.name;
  return v;
}
