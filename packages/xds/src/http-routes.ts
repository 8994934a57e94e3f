// One Gateway API route rule (an HTTPRoute or GRPCRoute match) as an Envoy Route: its match, its
// redirect or direct response or weighted clusters, and its filters, timeouts and retries.
import { corsOriginPattern, type HTTPFiltersIR, type HTTPRouteIR } from '@turnpike/api';
import { duration, headerOptions, typed } from './envoy-values.js';
import { pathPrefixOf, redirectTarget, replacePrefixMatch, type RedirectListener } from './http-rewrites.js';
import { enablePlugin, pluginFilterName } from './plugin-filters.js';
import { STATEFUL_SESSION_FILTER, statefulSessionPerRoute } from './stateful-session.js';
import type { Any, CorsPolicy, Duration, HeaderMatcher, Route, RouteAction, RouteMatch } from './envoy-types.js';

/**
 * The name HTTP routes give the share of invalid backends. No cluster of that name is ever sent:
 * the proxy answers that share with the route's cluster_not_found_response_code, 500, as the
 * Gateway API requires (an empty cluster would answer 503). gRPC clients fail those calls.
 */
export const INVALID_HTTP_BACKEND = 'turnpike/invalid-backend-500';

function stringMatch(type: 'Exact' | 'RegularExpression' | 'Prefix', value: string) {
  return type === 'Exact' ? { exact: value } : type === 'Prefix' ? { prefix: value } : { safe_regex: { regex: value } };
}

function routeMatch(r: HTTPRouteIR): RouteMatch {
  const m = r.match;
  const match: RouteMatch = {};
  switch (m.path.type) {
    case 'Exact':
      match.path = m.path.value;
      break;
    case 'RegularExpression':
      match.safe_regex = { regex: m.path.value };
      break;
    default: {
      // Gateway API prefixes match whole path elements; so does path_separated_prefix. gRPC
      // paths are always /service/method, so a plain prefix is exact for them (and proxyless
      // gRPC clients know no other).
      const v = m.path.value.replace(/\/+$/, '');
      if (v === '') match.prefix = '/';
      else if (r.source.kind === 'GRPCRoute') match.prefix = `${v}/`;
      else match.path_separated_prefix = v;
    }
  }
  const headers: HeaderMatcher[] = m.headers.map((h) => ({ name: h.name, string_match: stringMatch(h.type, h.value) }));
  if (m.method) headers.push({ name: ':method', string_match: { exact: m.method } });
  if (headers.length) match.headers = headers;
  if (m.queryParams.length)
    match.query_parameters = m.queryParams.map((q) => ({ name: q.name, string_match: stringMatch(q.type, q.value) }));
  return match;
}

const REDIRECT_CODES = {
  301: 'MOVED_PERMANENTLY',
  302: 'FOUND',
  303: 'SEE_OTHER',
  307: 'TEMPORARY_REDIRECT',
  308: 'PERMANENT_REDIRECT',
} as const;

