// ProxyConfig.spec.http → GatewayIR.http: what a Gateway's HTTP connection managers take from its
// ProxyConfig. Only what it sets and what holds; a value the CRD schema would refuse (a file not
// checked against it, an object stored before the schema said so) is left out, so its default
// applies (the defaults and what each setting does to Envoy: xds/src/http-connection-manager.ts).
import { durationMs, type HttpSettingsIR, type ProxyConfig, type ProxyHttp } from '@turnpike/api';

const ALPN = new Set(['h2', 'http/1.1']);
const ESCAPED_SLASHES = new Set(['UnescapeAndRedirect', 'RejectRequest', 'UnescapeAndForward', 'KeepUnchanged']);
const UNDERSCORES = new Set(['RejectRequest', 'DropHeader', 'Allow']);

const inRange = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** The Gateway's HTTP settings, or undefined when its ProxyConfig sets none. */
export function gatewayHttpSettings(pc: ProxyConfig | undefined): HttpSettingsIR | undefined {
  const spec: ProxyHttp | undefined = pc?.spec?.http;
  if (!spec) return undefined;
  const out: HttpSettingsIR = {};
  const alpn = spec.alpn;
  if (Array.isArray(alpn) && alpn.length && alpn.every((p) => ALPN.has(p)) && new Set(alpn).size === alpn.length)
    out.alpn = [...alpn];
  // Bounds as the CRD's: Envoy's own (max_request_headers_kb: 1-8192; max_headers_count: at least 1).
  if (inRange(spec.xffNumTrustedHops, 0, 16)) out.xffNumTrustedHops = spec.xffNumTrustedHops;
  if (spec.escapedSlashes && ESCAPED_SLASHES.has(spec.escapedSlashes)) out.escapedSlashes = spec.escapedSlashes;
  if (spec.headersWithUnderscores && UNDERSCORES.has(spec.headersWithUnderscores))
    out.headersWithUnderscores = spec.headersWithUnderscores;
  if (inRange(spec.maxRequestHeadersKiB, 1, 8192)) out.maxRequestHeadersKiB = spec.maxRequestHeadersKiB;
  if (inRange(spec.maxRequestHeaders, 1, 10_000)) out.maxRequestHeaders = spec.maxRequestHeaders;
  const ms = (d: string | undefined) => (typeof d === 'string' ? durationMs(d) : undefined);
  const t = spec.timeouts;
  const requestHeaders = ms(t?.requestHeaders);
  const streamIdle = ms(t?.streamIdle);
  const connectionIdle = ms(t?.connectionIdle);
  if (requestHeaders !== undefined) out.requestHeadersTimeoutMs = requestHeaders;
  if (streamIdle !== undefined) out.streamIdleTimeoutMs = streamIdle;
  if (connectionIdle !== undefined) out.connectionIdleTimeoutMs = connectionIdle;
  return Object.keys(out).length ? out : undefined;
}
