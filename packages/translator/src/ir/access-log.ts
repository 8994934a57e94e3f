// ProxyConfig.spec.accessLog → GatewayIR.accessLog: what every proxy of a Gateway logs per request
// (HTTP) or connection (TCP, TLS, UDP). On by default: a Gateway without a ProxyConfig, or whose
// ProxyConfig says nothing of it, writes one JSON line per request to its proxies' stdout with the
// fields of DEFAULT_ACCESS_LOG_FIELDS. `disabled: true` turns it off; `format: Text` writes Envoy's
// format string instead; `json` adds or replaces fields ("" removes one); `stdout: false` leaves
// stdout out; `openTelemetry.backendRef` sends the entries to an OTLP collector too (gRPC, so an
// HTTP/2 cluster, resolved as any backendRef is: a Service port, a ReferenceGrant from the
// Service's namespace for another namespace, a BackendTLSPolicy if one targets it).
//
// A collector that does not resolve never costs the Gateway its access log: the entries go to stdout
// (whatever `stdout` says) and the ProxyConfig's ResolvedRefs condition says why, naming the field.
//
// The values are Envoy's command operators:
// https://www.envoyproxy.io/docs/envoy/latest/configuration/observability/access_log/usage
import {
  TURNPIKE_GROUP,
  type AccessLogIR,
  type BackendRef,
  type ClusterIR,
  type ProxyAccessLog,
  type ProxyConfig,
} from '@turnpike/api';
import type { TranslationContext } from '../context.js';
import { resolveBackend } from '../routes/backends.js';
import type { Condition } from '../model.js';
import { conditionOf, type Problem } from '../status/conditions.js';

/**
 * The default JSON fields, named as a user would grep for them (an HTTP request; TCP entries keep
 * the fields that mean something for a connection, see the xDS side's observability.ts).
 */
export const DEFAULT_ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  /** When the request (or connection) started, ISO 8601 with milliseconds, UTC. */
  start_time: '%START_TIME%',
  method: '%REQ(:METHOD)%',
  /** The Host (HTTP/1.1) or :authority (HTTP/2) the client asked for. */
  authority: '%REQ(:AUTHORITY)%',
  /** The path as the client sent it, before any URLRewrite filter (Envoy keeps it in x-envoy-original-path). */
  path: '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%',
  /** HTTP/1.1, HTTP/2 or HTTP/3. */
  protocol: '%PROTOCOL%',
  response_code: '%RESPONSE_CODE%',
  /** Envoy's short flags of what went wrong (UH: no healthy upstream, NR: no route …), "-" when nothing did. */
  response_flags: '%RESPONSE_FLAGS%',
  /** Who set the response code and why (via_upstream, route_not_found, …). */
  response_code_details: '%RESPONSE_CODE_DETAILS%',
  /** Body bytes received from the client (TCP: every byte of the connection). */
  bytes_received: '%BYTES_RECEIVED%',
  /** Body bytes sent to the client (TCP: every byte of the connection). */
  bytes_sent: '%BYTES_SENT%',
  /** From the first byte received to the last byte sent, in milliseconds. */
  duration_ms: '%DURATION%',
  /** What the backend took, in milliseconds, as Envoy's router measures it. */
  upstream_service_time: '%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%',
  /** The cluster the request went to: `namespace/service/port` (and `/h2`, `/tcp`, `/udp` by protocol). */
  upstream_cluster: '%UPSTREAM_CLUSTER%',
  /** The backend endpoint, `ip:port`. */
  upstream_host: '%UPSTREAM_HOST%',
  /** The client's address, `ip:port` (the proxy's peer: a load balancer in front of it, if any). */
  downstream_remote_address: '%DOWNSTREAM_REMOTE_ADDRESS%',
  x_forwarded_for: '%REQ(X-FORWARDED-FOR)%',
  user_agent: '%REQ(USER-AGENT)%',
  /** The x-request-id Envoy adds (or keeps) and forwards to the backend. */
  request_id: '%REQ(X-REQUEST-ID)%',
  /**
   * The route rule that answered: `httproute/<namespace>/<name>/rule/<i>/match/<j>` (grpcroute/… for
   * GRPCRoutes), `<listener>/misdirected…` for a 421, "-" when no route matched (a 404, flag NR).
   * TCP and UDP entries: `tcproute/<namespace>/<name>/rule/0` (tlsroute/…, udproute/…).
   */
  route_name: '%ROUTE_NAME%',
  /**
   * The Gateway listener: `Gateway/<namespace>/<gateway>/<listener>` (`ListenerSet/…` for a
   * ListenerSet's), the name of its filter chain; the port (`tcp-80`) when several HTTP listeners
   * share one (they differ by hostname: `authority` and `route_name` tell them apart).
   */
  listener: '%FILTER_CHAIN_NAME%',
});

