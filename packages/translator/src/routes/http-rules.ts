// Rules of HTTPRoute and GRPCRoute: filters, backends (weighted; invalid ones keep their share
// as 500s), timeouts and retries. A rule whose backends are all invalid answers 500; an invalid
// rule (bad match or filter value) answers 500 and is reported as UnsupportedValue.
import type { BackendRef, HTTPRouteFilter, HTTPRouteRule, KubeObject, ParentReference } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import type { TranslationContext } from '../context.js';
import { validateHostname } from './hostnames.js';
import { attachRoute, type ParentIndex } from './attachment.js';
import type { ClusterIR, HTTPMatchIR, HTTPRouteIR, SessionPersistenceIR, WeightedCluster } from '@turnpike/api';
import { deepEqual } from '../incremental/deep-equal.js';
import { resolveBackend } from './backends.js';
import { flat, fitted } from '../compact-values.js';
import { compileFilters, type CompiledFilters } from './http-filters.js';
import { hoistBackendPathRewrite } from './backend-url-rewrite.js';
import { noteBackend, notePlugins, notePolicy, verdictOf, type RouteResult } from './route-result.js';

const BACKEND_FILTERS = new Set(['RequestHeaderModifier', 'ResponseHeaderModifier', 'URLRewrite']);
const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;

export interface RuleInput {
  name?: string;
  matches: (HTTPMatchIR | Problem)[];
  filters?: HTTPRouteFilter[];
  backendRefs?: BackendRef[];
  timeouts?: HTTPRouteRule['timeouts'];
  retry?: HTTPRouteRule['retry'];
  sessionPersistence?: HTTPRouteRule['sessionPersistence'];
}

/** The route a rule belongs to, and what its rules collect: the clusters they use. */
interface RuleOwner {
  ctx: TranslationContext;
  route: KubeObject;
  kind: string;
  protocol: 'h2' | 'http';
  /** `kind/namespace/name` of the route, lower-case kind: what its rules' IR names start with. */
  namePrefix: string;
  result: RouteResult;
  clusters: Map<string, ClusterIR>;
}

export function translateRules(
  ctx: TranslationContext,
  route: KubeObject,
  kind: string,
  rules: RuleInput[],
  result: RouteResult,
): void {
  const owner: RuleOwner = {
    ctx,
    route,
    kind,
    protocol: kind === 'GRPCRoute' ? 'h2' : 'http',
    namePrefix: `${kind.toLowerCase()}/${route.metadata.namespace}/${route.metadata.name}`,
    result,
    clusters: new Map(),
  };
  const irRoutes: HTTPRouteIR[] = [];
  let invalidRules = 0;
  rules.forEach((rule, ruleIndex) => {
    const field = `spec.rules[${ruleIndex}]`;
    const filters = compileFilters(ctx, route, kind, rule.filters, `${field}.filters`);
    for (const cluster of filters.clusters) owner.clusters.set(cluster.name, cluster);
    if (filters.unresolved) result.unresolved ??= filters.unresolved;
    if (filters.droppedMirror) result.unresolved ??= filters.droppedMirror;
    notePlugins(result, filters.plugins);
    const backends = ruleBackends(owner, rule, field);
    const backendRewrite = hoistBackendPathRewrite(rule.backendRefs ?? [], filters, backends.backends, field);
    // The first problem in the order the fields are written names the rule's.
    const invalid =
      rule.matches.find((m): m is Problem => 'reason' in m) ??
      filters.invalid ??
      ruleFieldProblem(rule, rules, ruleIndex, field) ??
      backends.invalid ??
      backendRewrite;
    if (invalid) invalidRules++;
    rule.matches.forEach((match, matchIndex) => {
      // A match that cannot be compiled serves nothing: answering it as `PathPrefix /` would
      // shadow every other route's `/` on the host. The rule's valid matches answer 500.
      if ('reason' in match) {
        (result.leftOut ??= []).push({ rule: ruleIndex, match: matchIndex, problem: match });
        return;
      }
      irRoutes.push(matchRoute(owner, rule, ruleIndex, match, matchIndex, filters, backends, invalid));
    });
    if (invalid) noteInvalidRule(result, invalid);
  });
  if (rules.length > 0 && invalidRules === rules.length) {
    result.invalid = result.partiallyInvalid;
    delete result.partiallyInvalid;
  }
  result.http = fitted(irRoutes);
  result.clusters = [...owner.clusters.values()];
  if (result.backendVerdicts) result.backendVerdicts = fitted(result.backendVerdicts);
}

