// The conformance suite's backends as the route-table check sees them, and what Envoy makes of their
// answers. The backends are echo-basic (gateway-api-conformance-images v0.1.0, echo-basic.go): an
// HTTP server that answers 200 with the request it received after waiting `delay`; under /retry/ a
// retry simulation that fails `succeedAfter` times per request uuid, each failure after waiting
// `delayRetry`, with `responseCode` or (without it) a TCP reset; and the gRPC, TCP and UDP servers
// of the same image. A Pod accepts connections only on the ports its server listens on (a Service
// whose targetPort it does not listen on refuses, as in HTTPRouteRetryConnectionError), and its TLS
// ports present the certificate of the Secret it mounts.
//
// The proxy's side follows RouteAction and RetryPolicy: the route timeout ("defaults to 15s ... A
// value of 0 will disable the route's timeout") covers all tries; per_try_timeout bounds each;
// retry_on decides which failures are tried again, num_retries (default 1) how often; a retry goes
// to the next endpoint of the cluster (ROUND_ROBIN, no retry host predicate).
import type { RouteAction, UpstreamTlsContext } from '../../src/envoy-types.js';
import { duration } from '../../src/index.js';
import type { WeightedTarget } from './envoy-router.js';

/** A certificate a backend presents: the names it carries and the PEM of the CA that signed it. */
export interface ServingCertificate {
  sans: string[];
  issuer: string;
}

/** What one TLS port of a Pod presents, and the client CA it requires (TLS_CLIENT_CACERTS), if any. */
export interface ServingTls extends ServingCertificate {
  clientCa?: string;
}

export interface EchoPod {
  /** What the echo server reports as its Pod: it starts with the Deployment's name. */
  name: string;
  namespace: string;
  /** SERVICE_NAME, which the UDP and TCP echo servers report. */
  serviceName?: string;
  kind: 'http' | 'grpc' | 'tcp' | 'udp' | 'unknown';
  /** Listening TCP ports, each plain (undefined) or TLS; absent for a Pod no manifest describes, taken to accept any. */
  tcp?: Map<number, ServingTls | undefined>;
  udp?: Set<number>;
}

export interface Endpoint {
  pod: EchoPod;
  port: number;
}

/** The upstream side of one weighted target: its endpoints in EDS order and its cluster's TLS. */
export interface Upstream {
  endpoints: Endpoint[];
  tls?: UpstreamTlsContext;
  /** The issuer of a client certificate the proxy presents, by SDS name. */
  clientCertificateIssuer(sdsName: string): string | undefined;
}

export interface BackendAnswer {
  status: number;
  /** The Pod that answered 2xx. */
  pod?: EchoPod;
  /** The server name the Pod saw in the TLS handshake, if the proxy spoke TLS to it. */
  sni?: string;
  /** The SDS name of the client certificate the proxy presented, if any. */
  clientCertificate?: string;
  why?: string;
}

const CLUSTER_NOT_FOUND: Record<string, number> = {
  SERVICE_UNAVAILABLE: 503,
  NOT_FOUND: 404,
  INTERNAL_SERVER_ERROR: 500,
};

