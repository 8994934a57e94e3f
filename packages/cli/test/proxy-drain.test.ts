// `turnpike proxy-drain`: the drain sequence against a stand-in for Envoy's admin API, the server
// that Envoy's preStop hook waits on and that only loopback may start, and the command itself.
// Every wait is on a condition; durations are short and only their lower bounds are asserted.
import { spawn } from 'node:child_process';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { networkInterfaces } from 'node:os';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import {
  activeConnections,
  drainEnvoy,
  isGatewayListenerGauge,
  type DrainOptions,
  type DrainReport,
} from '../src/proxy-drain/drain.js';
import { isLoopbackAddress, startDrainServer } from '../src/proxy-drain/drain-server.js';
import { CLI, turnpike, waitFor, type Result } from './cli-helpers.js';

/** The two Gateway listeners' gauges, and gauges of everything the drain must leave out of its count. */
const GATEWAY_HTTP = 'listener.0.0.0.0_10080.downstream_cx_active';
const GATEWAY_HTTPS = 'listener.[__]_10443.downstream_cx_active';
const NOT_COUNTED: Record<string, number> = {
  'listener.admin.downstream_cx_active': 1,
  'listener.admin.main_thread.downstream_cx_active': 1,
  'listener.turnpike_readiness.downstream_cx_active': 2,
  'listener.turnpike_stats.downstream_cx_active': 1,
  'listener.0.0.0.0_10080.worker_0.downstream_cx_active': 5,
  'http.gateway.downstream_cx_active': 4,
  'listener_manager.total_listeners_active': 3,
};

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  raw: string;
}

/**
 * A stand-in for Envoy's admin (https://www.envoyproxy.io/docs/envoy/latest/operations/admin):
 * mutations only by POST (a GET of one is a 400), /healthcheck/fail turns LIVE into DRAINING,
 * /ready answers 200 LIVE or 503 DRAINING, /drain_listeners takes graceful, inboundonly and
 * skip_exit (which needs graceful), /stats?format=json&filter=RE answers {"stats": [{name, value}]}.
 */
class FakeAdmin {
  readonly seen: Seen[] = [];
  readonly gauges = new Map<string, number>(Object.entries(NOT_COUNTED));
  state: 'LIVE' | 'DRAINING' = 'LIVE';
  hangStats = false;
  port = 0;
  private readonly server: Server = createServer((req, res) => this.handle(req, res));

  constructor(http: number, https: number) {
    this.gauges.set(GATEWAY_HTTP, http);
    this.gauges.set(GATEWAY_HTTPS, https);
  }