function applyFilters(
  route: Route,
  action: RouteAction | undefined,
  f: HTTPFiltersIR | undefined,
  matchedPrefix: string,
): void {
  if (!f) return;
  const req = headerOptions(f.requestHeaders);
  if (req.length) route.request_headers_to_add = req;
  if (f.requestHeaders?.remove.length) route.request_headers_to_remove = f.requestHeaders.remove;
  const res = headerOptions(f.responseHeaders);
  if (res.length) route.response_headers_to_add = res;
  if (f.responseHeaders?.remove.length) route.response_headers_to_remove = f.responseHeaders.remove;
  if (action && f.rewrite) {
    if (f.rewrite.hostname) action.host_rewrite_literal = f.rewrite.hostname;
    if (f.rewrite.path?.type === 'ReplacePrefixMatch')
      action.regex_rewrite = replacePrefixMatch(matchedPrefix, f.rewrite.path.value);
    if (f.rewrite.path?.type === 'ReplaceFullPath')
      action.regex_rewrite = { pattern: { regex: '^.*$' }, substitution: f.rewrite.path.value };
  }
  if (action && f.mirrors?.length) {
    action.request_mirror_policies = f.mirrors.map((m) => ({
      cluster: m.cluster,
      runtime_fraction: { default_value: { numerator: Math.round(m.percent * 10_000), denominator: 'MILLION' } },
    }));
  }
  const perFilter: Record<string, Any> = {};
  if (f.cors) {
    perFilter['envoy.filters.http.cors'] = typed<CorsPolicy>('envoy.extensions.filters.http.cors.v3.CorsPolicy', {
      allow_origin_string_match: f.cors.allowOrigins.map((o) =>
        o === '*'
          ? { safe_regex: { regex: '.*' } }
          : o.includes('*')
            ? { safe_regex: { regex: corsOriginPattern(o) } }
            : { exact: o },
      ),
      allow_methods: f.cors.allowMethods.join(','),
      allow_headers: f.cors.allowHeaders.join(','),
      expose_headers: f.cors.exposeHeaders.join(','),
      allow_credentials: { value: f.cors.allowCredentials },
      // A preflight from an origin not allowed is answered here (200 without allow-origin), not
      // passed to the backend, which would answer it as an ordinary OPTIONS request.
      forward_not_matching_preflights: { value: false },
      ...(f.cors.maxAge !== undefined ? { max_age: String(f.cors.maxAge) } : {}),
    });
  }
  for (const p of f.plugins ?? []) perFilter[pluginFilterName(p.name)] = enablePlugin();
  if (Object.keys(perFilter).length) route.typed_per_filter_config = perFilter;
}

/** The listener a route is served on, for what depends on it (a redirect's default port and scheme). */
const DEFAULT_LISTENER: RedirectListener = { port: 80, protocol: 'HTTP' };

export function buildRoute(r: HTTPRouteIR, listener: RedirectListener = DEFAULT_LISTENER): Route {
  const route: Route = { name: r.name, match: routeMatch(r) };
  // A named rule (HTTPRouteNamedRouteRule) keeps its name where access logs and admin dumps see it.
  if (r.source.ruleName)
    route.metadata = {
      filter_metadata: { 'turnpike.dev': { fields: { rule_name: { stringValue: r.source.ruleName } } } },
    };
  if (r.directResponse) {
    route.direct_response = {
      status: r.directResponse.status,
      ...(r.directResponse.body ? { body: { inline_string: r.directResponse.body } } : {}),
    };
    // Plugins still run on a route answered by the proxy itself (e.g. 503 with no endpoints).
    if (r.filters?.plugins?.length)
      route.typed_per_filter_config = Object.fromEntries(
        r.filters.plugins.map((p) => [pluginFilterName(p.name), enablePlugin()]),
      );
    return route;
  }
  if (r.redirect) {
    const red = r.redirect;
    route.redirect = {
      response_code: REDIRECT_CODES[red.statusCode as keyof typeof REDIRECT_CODES] ?? 'FOUND',
      ...redirectTarget(red, listener),
      ...(red.path?.type === 'ReplaceFullPath' ? { path_redirect: red.path.value } : {}),
      ...(red.path?.type === 'ReplacePrefixMatch'
        ? { regex_rewrite: replacePrefixMatch(pathPrefixOf(r), red.path.value) }
        : {}),
    };
    applyFilters(route, undefined, r.filters, pathPrefixOf(r));
    return route;
  }
  const backends = r.backends ?? [];
  const action: RouteAction = {};
  if (backends.length === 1 && !r.invalidWeight && !backends[0]!.filters) {
    action.cluster = backends[0]!.cluster;
  } else {
    const clusters = backends.map((b) => {
      const wc: NonNullable<NonNullable<RouteAction['weighted_clusters']>['clusters']>[number] = {
        name: b.cluster,
        weight: { value: b.weight },
      };
      const req = headerOptions(b.filters?.requestHeaders);
      if (req.length) wc.request_headers_to_add = req;
      if (b.filters?.requestHeaders?.remove.length) wc.request_headers_to_remove = b.filters.requestHeaders.remove;
      const res = headerOptions(b.filters?.responseHeaders);
      if (res.length) wc.response_headers_to_add = res;
      if (b.filters?.responseHeaders?.remove.length) wc.response_headers_to_remove = b.filters.responseHeaders.remove;
      if (b.filters?.rewrite?.hostname) wc.host_rewrite_literal = b.filters.rewrite.hostname;
      return wc;
    });
    if (r.invalidWeight) {
      clusters.push({ name: INVALID_HTTP_BACKEND, weight: { value: r.invalidWeight } });
      action.cluster_not_found_response_code = 'INTERNAL_SERVER_ERROR';
    }
    action.weighted_clusters = { clusters };
  }
  // RouteAction.timeout "defaults to 15s" and covers every try: a backendRequest timeout alone
  // (the Gateway API's request timeout unset) must not be cut short by it, so it is disabled (0).
  if (r.timeouts?.request) action.timeout = duration(r.timeouts.request);
  else if (r.timeouts?.backendRequest) action.timeout = { seconds: '0', nanos: 0 };
  if (r.retry || r.timeouts?.backendRequest) action.retry_policy = retryPolicy(r);
  route.route = action;
  applyFilters(route, action, r.filters, pathPrefixOf(r));
  if (r.sessionPersistence)
    route.typed_per_filter_config = {
      ...route.typed_per_filter_config,
      [STATEFUL_SESSION_FILTER]: statefulSessionPerRoute(r.sessionPersistence),
    };
  return route;
}

