// The drain of one proxy Pod, against Envoy's admin API on loopback
// (https://www.envoyproxy.io/docs/envoy/latest/operations/admin and the draining overview,
// https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/operations/draining):
//
// a. POST /healthcheck/fail: the server state becomes DRAINING, so GET /ready answers 503 (it is
//    200 only in LIVE) and the readiness probe takes the Pod out of its Service's endpoints.
// b. POST /drain_listeners?graceful&inboundonly&skip_exit: `graceful` enters a drain period
//    (--drain-time-s) in which the HTTP connection managers discourage requests (Connection: close
//    on HTTP/1, GOAWAY on HTTP/2) while the listeners still accept; `inboundonly` drains only the
//    listeners whose traffic_direction is INBOUND (the Gateway listeners), so the readiness and
//    stats listeners keep answering; `skip_exit` keeps Envoy running after the drain period: the
//    kubelet's SIGTERM ends it.
// c. About once a second, GET /stats?format=json&filter=REGEX: the gauges
//    listener.<address or stat_prefix>.downstream_cx_active of the Gateway listeners. The JSON is
//    {"stats": [{"name": ..., "value": ...}, ...]} (histograms, if any, come as one more element).
// d. Done when at least minDrainMs passed and no connection is left ('drained'), or when
//    drainTimeoutMs passed ('timeout'). An admin that refuses or resets a connection at any step
//    is gone: nothing is left to drain ('gone'). An admin that does not answer in time is one
//    failed step, not a hung drain.
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { READINESS_STAT_PREFIX, STATS_STAT_PREFIX } from '@turnpike/xds';

export type DrainResult = 'drained' | 'timeout' | 'gone';

export interface DrainReport {
  result: DrainResult;
  elapsedMs: number;
  /** Active downstream connections of the Gateway listeners at the last poll that answered. */
  lastActive: number | null;
}

export interface DrainOptions {
  adminPort: number;
  /** The admin's address (default 127.0.0.1: Envoy's admin listens on loopback only). */
  adminHost?: string;
  drainTimeoutMs: number;
  minDrainMs: number;
  /** Between two polls of the connection count (default 1 s). */
  pollIntervalMs?: number;
  /** The longest any one admin request may take (default 2 s, and never past the drain timeout). */
  requestTimeoutMs?: number;
  /** One line per phase. */
  log: (line: string) => void;
}

export const DEFAULT_POLL_INTERVAL_MS = 1000;
export const DEFAULT_ADMIN_REQUEST_TIMEOUT_MS = 2000;

/** Envoy's graceful drain of the inbound listeners, staying up afterwards (admin docs, /drain_listeners). */
export const DRAIN_LISTENERS_PATH = '/drain_listeners?graceful&inboundonly&skip_exit';

/**
 * Every listener's active connections. RE2 (the admin's regex engine) has no lookahead, so the
 * listeners that are not Gateway listeners are left out here, by `isGatewayListenerGauge`.
 */
export const ACTIVE_CONNECTIONS_FILTER = '^listener\\..*\\.downstream_cx_active$';
export const STATS_PATH = `/stats?format=json&filter=${encodeURIComponent(ACTIVE_CONNECTIONS_FILTER)}`;

const NOT_GATEWAY_LISTENERS = new Set(['admin', READINESS_STAT_PREFIX, STATS_STAT_PREFIX]);

/**
 * Whether a stat is the active-connection gauge of a Gateway listener: not the admin's, not the
 * readiness or stats listener's, and not a per-worker copy (`listener.<address>.worker_N.` and the
 * admin's `main_thread`, see the listener statistics' per-handler stats), which would count twice.
 */
export function isGatewayListenerGauge(name: string): boolean {
  const m = /^listener\.(.+)\.downstream_cx_active$/.exec(name);
  if (!m) return false;
  const scope = m[1]!;
  if (/\.(worker_\d+|main_thread)$/.test(scope)) return false;
  return !NOT_GATEWAY_LISTENERS.has(scope);
}

/** The Gateway listeners' active connections in a /stats?format=json answer; undefined if it has no such shape. */
export function activeConnections(body: string): number | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const stats = (parsed as { stats?: unknown } | null)?.stats;
  if (!Array.isArray(stats)) return undefined;
  let total = 0;
  for (const s of stats as { name?: unknown; value?: unknown }[]) {
    if (typeof s?.name !== 'string' || !isGatewayListenerGauge(s.name)) continue;
    if (typeof s.value !== 'number') return undefined;
    total += s.value;
  }
  return total;
}