function durationMs(d: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined {
  return d ? Number(d.seconds ?? 0) * 1000 + (d.nanos ?? 0) / 1e6 : undefined;
}

/** How one try ended, as Envoy's router sees it. */
export type Attempt =
  | { kind: 'response'; status: number; ms: number; endpoint: Endpoint }
  /** No connection: refused, or the TLS handshake failed (Envoy's UF, "connection failure"). */
  | { kind: 'connect-failure'; ms: number; why: string }
  /** The upstream reset the stream after the request was sent (echo-basic's RST mode). */
  | { kind: 'reset'; ms: number }
  /** The upstream refused the stream (HTTP/2 REFUSED_STREAM). echo-basic never does; kept for retriable(). */
  | { kind: 'refused-stream'; ms: number }
  | { kind: 'per-try-timeout'; ms: number };

/**
 * Whether Envoy tries again after this attempt, per x-envoy-retry-on (Envoy docs, HTTP filters >
 * Router > x-envoy-retry-on, config_http_filters_router_x-envoy-retry-on): `5xx` is any 5xx answer
 * or no answer at all (disconnect, reset, per-try timeout), connect failures and refused streams
 * included; `gateway-error` is 502, 503 or 504, and so also the failures that end as one (connect
 * failures, resets, per-try timeouts); `reset` is no answer at all (disconnect, reset, read or
 * per-try timeout, a failed connection too); `reset-before-request` is the same, but only while no
 * part of the request was sent, so not a reset or timeout after it was; `connect-failure` is a failed
 * connection (a TLS handshake failure included), not a timeout; `refused-stream` a REFUSED_STREAM
 * reset; `retriable-status-codes` an answer whose status is in retriable_status_codes;
 * `retriable-4xx` a 409.
 */
export function retriable(attempt: Attempt, policy: NonNullable<RouteAction['retry_policy']>): boolean {
  const on = new Set((policy.retry_on ?? '').split(',').map((s) => s.trim()));
  switch (attempt.kind) {
    case 'response': {
      const s = attempt.status;
      return (
        (on.has('5xx') && s >= 500 && s < 600) ||
        (on.has('gateway-error') && [502, 503, 504].includes(s)) ||
        (on.has('retriable-4xx') && s === 409) ||
        (on.has('retriable-status-codes') && (policy.retriable_status_codes ?? []).includes(s))
      );
    }
    case 'connect-failure':
      return ['5xx', 'gateway-error', 'reset', 'reset-before-request', 'connect-failure'].some((c) => on.has(c));
    case 'refused-stream':
      return ['5xx', 'gateway-error', 'reset', 'refused-stream'].some((c) => on.has(c));
    case 'reset':
    case 'per-try-timeout':
      return ['5xx', 'gateway-error', 'reset'].some((c) => on.has(c));
  }
}

/** What a try that is not retried answers downstream: Envoy's local replies for the failures. */
function finalStatus(attempt: Attempt): number {
  switch (attempt.kind) {
    case 'response':
      return attempt.status;
    case 'per-try-timeout':
      return 504;
    default:
      return 503; // "upstream connect error or disconnect/reset before headers"
  }
}

const pem = (s: string) => s.replace(/\s+/g, '');

/** A SubjectAltNameMatcher against the certificate's names of its type (URIs have a scheme). */
function sanMatches(m: { san_type?: string; matcher?: Record<string, unknown> }, sans: string[]): boolean {
  const typed = sans.filter((s) => (m.san_type === 'URI' ? s.includes('://') : !s.includes('://')));
  const x = m.matcher ?? {};
  return typed.some((s) =>
    x.exact !== undefined
      ? s === x.exact
      : x.prefix !== undefined
        ? s.startsWith(String(x.prefix))
        : x.suffix !== undefined
          ? s.endsWith(String(x.suffix))
          : x.contains !== undefined && s.includes(String(x.contains)),
  );
}

/**
 * The TLS handshake of the proxy (UpstreamTlsContext) with a Pod's TLS port: the Pod's certificate
 * must chain to trusted_ca (a file is the system store, which holds none of the suite's CAs) and
 * carry a name match_typed_subject_alt_names accepts (none given: any); a Pod that requires client
 * certificates needs one its CA signed. Undefined when it succeeds; otherwise why not.
 */
export function handshakeProblem(tls: UpstreamTlsContext, serving: ServingTls, upstream: Upstream): string | undefined {
  const common = tls.common_tls_context ?? {};
  const validation = common.validation_context;
  if (validation) {
    const ca = validation.trusted_ca;
    if (ca?.filename !== undefined)
      return `trusted_ca ${ca.filename} (the system store) does not hold the backend's CA`;
    if (ca && !pem(ca.inline_string ?? '').includes(pem(serving.issuer)))
      return "trusted_ca does not hold the CA that signed the backend's certificate";
    const matchers = validation.match_typed_subject_alt_names ?? [];
    if (matchers.length && !matchers.some((m) => sanMatches(m as never, serving.sans)))
      return `no subject alt name matcher accepts ${serving.sans.join(', ')}`;
  }
  if (serving.clientCa) {
    const name = common.tls_certificate_sds_secret_configs?.[0]?.name;
    if (!name) return 'the backend requires a client certificate and the proxy presents none';
    const issuer = upstream.clientCertificateIssuer(name);
    if (issuer === undefined || pem(issuer) !== pem(serving.clientCa))
      return `the client certificate ${name} is not signed by the CA the backend trusts`;
  }
  return undefined;
}

/** The echo-basic retry simulation's count of failed attempts per Pod, for one request (one uuid). */
type Attempts = Map<EchoPod, number>;

function query(path: string): URLSearchParams {
  return new URLSearchParams(path.includes('?') ? path.slice(path.indexOf('?') + 1) : '');
}

const param = (q: URLSearchParams, name: string) => (q.get(name) ? durationMs(duration(q.get(name)!))! : 0);

/** One try on one endpoint: the connection, then what the server does with the request. */
function attemptOn(endpoint: Endpoint, upstream: Upstream, path: string, h2: boolean, attempts: Attempts): Attempt {
  const { pod, port } = endpoint;
  const serving = pod.tcp?.get(port);
  if (pod.tcp && !pod.tcp.has(port))
    return { kind: 'connect-failure', ms: 0, why: `${pod.name} listens on no port ${port}` };
  if (upstream.tls && pod.tcp && !serving)
    return { kind: 'connect-failure', ms: 0, why: `TLS to plain-text port ${port} of ${pod.name}` };
  if (upstream.tls && serving) {
    const problem = handshakeProblem(upstream.tls, serving, upstream);
    if (problem) return { kind: 'connect-failure', ms: 0, why: problem };
  }
  // Go's TLS servers answer a plain-text HTTP/1 request with a 400 and close; HTTP/2 gets no answer.
  if (!upstream.tls && serving)
    return h2 ? { kind: 'reset', ms: 0 } : { kind: 'response', status: 400, ms: 0, endpoint };
  const q = query(path);
  if (pod.kind === 'http' && path.startsWith('/retry/')) {
    const succeedAfter = Number.parseInt(q.get('succeedAfter') ?? '', 10);
    if (Number.isNaN(succeedAfter)) return { kind: 'response', status: 400, ms: 0, endpoint };
    const failed = attempts.get(pod) ?? 0;
    if (failed < succeedAfter) {
      attempts.set(pod, failed + 1);
      const ms = param(q, 'delayRetry');
      const code = Number.parseInt(q.get('responseCode') ?? '', 10);
      return Number.isNaN(code) ? { kind: 'reset', ms } : { kind: 'response', status: code, ms, endpoint };
    }
  }
  return { kind: 'response', status: 200, ms: pod.kind === 'http' ? param(q, 'delay') : 0, endpoint };
}

/**
 * What the client gets for one request to one weighted target, once for each endpoint the first try
 * may go to (round robin may start anywhere): the conformance tests expect the same every time.
 */
export function backendAnswers(
  action: RouteAction,
  target: WeightedTarget,
  upstream: Upstream,
  h2: boolean,
): BackendAnswer[] {
  if (!target.exists)
    return [{ status: CLUSTER_NOT_FOUND[action.cluster_not_found_response_code ?? 'SERVICE_UNAVAILABLE']! }];
  if (!target.healthy || !upstream.endpoints.length) return [{ status: 503, why: 'no healthy upstream' }];
  const policy = action.retry_policy;
  const tries = 1 + (policy ? Number(policy.num_retries?.value ?? 1) : 0);
  const perTry = durationMs(policy?.per_try_timeout) || undefined;
  const routeTimeout = durationMs(action.timeout) ?? 15_000;
  const n = upstream.endpoints.length;
  return upstream.endpoints.map((_, start) => {
    const attempts: Attempts = new Map();
    let elapsed = 0;
    for (let i = 0; ; i++) {
      let a = attemptOn(upstream.endpoints[(start + i) % n]!, upstream, target.request.path, h2, attempts);
      if (perTry !== undefined && a.ms >= perTry) a = { kind: 'per-try-timeout', ms: perTry };
      elapsed += a.ms;
      if (routeTimeout > 0 && elapsed >= routeTimeout) return { status: 504, why: 'route timeout' };
      if (i + 1 < tries && policy && retriable(a, policy)) continue;
      const status = finalStatus(a);
      if (a.kind !== 'response') return { status, why: a.kind === 'connect-failure' ? a.why : a.kind };
      const answer: BackendAnswer = { status, pod: a.endpoint.pod };
      if (upstream.tls) {
        if (upstream.tls.sni) answer.sni = upstream.tls.sni;
        const cert = upstream.tls.common_tls_context?.tls_certificate_sds_secret_configs?.[0]?.name;
        if (cert) answer.clientCertificate = cert;
      }
      return answer;
    }
  });
}