/** What a ProxyConfig's access log comes to before a Gateway is named in it. */
export interface ResolvedAccessLog {
  /** Absent: no access log. */
  log?: {
    format: 'json' | 'text';
    /** The user's fields (JSON): field → operator string, "" to remove a default one. */
    json?: Readonly<Record<string, string>>;
    text?: string;
    stdout: boolean;
    collector?: ClusterIR;
  };
  /** The collector reference's verdict (spec.accessLog.openTelemetry set and the log not disabled). */
  collectorRef?: { problem?: Problem; resolved?: string };
}

/** A Gateway without a ProxyConfig, or whose ProxyConfig has no `accessLog`. */
export const DEFAULT_ACCESS_LOG: ResolvedAccessLog = Object.freeze({
  log: Object.freeze({ format: 'json' as const, stdout: true }),
});

const FIELD = 'spec.accessLog.openTelemetry.backendRef';

/** Reads and resolves a ProxyConfig's spec.accessLog (the collector's Service through `ctx`). */
export function resolveProxyAccessLog(
  ctx: Pick<TranslationContext, 'inputs' | 'backendTLS'>,
  pc: ProxyConfig,
): ResolvedAccessLog {
  const spec: ProxyAccessLog | undefined = pc.spec?.accessLog;
  if (!spec) return DEFAULT_ACCESS_LOG;
  if (spec.disabled === true) return {};
  const text = spec.format === 'Text';
  const log: NonNullable<ResolvedAccessLog['log']> = { format: text ? 'text' : 'json', stdout: spec.stdout !== false };
  // The schema keeps `text` to Text and `json` to JSON; an object stored before it did is read the same way.
  if (text && spec.text) log.text = spec.text;
  if (!text && spec.json && Object.keys(spec.json).length) log.json = { ...spec.json };
  const out: ResolvedAccessLog = { log };
  const ref = spec.openTelemetry?.backendRef;
  if (ref) {
    const backendRef: BackendRef = { name: ref.name, port: ref.port };
    if (ref.namespace) backendRef.namespace = ref.namespace;
    const r = resolveBackend(ctx, pc, 'ProxyConfig', backendRef, FIELD, 'h2', TURNPIKE_GROUP);
    if (r.backend) {
      log.collector = r.backend.cluster;
      out.collectorRef = { resolved: r.backend.cluster.name };
    } else {
      // No collector: stdout keeps the entries, whatever `stdout` said.
      log.stdout = true;
      const problem = r.problem!;
      out.collectorRef = {
        problem: { reason: problem.reason, message: `${problem.message}; access log entries go to stdout only` },
      };
    }
  }
  if (!log.stdout && !log.collector) return {};
  return out;
}

/** The ProxyConfig's ResolvedRefs condition, when it names a collector (the only reference it resolves itself). */
export function accessLogRefsCondition(resolved: ResolvedAccessLog, generation: number | undefined): Condition[] {
  const ref = resolved.collectorRef;
  if (!ref) return [];
  const ok = { reason: 'ResolvedRefs' as const, message: `${FIELD} resolves to cluster ${ref.resolved}` };
  return [conditionOf('ResolvedRefs', ref.problem, ok, generation)];
}

/** A Gateway's access log, and the collector's cluster its proxies need. */
export function gatewayAccessLog(
  resolved: ResolvedAccessLog,
  gateway: { namespace: string; name: string },
): { accessLog?: AccessLogIR; cluster?: ClusterIR } {
  const log = resolved.log;
  if (!log) return {};
  const accessLog: AccessLogIR = { format: log.format, stdout: log.stdout };
  if (log.format === 'text') accessLog.text = log.text ?? ENVOY_DEFAULT_TEXT;
  else {
    const fields: Record<string, string> = {
      ...DEFAULT_ACCESS_LOG_FIELDS,
      gateway: `${gateway.namespace}/${gateway.name}`,
    };
    for (const [field, value] of Object.entries(log.json ?? {})) {
      if (value === '') delete fields[field];
      else fields[field] = value;
    }
    accessLog.json = Object.fromEntries(
      Object.keys(fields)
        .sort()
        .map((field) => [field, fields[field]!]),
    );
  }
  if (!log.collector) return { accessLog };
  accessLog.openTelemetry = { cluster: log.collector.name };
  return { accessLog, cluster: log.collector };
}

/**
 * The Text format without `text`: Envoy's own default format (its access log documentation), which
 * those who read Envoy's logs know, with the route's name at the end.
 */
export const ENVOY_DEFAULT_TEXT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% ' +
  '%RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% ' +
  '"%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" ' +
  '%ROUTE_NAME%';
