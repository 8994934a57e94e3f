// `turnpike proxy-drain serve`: the drain helper's server, beside Envoy in every proxy Pod.
//
// - GET /wait, from anywhere: Envoy's preStop hook (httpGet, which the kubelet sends to the Pod IP).
//   It answers once a drain has finished, so the kubelet sends Envoy its SIGTERM only then. When no
//   drain starts it answers anyway after drainTimeout + 10 s: a Pod whose drain container died
//   must not hold its Envoy for the whole grace period. At most 4 wait at once from one address and
//   256 in all (then 429): a client on the Pod network holding every place would otherwise make the
//   kubelet's own hook fail at once and Envoy stop undrained; the kubelet calls from its node's
//   address, which one Pod cannot fill.
// - POST /drain, from loopback only: the drain container's own preStop hook (exec
//   `turnpike proxy-drain start`, which runs in the Pod's network namespace). It starts the drain,
//   or joins the one under way, and answers with its result. The port is on the Pod network, so
//   anyone in the cluster reaches it: a drain started from there would take the proxy out of
//   service, hence 403.
import { BlockList } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { drainEnvoy, type DrainOptions, type DrainReport } from './drain.js';

/** How much longer than the drain timeout /wait waits for a drain that never starts. */
export const WAIT_SLACK_MS = 10_000;
export const MAX_WAITERS = 256;
export const MAX_WAITERS_PER_ADDRESS = 4;

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * Whether a peer address (`req.socket.remoteAddress`) is loopback: 127.0.0.0/8, ::1, or
 * 127.0.0.0/8 mapped into IPv6 (`::ffff:127.0.0.1`, as a dual-stack `::` listener sees IPv4).
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  try {
    return loopback.check(address, address.includes(':') ? 'ipv6' : 'ipv4');
  } catch {
    return false; // not an address at all
  }
}

export interface DrainServerOptions extends DrainOptions {
  /** The port to listen on (0: any free port). */
  port: number;
  /** Default: every address (`::`, with IPv4 mapped, or 0.0.0.0 where IPv6 is off). */
  host?: string;
  /** How long /wait waits for a drain that never starts (default drainTimeoutMs + 10 s). */
  waitBoundMs?: number;
  maxWaiters?: number;
  maxWaitersPerAddress?: number;
}

export interface DrainServer {
  server: Server;
  port: number;
  /** The drain's result, once one started. */
  drain(): Promise<DrainReport> | undefined;
  /** How many GET /wait are waiting now. */
  waiting(): number;
  /** How long a GET /wait waits for a drain that never starts. */
  waitBoundMs: number;
  /** Stops listening; waiters still waiting are answered 503. */
  close(): Promise<void>;
}

function answer(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/** One line for people: `drained after 10012 ms (0 active connections)`. */
export function describeDrain(r: DrainReport): string {
  const left = r.lastActive === null ? 'active connections unknown' : `${r.lastActive} active connection(s)`;
  const why = r.result === 'gone' ? "Envoy's admin is not there: nothing left to drain" : left;
  return `${r.result} after ${r.elapsedMs} ms (${why})`;
}

export function startDrainServer(options: DrainServerOptions): Promise<DrainServer> {
  const waitBoundMs = options.waitBoundMs ?? options.drainTimeoutMs + WAIT_SLACK_MS;
  const maxWaiters = options.maxWaiters ?? MAX_WAITERS;
  let running: Promise<DrainReport> | undefined;
  const maxPerAddress = options.maxWaitersPerAddress ?? MAX_WAITERS_PER_ADDRESS;
  const waiters = new Set<ServerResponse>();
  const byAddress = new Map<string, number>();
  /** Waiters that arrived before any drain: they follow it once it starts. */
  const pending = new Set<() => void>();
  const startDrain = () => {
    if (!running) {
      options.log('drain requested from loopback');
      running = drainEnvoy(options);
    }
    return running;
  };

  const wait = (req: IncomingMessage, res: ServerResponse) => {
    const from = req.socket.remoteAddress ?? '';
    const mine = byAddress.get(from) ?? 0;
    if (mine >= maxPerAddress)
      return answer(res, 429, `at most ${maxPerAddress} requests wait at once from one address\n`);
    if (waiters.size >= maxWaiters) return answer(res, 429, `at most ${maxWaiters} requests wait at once\n`);
    waiters.add(res);
    byAddress.set(from, mine + 1);
    const leave = () => {
      if (!waiters.delete(res)) return false;
      const n = (byAddress.get(from) ?? 1) - 1;
      if (n) byAddress.set(from, n);
      else byAddress.delete(from);
      return true;
    };
    const done = (status: number, body: string) => {
      if (!leave()) return;
      clearTimeout(bound);
      answer(res, status, body);
    };
    // The bound holds only while no drain runs; a drain that started ends by its own timeout.
    const bound = setTimeout(() => {
      if (!running) done(200, `no drain started within ${waitBoundMs} ms\n`);
    }, waitBoundMs);
    const follow = () => void running!.then((r) => done(200, `${describeDrain(r)}\n`));
    if (running) follow();
    else pending.add(follow);
    res.on('close', () => {
      leave();
      pending.delete(follow);
      clearTimeout(bound);
    });
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://drain').pathname;
    if (path === '/wait' && req.method === 'GET') return wait(req, res);
    if (path === '/drain' && req.method === 'POST') {
      if (!isLoopbackAddress(req.socket.remoteAddress)) {
        options.log(`refused POST /drain from ${req.socket.remoteAddress ?? 'an unknown address'} (not loopback)`);
        return answer(res, 403, 'a drain starts from loopback only (turnpike proxy-drain start)\n');
      }
      req.resume();
      const first = !running;
      const drain = startDrain();
      if (first) {
        const followers = [...pending];
        pending.clear();
        for (const follow of followers) follow();
      }
      return void drain.then((r) => answer(res, 200, `${JSON.stringify(r)}\n`, 'application/json'));
    }
    answer(res, 404, 'not found: GET /wait, POST /drain (loopback)\n');
  };

  const server = createServer(handle);
  // Slow clients on the Pod network must not hold connections: a request arrives whole in 10 s.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, ...(options.host !== undefined ? { host: options.host } : {}) }, () => {
      server.off('error', reject);
      const address = server.address();
      resolve({
        server,
        port: typeof address === 'object' && address ? address.port : options.port,
        drain: () => running,
        waiting: () => waiters.size,
        waitBoundMs,
        close: () =>
          new Promise<void>((r) => {
            for (const res of [...waiters]) {
              waiters.delete(res);
              answer(res, 503, 'the drain helper is stopping\n');
            }
            pending.clear();
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
  });
}
