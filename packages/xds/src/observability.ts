// What the proxies report of the traffic they carry, in one place: the access logs of every HTTP
// connection manager, TCP proxy and UDP proxy a Gateway's listeners run (ProxyConfig.spec.accessLog,
// resolved by the translator into GatewayIR.accessLog). Tracing and stats prefixes belong here too.
//
// The values are Envoy's command operators (`%START_TIME%`, `%REQ(:METHOD)%`, …), as Envoy's access
// log documentation lists them, with what each means for HTTP, TCP and UDP:
// https://www.envoyproxy.io/docs/envoy/latest/configuration/observability/access_log/usage
//
// An HTTP entry is a request; a TCP entry a connection (TLS passthrough and terminated TLS routes are
// TCP proxies too); a UDP entry a session, written when it ends. Envoy renders an operator that means
// nothing for a connection as "-": in TCP and UDP entries a JSON field made only of such operators
// (the request's method, path, headers, response code …) is left out. Envoy's L4 proxies do not
// know the route or the Gateway listener, which Turnpike does: `%ROUTE_NAME%` and `%FILTER_CHAIN_NAME%`
// are written in as the route's and the listener's names; UDP sessions count their bytes and name
// their cluster in the UDP proxy's dynamic metadata, which stands in for `%BYTES_RECEIVED%`,
// `%BYTES_SENT%` and `%UPSTREAM_CLUSTER%`.
import type { AccessLogIR, GatewayIR } from '@turnpike/api';
import { typed } from './envoy-values.js';
import type {
  AccessLog,
  KeyValue,
  OpenTelemetryAccessLogConfig,
  StdoutAccessLog,
  SubstitutionFormatString,
} from './envoy-types.js';

export type AccessLogKind = 'http' | 'tcp' | 'udp';

/** What Turnpike knows of the proxy an entry comes from, that Envoy's TCP and UDP proxies do not fill in. */
export interface AccessLogSite {
  /** The TCPRoute, TLSRoute or UDPRoute served (its IR name), for `%ROUTE_NAME%`. */
  route?: string;
  /** The Gateway listener (its IR name), for `%FILTER_CHAIN_NAME%`. */
  listener?: string;
}

/** A command operator: `%NAME%`, `%NAME(argument)%`, either with `:N` (truncation). */
const OPERATOR = /%([A-Z0-9_]+)(\([^)]*\))?(:\d+)?%/g;

/** Operators Envoy implements for HTTP only ("Not implemented" for TCP and UDP). */
const HTTP_ONLY = new Set([
  'REQ',
  'RESP',
  'TRAILER',
  'PROTOCOL',
  'UPSTREAM_PROTOCOL',
  'RESPONSE_CODE',
  'RESPONSE_CODE_DETAILS',
  'REQUEST_DURATION',
  'REQUEST_TX_DURATION',
  'RESPONSE_DURATION',
  'RESPONSE_TX_DURATION',
  'REQUEST_HEADERS_BYTES',
  'RESPONSE_HEADERS_BYTES',
  'RESPONSE_TRAILERS_BYTES',
  'UPSTREAM_HEADER_BYTES_SENT',
  'UPSTREAM_HEADER_BYTES_RECEIVED',
  'DOWNSTREAM_HEADER_BYTES_SENT',
  'DOWNSTREAM_HEADER_BYTES_RECEIVED',
  'UPSTREAM_TRANSPORT_FAILURE_REASON',
  'VIRTUAL_CLUSTER_NAME',
  'GRPC_STATUS',
  'GRPC_STATUS_NUMBER',
  'LOCAL_REPLY_BODY',
]);

/** Operators Envoy implements for TCP but not for UDP sessions. */
const NOT_UDP = new Set([
  'BYTES_RECEIVED',
  'BYTES_SENT',
  'DURATION',
  'RESPONSE_FLAGS',
  'ROUTE_NAME',
  'FILTER_CHAIN_NAME',
  'REQUESTED_SERVER_NAME',
  'CONNECTION_TERMINATION_DETAILS',
  'UPSTREAM_REQUEST_ATTEMPT_COUNT',
  'UPSTREAM_WIRE_BYTES_SENT',
  'UPSTREAM_WIRE_BYTES_RECEIVED',
  'DOWNSTREAM_WIRE_BYTES_SENT',
  'DOWNSTREAM_WIRE_BYTES_RECEIVED',
]);

