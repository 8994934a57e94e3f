// Rules of HTTPRoute and GRPCRoute: filters, backends (weighted; invalid ones keep their share
// as 500s), timeouts and retries. A rule whose backends are all invalid answers 500; an invalid
// rule (bad match or filter value) answers 500 and is reported as UnsupportedValue.
import type { BackendRef, HTTPRouteFilter, HTTPRouteRule, KubeObject, ParentReference } from '@turnpike/api';
import type { Problem } from '../conditions.js';
import type { TranslationContext } from '../context.js';
import { validateHostname } from '../hostnames.js';
import { attachRoute, type ParentIndex } from './attachment.js';
import type { ClusterIR, HTTPMatchIR, HTTPRouteIR, WeightedCluster } from '@turnpike/api';
import { resolveBackend } from './backends.js';
import { compileFilters } from './http-filters.js';
import { noteBackend, notePolicy, verdictOf, type RouteResult } from './route-result.js';

const BACKEND_FILTERS = new Set(['RequestHeaderModifier', 'ResponseHeaderModifier']);
const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;

export interface RuleInput {
  name?: string;
  matches: (HTTPMatchIR | Problem)[];
  filters?: HTTPRouteFilter[];
  backendRefs?: BackendRef[];
  timeouts?: HTTPRouteRule['timeouts'];
  retry?: HTTPRouteRule['retry'];
}