/** Every invalid rule is named (the first one's reason stands for all). */
function noteInvalidRule(result: RouteResult, invalid: Problem): void {
  result.partiallyInvalid = result.partiallyInvalid
    ? { reason: result.partiallyInvalid.reason, message: `${result.partiallyInvalid.message}; ${invalid.message}` }
    : invalid;
}

/** A rule's own fields: retry, a unique name, Gateway API durations as timeouts, no session persistence. */
function ruleFieldProblem(
  rule: RuleInput,
  rules: readonly RuleInput[],
  ruleIndex: number,
  field: string,
): Problem | undefined {
  const retry = retryProblem(rule.retry, `${field}.retry`);
  if (retry) return retry;
  // Route-inline sessionPersistence (experimental) is not implemented, and v1.7 deprecates it ("Deprecated:
  // use the Backend resource for session persistence (GEP-4894)"). Serving the rule without it would
  // silently drop the stickiness its author asked for: it is refused as an unsupported value, as the spec
  // asks of a field an implementation cannot honour (HTTPRouteRetry.backoff: "MUST set the Accepted
  // Condition for the Route to `status: False` with a Reason of `UnsupportedValue` when this field is set").
  if (rule.sessionPersistence !== undefined && rule.sessionPersistence !== null)
    return {
      reason: 'UnsupportedValue',
      message:
        `${field}.sessionPersistence: route-inline session persistence is not supported (deprecated in Gateway ` +
        `API v1.7 for the backend's, GEP-4894); remove it, the rule answers 500 until then`,
    };
  const firstWithName = rule.name === undefined ? ruleIndex : rules.findIndex((other) => other.name === rule.name);
  if (firstWithName !== ruleIndex) {
    return {
      reason: 'UnsupportedValue',
      message: `${field}.name: "${rule.name}" is already the name of spec.rules[${firstWithName}]; rule names must be unique`,
    };
  }
  for (const timeout of ['request', 'backendRequest'] as const) {
    const value = rule.timeouts?.[timeout];
    if (value !== undefined && !DURATION.test(value as string))
      return {
        reason: 'UnsupportedValue',
        message: `${field}.timeouts.${timeout}: "${value}" is not a Gateway API duration`,
      };
  }
  return undefined;
}

/**
 * Per-backend filters the proxy applies: header changes and a host rewrite per weighted cluster, a
 * path rewrite per route when every backend asks for it alike (backend-url-rewrite.ts).
 */
function backendFilterProblem(ref: BackendRef, field: string): Problem | undefined {
  const unsupported = (ref.filters ?? []).findIndex((filter) => !BACKEND_FILTERS.has(filter.type));
  if (unsupported < 0) return undefined;
  return {
    reason: 'UnsupportedValue',
    message:
      `${field}.filters[${unsupported}]: ${ref.filters![unsupported]!.type} is not supported on a backendRef ` +
      `(RequestHeaderModifier, ResponseHeaderModifier, URLRewrite)`,
  };
}

interface RuleBackends {
  backends: WeightedCluster[];
  /** The session persistence of the rule's XBackends (one per rule: Envoy's is per route), and whose it is. */
  session?: { ir: SessionPersistenceIR; of: string };
  /** The weight of backends that do not resolve: their share of requests answers 500. */
  invalidWeight: number;
  /** A backendRef filter with an invalid value. */
  invalid?: Problem;
}