  async listen(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** Envoy exits: connections are reset, and then refused. */
  close(): Promise<void> {
    return new Promise((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }

  statsPolls(): Seen[] {
    return this.seen.filter((s) => s.path === '/stats');
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://admin');
    const seen = { method: req.method ?? '', path: url.pathname, query: url.searchParams, raw: req.url ?? '' };
    if (url.pathname !== '/ready') this.seen.push(seen);
    const text = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(body);
    };
    const mutation = url.pathname === '/healthcheck/fail' || url.pathname === '/drain_listeners';
    if (mutation && req.method !== 'POST') return text(400, 'This is a mutation; use POST\n');
    switch (url.pathname) {
      case '/healthcheck/fail':
        this.state = 'DRAINING';
        return text(200, 'OK\n');
      case '/drain_listeners':
        if (url.searchParams.has('skip_exit') && !url.searchParams.has('graceful'))
          return text(400, 'skip_exit requires graceful\n');
        return text(200, 'OK\n');
      case '/ready':
        return text(this.state === 'LIVE' ? 200 : 503, `${this.state}\n`);
      case '/stats': {
        if (this.hangStats) return; // never answers
        if (url.searchParams.get('format') !== 'json') return text(400, 'format=json expected by this stand-in\n');
        const filter = new RegExp(url.searchParams.get('filter') ?? '');
        const stats = [...this.gauges]
          .filter(([name]) => filter.test(name))
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([name, value]) => ({ name, value }));
        res.writeHead(200, { 'content-type': 'application/json' });
        // Histograms come as one more element of the array.
        return void res.end(
          JSON.stringify({ stats: [...stats, { histograms: { supported_quantiles: [0, 50, 100] } }] }),
        );
      }
      default:
        return text(404, 'invalid path\n');
    }
  }
}

function http(
  method: string,
  host: string,
  port: number,
  path: string,
  localAddress?: string,
): Promise<{ status: number; body: string; at: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { method, host, port, path, agent: false, ...(localAddress ? { localAddress } : {}) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, at: performance.now() }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A port nothing listens on (a server took it and let it go). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Watches a promise so a test can assert it is still pending. */
function track<T>(p: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  return { promise: p, settled: () => settled };
}

// Conditions are awaited with their own bounds (waitFor: 10 s); a loaded machine may need them.
jest.setTimeout(30_000);

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function admin(http: number, https: number): Promise<FakeAdmin> {
  const a = await new FakeAdmin(http, https).listen();
  cleanups.push(() => a.close());
  return a;
}

/** Short durations, fast polls; the lines logged go to `lines` when given. */
const options = (a: { port: number }, o: Partial<DrainOptions> = {}, lines: string[] = []): DrainOptions => ({
  adminPort: a.port,
  drainTimeoutMs: 10_000,
  minDrainMs: 200,
  pollIntervalMs: 50,
  log: (l) => lines.push(l),
  ...o,
});

describe('drainEnvoy', () => {
  it('fails readiness, drains the inbound listeners gracefully without exiting, polls the gauges', async () => {
    const a = await admin(0, 0);
    expect((await http('GET', '127.0.0.1', a.port, '/ready')).status).toBe(200);
    const r = await drainEnvoy(options(a));
    expect(r).toEqual({ result: 'drained', elapsedMs: expect.any(Number), lastActive: 0 });
    const [fail, drain, ...polls] = a.seen;
    expect([fail?.method, fail?.raw]).toEqual(['POST', '/healthcheck/fail']);
    expect([drain?.method, drain?.path, [...drain!.query.keys()].sort()]).toEqual([
      'POST',
      '/drain_listeners',
      ['graceful', 'inboundonly', 'skip_exit'],
    ]);
    expect(polls.length).toBeGreaterThanOrEqual(1);
    for (const p of polls) {
      expect([p.method, p.path, p.query.get('format')]).toEqual(['GET', '/stats', 'json']);
      // The filter (decoded, as the admin decodes it) selects every listener's active connections.
      const filter = new RegExp(p.query.get('filter')!);
      expect([GATEWAY_HTTP, GATEWAY_HTTPS].every((n) => filter.test(n))).toBe(true);
      expect(filter.test('http.gateway.downstream_cx_active')).toBe(false);
    }
    // After /healthcheck/fail the server is DRAINING: the readiness probe fails.
    const ready = await http('GET', '127.0.0.1', a.port, '/ready');
    expect([ready.status, ready.body]).toEqual([503, 'DRAINING\n']);
  });

  it('ends when the Gateway listeners have no connection left, whatever the other listeners hold', async () => {
    const a = await admin(3, 2);
    const drain = track(drainEnvoy(options(a)));
    await waitFor(() => a.statsPolls().length >= 3);
    expect(drain.settled()).toBe(false);
    a.gauges.set(GATEWAY_HTTP, 0);
    const polls = a.statsPolls().length;
    await waitFor(() => a.statsPolls().length >= polls + 2);
    expect(drain.settled()).toBe(false); // 2 left on the HTTPS listener
    a.gauges.set(GATEWAY_HTTPS, 0);
    const r = await drain.promise;
    expect(r.result).toBe('drained');
    expect(r.lastActive).toBe(0);
    expect(r.elapsedMs).toBeGreaterThanOrEqual(200);
  });

  it('never ends before the minimum drain, even with no connection from the start', async () => {
    const a = await admin(0, 0);
    const t0 = performance.now();
    const r = await drainEnvoy(options(a, { minDrainMs: 400 }));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(400);
    expect(r).toEqual({ result: 'drained', elapsedMs: expect.any(Number), lastActive: 0 });
    expect(r.elapsedMs).toBeGreaterThanOrEqual(400);
    // It saw zero before the minimum and kept polling.
    expect(a.statsPolls().length).toBeGreaterThanOrEqual(2);
  });

  it('a Gateway whose connections never close ends in timeout after the drain timeout', async () => {
    const a = await admin(2, 0);
    const t0 = performance.now();
    const r = await drainEnvoy(options(a, { drainTimeoutMs: 1500 }));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1500);
    expect(r).toEqual({ result: 'timeout', elapsedMs: expect.any(Number), lastActive: 2 });
    expect(r.elapsedMs).toBeGreaterThanOrEqual(1500);
  });

  it('an admin that is not there ends the drain at once as gone, not as an error', async () => {
    const port = await closedPort();
    const lines: string[] = [];
    const r = await drainEnvoy(options({ port }, { drainTimeoutMs: 30_000 }, lines));
    expect(r).toEqual({ result: 'gone', elapsedMs: expect.any(Number), lastActive: null });
    expect(r.elapsedMs).toBeLessThan(15_000); // the timeout is 30 s
    expect(lines.at(-1)).toMatch(/^drain gone after \d+ ms: .*ECONNREFUSED.* at POST \/healthcheck\/fail$/);
  });

  it('an admin that goes away during the drain (Envoy exited) ends it as gone, with the last count seen', async () => {
    const a = await admin(4, 0);
    const drain = drainEnvoy(options(a, { drainTimeoutMs: 30_000 }));
    await waitFor(() => a.statsPolls().length >= 2);
    await a.close();
    const r = await drain;
    expect(r.result).toBe('gone');
    expect(r.lastActive).toBe(4);
    expect(r.elapsedMs).toBeLessThan(15_000);
  });

  it('an admin that never answers /stats still ends at the drain timeout: a request never outlasts it', async () => {
    const a = await admin(1, 1);
    a.hangStats = true;
    // One request may take 10 s, the whole drain 1.5 s: the drain's bound wins.
    const lines: string[] = [];
    const r = await drainEnvoy(options(a, { drainTimeoutMs: 1500, requestTimeoutMs: 10_000 }, lines));
    expect(r).toEqual({ result: 'timeout', elapsedMs: expect.any(Number), lastActive: null });
    expect(r.elapsedMs).toBeGreaterThanOrEqual(1500);
    expect(r.elapsedMs).toBeLessThan(10_000);
    expect(lines).toContainEqual(
      expect.stringMatching(/^drain: GET \/stats failed \(no answer within \d+ ms\); polling on$/),
    );
  }, 20_000);

  it('a poll that hangs is one failed poll: the next ones still count', async () => {
    const a = await admin(1, 0);
    a.hangStats = true;
    const drain = track(drainEnvoy(options(a, { requestTimeoutMs: 100 })));
    await waitFor(() => a.statsPolls().length >= 2);
    a.hangStats = false;
    a.gauges.set(GATEWAY_HTTP, 0);
    const r = await drain.promise;
    expect([r.result, r.lastActive]).toEqual(['drained', 0]);
  });

  it('counts the Gateway listeners only, once each', () => {
    expect(isGatewayListenerGauge(GATEWAY_HTTP)).toBe(true);
    expect(isGatewayListenerGauge(GATEWAY_HTTPS)).toBe(true);
    expect(isGatewayListenerGauge('listener.shop_gw_http.downstream_cx_active')).toBe(true);
    for (const name of Object.keys(NOT_COUNTED)) expect([name, isGatewayListenerGauge(name)]).toEqual([name, false]);
    const body = JSON.stringify({
      stats: [
        { name: GATEWAY_HTTP, value: 3 },
        { name: 'listener.0.0.0.0_10080.worker_1.downstream_cx_active', value: 3 },
        { name: GATEWAY_HTTPS, value: 4 },
        { name: 'listener.turnpike_readiness.downstream_cx_active', value: 9 },
        { histograms: {} },
      ],
    });
    expect(activeConnections(body)).toBe(7);
    expect(activeConnections(JSON.stringify({ stats: [] }))).toBe(0);
    expect(activeConnections('no json')).toBeUndefined();
    expect(activeConnections(JSON.stringify({ stats: [{ name: GATEWAY_HTTP, value: 'x' }] }))).toBeUndefined();
  });
});

describe('drain server', () => {
  async function serve(a: { port: number }, o: Partial<Parameters<typeof startDrainServer>[0]> = {}) {
    const s = await startDrainServer({ ...options(a), host: '127.0.0.1', port: 0, ...o });
    cleanups.push(() => s.close());
    return s;
  }

  it('security: only loopback peers may start a drain (127.0.0.0/8, ::1, IPv4-mapped loopback)', () => {
    for (const ok of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::FFFF:127.9.9.9'])
      expect([ok, isLoopbackAddress(ok)]).toEqual([ok, true]);
    for (const no of ['10.0.0.7', '192.0.2.2', '::ffff:10.0.0.7', 'fd00::2', '::', '0.0.0.0', '', undefined, 'x'])
      expect([no, isLoopbackAddress(no)]).toEqual([no, false]);
  });

  it('GET /wait blocks until a loopback POST /drain has finished; a second POST joins the drain', async () => {
    const a = await admin(1, 0);
    const s = await serve(a);
    const wait = track(http('GET', '127.0.0.1', s.port, '/wait'));
    await waitFor(() => s.waiting() === 1);
    expect(a.seen).toEqual([]); // waiting starts nothing
    const first = track(http('POST', '127.0.0.1', s.port, '/drain'));
    const second = track(http('POST', '127.0.0.1', s.port, '/drain'));
    await waitFor(() => a.statsPolls().length >= 2);
    expect([wait.settled(), first.settled(), second.settled()]).toEqual([false, false, false]);
    const zeroAt = performance.now();
    a.gauges.set(GATEWAY_HTTP, 0);
    const [w, p1, p2] = await Promise.all([wait.promise, first.promise, second.promise]);
    expect(w.at).toBeGreaterThanOrEqual(zeroAt);
    expect([w.status, w.body]).toEqual([200, expect.stringMatching(/^drained after \d+ ms \(0 active connection/)]);
    const report = JSON.parse(p1.body) as DrainReport;
    expect([p1.status, report.result, report.lastActive]).toEqual([200, 'drained', 0]);
    expect(p2.body).toBe(p1.body);
    expect(a.seen.filter((x) => x.path === '/healthcheck/fail')).toHaveLength(1);
    // Once it is over, a wait answers at once.
    expect((await http('GET', '127.0.0.1', s.port, '/wait')).body).toBe(w.body);
    expect((await http('GET', '127.0.0.1', s.port, '/nope')).status).toBe(404);
    expect((await http('GET', '127.0.0.1', s.port, '/drain')).status).toBe(404);
  });

  it('security: a POST /drain from the Pod network is refused 403 and starts nothing', async () => {
    const a = await admin(1, 0);
    const s = await serve(a, { host: '0.0.0.0' });
    const own = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (!own) throw new Error('this test needs a non-loopback IPv4 address on this machine to connect from');
    const r = await http('POST', own, s.port, '/drain', own);
    expect([r.status, r.body]).toEqual([403, 'a drain starts from loopback only (turnpike proxy-drain start)\n']);
    // /wait is for anyone.
    const wait = track(http('GET', own, s.port, '/wait', own));
    await waitFor(() => s.waiting() === 1);
    expect([s.drain(), a.seen, wait.settled()]).toEqual([undefined, [], false]);
  });

  it('GET /wait answers after its bound when no drain ever starts (by default the drain timeout + 10 s)', async () => {
    const a = await admin(1, 0);
    expect((await serve(a, { drainTimeoutMs: 60_000 })).waitBoundMs).toBe(70_000);
    const s = await serve(a, { waitBoundMs: 300 });
    const t0 = performance.now();
    const r = await http('GET', '127.0.0.1', s.port, '/wait');
    expect(r.at - t0).toBeGreaterThanOrEqual(300);
    expect([r.status, r.body]).toEqual([200, 'no drain started within 300 ms\n']);
    expect(a.seen).toEqual([]);
  });

  it('at most 4 wait at once from one address and 256 in all: the rest get 429; a waiter that leaves frees its place', async () => {
    const a = await admin(1, 0);
    const s = await serve(a, { maxWaiters: 6 });
    const waiter = (localAddress: string) => {
      const req = request({ host: '127.0.0.1', port: s.port, path: '/wait', agent: false, localAddress });
      const answer = new Promise<number>((resolve) => {
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', () => resolve(-1));
      });
      req.end();
      return { req, answer };
    };
    // One client holds its four places; a fifth from it is refused…
    const mine = Array.from({ length: 4 }, () => waiter('127.0.0.1'));
    await waitFor(() => s.waiting() === 4);
    const fifth = await http('GET', '127.0.0.1', s.port, '/wait', '127.0.0.1');
    expect([fifth.status, fifth.body]).toEqual([429, 'at most 4 requests wait at once from one address\n']);
    // …while another address (the kubelet's, from its node) still gets a place, up to the total.
    const others = [waiter('127.0.0.2'), waiter('127.0.0.3')];
    await waitFor(() => s.waiting() === 6);
    const full = await http('GET', '127.0.0.1', s.port, '/wait', '127.0.0.4');
    expect([full.status, full.body]).toEqual([429, 'at most 6 requests wait at once\n']);
    mine[0]!.req.destroy();
    await waitFor(() => s.waiting() === 5);
    const again = track(http('GET', '127.0.0.1', s.port, '/wait', '127.0.0.1'));
    await waitFor(() => s.waiting() === 6);
    expect(again.settled()).toBe(false);
    // Stopping the server answers whoever still waits.
    await s.close();
    expect(await Promise.all([...mine.slice(1), ...others].map((r) => r.answer))).toEqual(Array(5).fill(503));
    expect((await again.promise).status).toBe(503);
  });
});

describe('turnpike proxy-drain (the built command)', () => {
  function run(...args: string[]) {
    const p = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '',
      stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<Result>((res) => p.on('close', (code) => res({ code: code ?? -1, stdout, stderr })));
    cleanups.push(() => {
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    });
    return { p, exited, stdout: () => stdout };
  }

  async function serveCommand(adminPort: number) {
    const s = run(
      'proxy-drain',
      'serve',
      '--port',
      '0',
      '--admin-port',
      String(adminPort),
      '--drain-timeout',
      '20s',
      '--min-drain-duration',
      '300ms',
    );
    await waitFor(() => /listening on port \d+/.test(s.stdout()), 30_000);
    return { ...s, port: Number(/listening on port (\d+)/.exec(s.stdout())![1]) };
  }

  it('start drains through a running serve, prints the result and exits 0; serve exits 0 on SIGTERM', async () => {
    const a = await admin(2, 0);
    const s = await serveCommand(a.port);
    const wait = track(http('GET', '127.0.0.1', s.port, '/wait'));
    const start = run('proxy-drain', 'start', '--port', String(s.port));
    await waitFor(() => a.statsPolls().length >= 2, 30_000);
    expect(wait.settled()).toBe(false);
    a.gauges.set(GATEWAY_HTTP, 0);
    const r = await start.exited;
    expect([r.code, r.stdout, r.stderr]).toEqual([
      0,
      expect.stringMatching(/^turnpike: proxy-drain: drained after \d+ ms \(0 active connection\(s\)\)\n$/),
      '',
    ]);
    expect((await wait.promise).status).toBe(200);
    expect(a.seen.slice(0, 2).map((x) => x.raw)).toEqual([
      '/healthcheck/fail',
      '/drain_listeners?graceful&inboundonly&skip_exit',
    ]);
    s.p.kill('SIGTERM');
    const stopped = await s.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain('turnpike: drain drained after');
    expect(stopped.stdout).toContain('turnpike: proxy-drain: SIGTERM, stopping');
  }, 60_000);

  it('start exits 0 when Envoy is gone, and when no drain server answers, saying so', async () => {
    const s = await serveCommand(await closedPort());
    const gone = await run('proxy-drain', 'start', '--port', String(s.port)).exited;
    expect([gone.code, gone.stdout]).toEqual([0, expect.stringMatching(/^turnpike: proxy-drain: gone after \d+ ms/)]);
    const port = await closedPort();
    const none = await run('proxy-drain', 'start', '--port', String(port)).exited;
    expect([none.code, none.stdout, none.stderr]).toEqual([
      0,
      '',
      expect.stringContaining(`turnpike: proxy-drain start: no drain through 127.0.0.1:${port} (`),
    ]);
  }, 60_000);

  it('bad flags are refused, naming the flag', () => {
    const mistakes: [string[], string][] = [
      [
        ['proxy-drain', 'serve', '--drain-timeout', '1 minute'],
        'turnpike: --drain-timeout 1 minute: not a duration (e.g. 60s, 1m30s, 500ms)',
      ],
      [
        ['proxy-drain', 'serve', '--min-drain-duration', '10'],
        'turnpike: --min-drain-duration 10: not a duration (e.g. 60s, 1m30s, 500ms)',
      ],
      [
        ['proxy-drain', 'serve', '--drain-timeout', '30s', '--min-drain-duration', '1m'],
        'turnpike: --min-drain-duration 1m is longer than --drain-timeout 30s: the drain would always time out',
      ],
      [['proxy-drain', 'serve', '--drain-timeout', '0s'], 'turnpike: --drain-timeout 0s: must be longer than 0'],
      [['proxy-drain', 'serve', '--admin-port', '99999'], 'turnpike: --admin-port 99999: not a port number (1-65535)'],
      [['proxy-drain', 'serve', '--port', 'http'], 'turnpike: --port http: not a port number (0-65535)'],
      [['proxy-drain', 'start', '--port', '0'], 'turnpike: --port 0: not a port number (1-65535)'],
    ];
    for (const [args, message] of mistakes) {
      const r = turnpike(...args);
      expect([args.join(' '), r.code, r.stderr.trim()]).toEqual([args.join(' '), 2, message]);
    }
    const unknown = turnpike('proxy-drain', 'start', '--drain-timeout', '5s');
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining("unknown option '--drain-timeout'")]);
  });

  it('accepts Gateway API durations in several parts', async () => {
    const a = await admin(0, 0);
    const s = run(
      'proxy-drain',
      'serve',
      '--port',
      '0',
      '--admin-port',
      String(a.port),
      '--drain-timeout',
      '1m30s',
      '--min-drain-duration',
      '1s500ms',
    );
    await waitFor(() => /listening on port \d+/.test(s.stdout()), 30_000);
    expect(s.stdout()).toContain('drain 1500-90000 ms');
    s.p.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
  }, 60_000);
});