export function translateRules(
  ctx: TranslationContext,
  route: KubeObject,
  kind: string,
  rules: RuleInput[],
  result: RouteResult,
): void {
  const protocol = kind === 'GRPCRoute' ? 'h2' : 'http';
  const irRoutes: HTTPRouteIR[] = [];
  let invalidRules = 0;
  const clusters = new Map<string, ClusterIR>();
  rules.forEach((rule, ri) => {
    const field = `spec.rules[${ri}]`;
    let invalid: Problem | undefined = rule.matches.find((m): m is Problem => 'reason' in m);
    const compiled = compileFilters(ctx, route, kind, rule.filters, `${field}.filters`);
    invalid ??= compiled.invalid;
    for (const c of compiled.clusters) clusters.set(c.name, c);
    if (compiled.unresolved) result.unresolved ??= compiled.unresolved;
    const t = rule.timeouts;
    invalid ??= retryProblem(rule.retry, `${field}.retry`);
    if (rule.name !== undefined && rules.findIndex((o) => o.name === rule.name) !== ri) {
      invalid ??= {
        reason: 'UnsupportedValue',
        message: `${field}.name: "${rule.name}" is already the name of spec.rules[${rules.findIndex((o) => o.name === rule.name)}]; rule names must be unique`,
      };
    }
    for (const k of ['request', 'backendRequest'] as const) {
      if (t?.[k] !== undefined && !DURATION.test(t[k] as string))
        invalid ??= {
          reason: 'UnsupportedValue',
          message: `${field}.timeouts.${k}: "${t[k]}" is not a Gateway API duration`,
        };
    }
    const backends: WeightedCluster[] = [];
    let invalidWeight = 0;
    (rule.backendRefs ?? []).forEach((ref, bi) => {
      const r = resolveBackend(ctx, route, kind, ref, `${field}.backendRefs[${bi}]`, protocol);
      notePolicy(result, r.policy);
      // Per-backend filters the proxy applies per weighted cluster: header changes and a host rewrite.
      const unsupported = (ref.filters ?? []).findIndex(
        (f) =>
          !BACKEND_FILTERS.has(f.type) && !(f.type === 'URLRewrite' && f.urlRewrite?.hostname && !f.urlRewrite.path),
      );
      if (!r.problem && unsupported >= 0) {
        r.problem = {
          reason: 'UnsupportedValue',
          message: `${field}.backendRefs[${bi}].filters[${unsupported}]: ${ref.filters![unsupported]!.type} is not supported on a backendRef (RequestHeaderModifier, ResponseHeaderModifier, URLRewrite of the hostname)`,
        };
        delete r.backend;
      }
      noteBackend(result, verdictOf(`${field}.backendRefs[${bi}]`, ref, route, r));
      if (r.problem) {
        result.unresolved ??= r.problem;
        invalidWeight += ref.weight ?? 1;
        return;
      }
      const b = r.backend!;
      clusters.set(b.cluster.name, b.cluster);
      if (b.weight <= 0) return;
      const wc: WeightedCluster = { cluster: b.cluster.name, weight: b.weight };
      if (ref.filters?.length) {
        const bf = compileFilters(ctx, route, kind, ref.filters, `${field}.backendRefs[${bi}].filters`);
        invalid ??= bf.invalid;
        if (bf.unresolved) result.unresolved ??= bf.unresolved;
        for (const c of bf.clusters) clusters.set(c.name, c);
        wc.filters = bf.filters;
      }
      backends.push(wc);
    });
    if (invalid) invalidRules++;
    rule.matches.forEach((m, mi) => {
      // A match that cannot be compiled serves nothing: answering it as `PathPrefix /` would
      // shadow every other route's `/` on the host. The rule's valid matches answer 500.
      if ('reason' in m) return;
      const match: HTTPMatchIR = m;
      const ir: HTTPRouteIR = {
        name: `${kind.toLowerCase()}/${route.metadata.namespace}/${route.metadata.name}/rule/${ri}/match/${mi}`,
        source: {
          kind,
          namespace: route.metadata.namespace ?? '',
          name: route.metadata.name,
          rule: ri,
          match: mi,
          ...(rule.name ? { ruleName: rule.name } : {}),
        },
        match,
      };
      if (invalid || compiled.unresolved) {
        ir.directResponse = { status: 500 };
      } else if (compiled.redirect) {
        ir.redirect = compiled.redirect;
      } else if (backends.length === 0) {
        ir.directResponse = { status: 500 };
      } else if (invalidWeight === 0 && backends.every((b) => !ctx.clusterReady(clusters.get(b.cluster)!))) {
        // Valid backends, none with a ready endpoint: 503, as the spec suggests.
        ir.directResponse = { status: 503 };
      } else {
        ir.backends = backends;
        if (invalidWeight > 0) ir.invalidWeight = invalidWeight;
      }
      if (!invalid && Object.keys(compiled.filters).length) ir.filters = compiled.filters;
      if (t && (t.request || t.backendRequest)) ir.timeouts = { ...t };
      if (rule.retry)
        ir.retry = {
          codes: rule.retry.codes ?? [],
          attempts: rule.retry.attempts ?? 1,
          ...(rule.retry.backoff ? { backoff: rule.retry.backoff } : {}),
        };
      irRoutes.push(ir);
    });
    // Every invalid rule is named (the first one's reason stands for all).
    if (invalid)
      result.partiallyInvalid = result.partiallyInvalid
        ? { reason: result.partiallyInvalid.reason, message: `${result.partiallyInvalid.message}; ${invalid.message}` }
        : invalid;
  });
  if (rules.length > 0 && invalidRules === rules.length) {
    result.invalid = result.partiallyInvalid;
    delete result.partiallyInvalid;
  }
  result.http = irRoutes;
  result.clusters = [...clusters.values()];
}

/** A retry stanza the proxy can apply: codes 400-599, at least one attempt, a Gateway API duration as backoff. */
function retryProblem(r: HTTPRouteRule['retry'], field: string): Problem | undefined {
  if (!r) return undefined;
  const bad = (r.codes ?? []).findIndex((c) => !Number.isInteger(c) || c < 400 || c > 599);
  if (bad >= 0)
    return {
      reason: 'UnsupportedValue',
      message: `${field}.codes[${bad}]: ${String(r.codes![bad])} is not an HTTP status code from 400 to 599`,
    };
  if (r.attempts !== undefined && (!Number.isInteger(r.attempts) || r.attempts < 1))
    return {
      reason: 'UnsupportedValue',
      message: `${field}.attempts: ${String(r.attempts)} must be a whole number of at least 1`,
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