function ruleBackends(owner: RuleOwner, rule: RuleInput, field: string): RuleBackends {
  const { ctx, route, kind, result, clusters } = owner;
  const out: RuleBackends = { backends: [], invalidWeight: 0 };
  (rule.backendRefs ?? []).forEach((ref, backendIndex) => {
    const refField = `${field}.backendRefs[${backendIndex}]`;
    const resolved = resolveBackend(ctx, route, kind, ref, refField, owner.protocol);
    notePolicy(result, resolved);
    const filterProblem = resolved.problem
      ? undefined
      : (backendFilterProblem(ref, refField) ?? sessionProblem(out, resolved.backend!.cluster, refField));
    if (filterProblem) {
      resolved.problem = filterProblem;
      delete resolved.backend;
    }
    noteBackend(result, verdictOf(refField, ref, route, resolved));
    if (resolved.problem) {
      result.unresolved ??= resolved.problem;
      out.invalidWeight += ref.weight ?? 1;
      return;
    }
    const backend = resolved.backend!;
    clusters.set(backend.cluster.name, backend.cluster);
    if (backend.weight <= 0) return;
    const weighted: WeightedCluster = { cluster: backend.cluster.name, weight: backend.weight };
    if (ref.filters?.length) {
      const filters = compileFilters(ctx, route, kind, ref.filters, `${refField}.filters`);
      out.invalid ??= filters.invalid;
      if (filters.unresolved) result.unresolved ??= filters.unresolved;
      if (filters.droppedMirror) result.unresolved ??= filters.droppedMirror;
      for (const cluster of filters.clusters) clusters.set(cluster.name, cluster);
      weighted.filters = filters.filters;
    }
    out.backends.push(weighted);
  });
  out.backends = fitted(out.backends);
  return out;
}

/**
 * A rule's backends share one session config: Envoy's stateful session is configured per route, and it
 * overrides the host only within the cluster the router chose. GEP-1619 does not say what two backends
 * of one rule with different session configs mean; the first one's is the rule's, and a later backend
 * whose config differs is refused (its share answers 500) rather than served without its own.
 */
function sessionProblem(out: RuleBackends, cluster: ClusterIR, field: string): Problem | undefined {
  const s = cluster.sessionPersistence;
  if (!s) return undefined;
  const of = `XBackend ${cluster.service.namespace}/${cluster.service.name}`;
  if (!out.session) {
    out.session = { ir: s, of };
    return undefined;
  }
  if (deepEqual(out.session.ir, s)) return undefined;
  return {
    reason: 'UnsupportedValue',
    message:
      `${field}: ${of} spec.sessionPersistence differs from that of ${out.session.of} in the same rule; ` +
      'the proxy keeps one session per route',
  };
}

/** One match of a rule as the proxy serves it: 500 when the rule is invalid, else its redirect or backends. */
function matchRoute(
  owner: RuleOwner,
  rule: RuleInput,
  ruleIndex: number,
  match: HTTPMatchIR,
  matchIndex: number,
  filters: CompiledFilters,
  { backends, invalidWeight, session }: RuleBackends,
  invalid: Problem | undefined,
): HTTPRouteIR {
  const { route, kind, ctx, clusters } = owner;
  const source: HTTPRouteIR['source'] = {
    kind,
    namespace: route.metadata.namespace ?? '',
    name: route.metadata.name,
    rule: ruleIndex,
    match: matchIndex,
  };
  if (rule.name) source.ruleName = rule.name;
  const ir: HTTPRouteIR = { name: flat(`${owner.namePrefix}/rule/${ruleIndex}/match/${matchIndex}`), source, match };
  if (invalid || filters.unresolved) {
    ir.directResponse = { status: 500 };
  } else if (filters.redirect) {
    ir.redirect = filters.redirect;
  } else if (backends.length === 0) {
    ir.directResponse = { status: 500 };
  } else if (invalidWeight === 0 && backends.every((b) => !ctx.clusterReady(clusters.get(b.cluster)!))) {
    // Valid backends, none with a ready endpoint: 503, as the spec suggests.
    ir.directResponse = { status: 503 };
  } else {
    ir.backends = backends;
    if (invalidWeight > 0) ir.invalidWeight = invalidWeight;
    if (session) ir.sessionPersistence = session.ir;
  }
  if (!invalid && hasFields(filters.filters)) ir.filters = filters.filters;
  const timeouts = rule.timeouts;
  if (timeouts && (timeouts.request || timeouts.backendRequest)) ir.timeouts = { ...timeouts };
  if (rule.retry)
    ir.retry = {
      codes: rule.retry.codes ?? [],
      attempts: rule.retry.attempts ?? 1,
      ...(rule.retry.backoff ? { backoff: rule.retry.backoff } : {}),
    };
  return ir;
}