/**
 * A rule's retries as Envoy's RetryPolicy (Gateway API v1.7 HTTPRouteRetry). The spec asks for
 * retries when the request never reached the backend (connect failure, refused stream, a reset
 * before the request was sent: Envoy's `connect-failure`, `refused-stream`, `reset-before-request`)
 * and on the listed codes only, and not, by default, where the backend may already have processed
 * the request. The one exception it asks for itself: "any retry attempts which reach the configured
 * BackendRequest timeout ... SHOULD be canceled ... and the Gateway SHOULD schedule the next retry".
 * Envoy retries a per-try timeout only under `reset`, `5xx` or `gateway-error` (router filter docs,
 * x-envoy-retry-on: `reset-before-request` covers "the request has not been sent to the upstream
 * yet", which a timed-out try has been), so a rule with both a retry stanza and a backendRequest
 * timeout adds `reset`: that also retries a reset after the request was sent (docs/features.md
 * says so). `attempts: 0` "MUST disable retries": num_retries 0. Without a retry stanza a
 * backendRequest timeout still needs a policy to carry per_try_timeout, and it retries nothing.
 */
function retryPolicy(r: HTTPRouteIR): NonNullable<RouteAction['retry_policy']> {
  const retry = r.retry;
  const backendTimeout = r.timeouts?.backendRequest;
  const on = retry
    ? [
        ...(retry.codes.length ? ['retriable-status-codes'] : []),
        'connect-failure',
        'refused-stream',
        'reset-before-request',
        ...(backendTimeout ? ['reset'] : []),
      ]
    : ['5xx'];
  return {
    retry_on: on.join(','),
    num_retries: { value: retry ? retry.attempts : 0 },
    ...(retry?.codes.length ? { retriable_status_codes: retry.codes } : {}),
    ...(retry?.backoff ? { retry_back_off: { base_interval: backoffInterval(retry.backoff) } } : {}),
    ...(backendTimeout ? { per_try_timeout: duration(backendTimeout) } : {}),
  };
}

/**
 * RetryBackOff.base_interval "must be greater than zero. Values less than 1 ms are rounded up to
 * 1 ms": a Gateway API backoff of 0s (retry at once) is the shortest interval Envoy takes, 1 ms.
 */
function backoffInterval(backoff: string): Duration {
  const d = duration(backoff);
  return d.seconds === '0' && d.nanos === 0 ? { seconds: '0', nanos: 1_000_000 } : d;
}