type AdminAnswer = { kind: 'ok'; status: number; body: string } | { kind: 'gone' | 'failed'; reason: string };

/** Connection errors that mean nothing listens on the admin port any more (Envoy exited). */
const GONE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);

function adminRequest(host: string, port: number, method: string, path: string, timeoutMs: number) {
  return new Promise<AdminAnswer>((resolve) => {
    let timedOut = false;
    let settled = false;
    const settle = (a: AdminAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(a);
    };
    // Errors come on the request before the answer's head, on the answer after it.
    const failed = (e: NodeJS.ErrnoException) => {
      if (timedOut) settle({ kind: 'failed', reason: `no answer within ${timeoutMs} ms` });
      else if (e.code && GONE_CODES.has(e.code)) settle({ kind: 'gone', reason: e.code });
      else settle({ kind: 'failed', reason: e.code ?? e.message });
    };
    const req = request({ host, port, method, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => settle({ kind: 'ok', status: res.statusCode ?? 0, body }));
      res.on('error', failed);
      res.on('close', () => failed(new Error('the answer was cut short')));
    });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy();
    }, timeoutMs);
    req.on('error', failed);
    req.on('close', () => failed(new Error('the connection closed')));
    req.end();
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function drainEnvoy(options: DrainOptions): Promise<DrainReport> {
  const { adminPort, drainTimeoutMs, minDrainMs, log } = options;
  const host = options.adminHost ?? '127.0.0.1';
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_ADMIN_REQUEST_TIMEOUT_MS;
  const start = performance.now();
  const elapsed = () => Math.round(performance.now() - start);
  const remaining = () => drainTimeoutMs - (performance.now() - start);
  let lastActive: number | null = null;
  const end = (result: DrainResult, line: string): DrainReport => {
    const report = { result, elapsedMs: elapsed(), lastActive };
    log(`drain ${result} after ${report.elapsedMs} ms: ${line}`);
    return report;
  };
  const admin = (method: string, path: string) =>
    adminRequest(host, adminPort, method, path, Math.max(1, Math.ceil(Math.min(requestTimeoutMs, remaining()))));

  // a and b: a step the admin refuses or does not answer is logged, and the drain goes on (the
  // connection count still decides); an admin that is gone ends it.
  for (const [path, what] of [
    ['/healthcheck/fail', 'readiness fails from now on (DRAINING)'],
    [DRAIN_LISTENERS_PATH, 'the Gateway listeners discourage new requests'],
  ] as const) {
    const a = await admin('POST', path);
    if (a.kind === 'gone')
      return end('gone', `the admin on ${host}:${adminPort} is gone (${a.reason}) at POST ${path}`);
    if (a.kind === 'ok' && a.status === 200) log(`drain: POST ${path}: ${what}`);
    else log(`drain: POST ${path} failed (${a.kind === 'ok' ? `HTTP ${a.status}` : a.reason}); going on`);
  }

  log(
    `drain: waiting for the Gateway listeners' connections to close ` +
      `(at least ${minDrainMs} ms, at most ${drainTimeoutMs} ms)`,
  );
  let failedPolls = 0;
  for (;;) {
    if (remaining() <= 0) {
      const failures = failedPolls ? `, ${failedPolls} poll(s) failed` : '';
      return end('timeout', `${lastActive ?? 'unknown'} active connection(s) left${failures}`);
    }
    const a = await admin('GET', STATS_PATH);
    if (a.kind === 'gone') return end('gone', `the admin on ${host}:${adminPort} is gone (${a.reason})`);
    const active = a.kind === 'ok' && a.status === 200 ? activeConnections(a.body) : undefined;
    if (active === undefined) {
      if (failedPolls++ === 0) {
        const why = a.kind !== 'ok' ? a.reason : a.status !== 200 ? `HTTP ${a.status}` : 'not the stats JSON';
        log(`drain: GET /stats failed (${why}); polling on`);
      }
    } else {
      lastActive = active;
      if (active === 0 && performance.now() - start >= minDrainMs) return end('drained', 'no active connection left');
    }
    // Poll again in a second, or sooner when the minimum drain ends first with no connection left.
    const untilMin = minDrainMs - (performance.now() - start);
    await sleep(Math.max(0, Math.min(pollIntervalMs, remaining(), active === 0 && untilMin > 0 ? untilMin : Infinity)));
  }
}