/** What an operator stands for in one kind of entry: itself, another operator, or a literal. */
function substitute(operator: string, kind: AccessLogKind, site: AccessLogSite): string | undefined {
  if (kind === 'http') return undefined;
  if (operator === '%ROUTE_NAME%') return site.route;
  if (operator === '%FILTER_CHAIN_NAME%') return site.listener;
  if (kind !== 'udp') return undefined;
  if (operator === '%BYTES_RECEIVED%') return '%DYNAMIC_METADATA(udp.proxy:bytes_received)%';
  if (operator === '%BYTES_SENT%') return '%DYNAMIC_METADATA(udp.proxy:bytes_sent)%';
  if (operator === '%UPSTREAM_CLUSTER%') return '%DYNAMIC_METADATA(udp.proxy:cluster_name)%';
  return undefined;
}

function implemented(name: string, kind: AccessLogKind): boolean {
  if (kind === 'http') return true;
  return !HTTP_ONLY.has(name) && (kind === 'tcp' || !NOT_UDP.has(name));
}

/** A format string as one kind of entry has it, and whether any of its operators means something there. */
function forKind(format: string, kind: AccessLogKind, site: AccessLogSite): { format: string; meaningful: boolean } {
  let operators = 0;
  let meaningful = 0;
  const out = format.replace(OPERATOR, (operator: string, name: string) => {
    const instead = substitute(operator, kind, site);
    operators++;
    if (instead !== undefined || implemented(name, kind)) meaningful++;
    return instead ?? operator;
  });
  return { format: out, meaningful: operators === 0 || meaningful > 0 };
}

/** The JSON fields of one kind of entry: those with something to say for it, sorted. */
function fieldsFor(json: Record<string, string>, kind: AccessLogKind, site: AccessLogSite): [string, string][] {
  const out: [string, string][] = [];
  for (const field of Object.keys(json).sort()) {
    const { format, meaningful } = forKind(json[field]!, kind, site);
    if (meaningful) out.push([field, format]);
  }
  return out;
}

function stdoutLog(log: AccessLogIR, kind: AccessLogKind, site: AccessLogSite): AccessLog {
  let format: SubstitutionFormatString;
  if (log.format === 'text')
    format = { text_format_source: { inline_string: `${forKind(log.text ?? '', kind, site).format}\n` } };
  else {
    const fields = Object.fromEntries(
      fieldsFor(log.json ?? {}, kind, site).map(([field, value]) => [field, { stringValue: value }]),
    );
    // One line per entry, its keys in one order whatever the proxy's map iteration.
    format = { json_format: { fields }, json_format_options: { sort_properties: true } };
  }
  return {
    name: 'envoy.access_loggers.stdout',
    typed_config: typed<StdoutAccessLog>('envoy.extensions.access_loggers.stream.v3.StdoutAccessLog', {
      log_format: format,
    }),
  };
}

/**
 * OTLP logs over gRPC to the collector's cluster. The JSON format's fields become the record's
 * attributes; the Text format's line its body (the Gateway and listener are attributes then).
 * `common_config` is what Envoy 1.36 reads (later versions take `grpc_service` beside it).
 */
function openTelemetryLog(
  log: AccessLogIR,
  cluster: string,
  kind: AccessLogKind,
  site: AccessLogSite,
  gw: GatewayIR,
): AccessLog {
  const attribute = ([key, value]: [string, string]): KeyValue => ({ key, value: { string_value: value } });
  const value: OpenTelemetryAccessLogConfig = {
    common_config: {
      log_name: `turnpike/${kind}`,
      transport_api_version: 'V3',
      grpc_service: { envoy_grpc: { cluster_name: cluster } },
    },
  };
  if (log.format === 'text') {
    value.body = { string_value: forKind(log.text ?? '', kind, site).format };
    const where: [string, string][] = [['gateway', `${gw.namespace}/${gw.name}`]];
    const listener = site.listener ?? (kind === 'http' ? '%FILTER_CHAIN_NAME%' : undefined);
    if (listener) where.push(['listener', listener]);
    value.attributes = { values: where.map(attribute) };
  } else value.attributes = { values: fieldsFor(log.json ?? {}, kind, site).map(attribute) };
  return {
    name: 'envoy.access_loggers.open_telemetry',
    typed_config: typed<OpenTelemetryAccessLogConfig>(
      'envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig',
      value,
    ),
  };
}

/**
 * The access logs of one HTTP connection manager (`http`), TCP proxy (`tcp`) or UDP proxy (`udp`) of
 * the Gateway: none when its access log is off.
 */
export function accessLogs(gw: GatewayIR, kind: AccessLogKind, site: AccessLogSite = {}): AccessLog[] {
  const log = gw.accessLog;
  if (!log) return [];
  const out: AccessLog[] = [];
  if (log.stdout) out.push(stdoutLog(log, kind, site));
  if (log.openTelemetry) out.push(openTelemetryLog(log, log.openTelemetry.cluster, kind, site, gw));
  return out;
}