/** Whether an object has a field of its own, without listing them all (this runs for every match). */
function hasFields(o: object): boolean {
  for (const key in o) if (Object.hasOwn(o, key)) return true;
  return false;
}

/** A retry stanza the proxy can apply: codes 400-599, zero or more attempts (0 disables retries), a Gateway API duration as backoff. */
function retryProblem(r: HTTPRouteRule['retry'], field: string): Problem | undefined {
  if (!r) return undefined;
  const bad = (r.codes ?? []).findIndex((c) => !Number.isInteger(c) || c < 400 || c > 599);
  if (bad >= 0)
    return {
      reason: 'UnsupportedValue',
      message: `${field}.codes[${bad}]: ${String(r.codes![bad])} is not an HTTP status code from 400 to 599`,
    };
  if (r.attempts !== undefined && (!Number.isInteger(r.attempts) || r.attempts < 0))
    return {
      reason: 'UnsupportedValue',
      message: `${field}.attempts: ${String(r.attempts)} must be a whole number of at least 0`,
    };
  if (r.backoff !== undefined && !DURATION.test(r.backoff))
    return { reason: 'UnsupportedValue', message: `${field}.backoff: "${r.backoff}" is not a Gateway API duration` };
  return undefined;
}

interface HTTPLikeSpec<M> {
  parentRefs?: ParentReference[];
  hostnames?: string[];
  rules?: (Omit<RuleInput, 'matches'> & { matches?: M[] })[];
}

/**
 * HTTPRoute and GRPCRoute share everything but their matches: attachment, hostname validation
 * (an IP or malformed hostname makes the whole route invalid), default rule and match, rules.
 */
export function translateHTTPLikeRoute<M extends object>(
  ctx: TranslationContext,
  parents: ParentIndex,
  route: KubeObject,
  kind: 'HTTPRoute' | 'GRPCRoute',
  compileMatch: (m: M, field: string) => HTTPMatchIR | Problem,
): RouteResult {
  const spec = (route.spec ?? {}) as HTTPLikeSpec<M>;
  const result: RouteResult = { object: route, kind, parents: [], clusters: [] };
  result.parents = attachRoute(ctx.inputs, parents, route, kind, spec.parentRefs ?? [], spec.hostnames);
  if (result.parents.length === 0) return result;
  const badHost = (spec.hostnames ?? []).map((h, i) => [i, validateHostname(h)] as const).find(([, e]) => e);
  if (badHost) {
    result.invalid = { reason: 'UnsupportedValue', message: `spec.hostnames[${badHost[0]}]: ${badHost[1]}` };
    return result;
  }
  const rules = (spec.rules && spec.rules.length ? spec.rules : [{}]).map((r, ri) => ({
    ...r,
    matches: (r.matches && r.matches.length ? r.matches : [{} as M]).map((m, mi) =>
      compileMatch(m, `spec.rules[${ri}].matches[${mi}]`),
    ),
  }));
  translateRules(ctx, route, kind, rules, result);
  return result;
}
