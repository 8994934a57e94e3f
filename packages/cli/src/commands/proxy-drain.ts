// `turnpike proxy-drain serve|start`: the drain helper that runs beside Envoy in every proxy Pod.
// `serve` is the drain container's command; `start` is its preStop hook, and starts the drain over
// loopback; Envoy's own preStop hook waits on `serve`'s GET /wait (see ../proxy-drain/drain-server.ts).
import { request } from 'node:http';
import type { Command } from 'commander';
import { PROXY_ADMIN_PORT, PROXY_DRAIN_PORT } from '@turnpike/api';
import { CliError } from '../errors.js';
import type { DrainReport } from '../proxy-drain/drain.js';
import { describeDrain, startDrainServer } from '../proxy-drain/drain-server.js';

/** A Gateway API duration (GEP-2257): 1 to 4 parts of up to 5 digits, in h, m, s or ms: `60s`, `1m30s`, `500ms`. */
const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

export function parseGatewayDuration(value: string, flag: string): number {
  if (!DURATION.test(value)) throw new CliError(`${flag} ${value}: not a duration (e.g. 60s, 1m30s, 500ms)`);
  let ms = 0;
  for (const [, n, unit] of value.matchAll(/([0-9]+)(h|ms|m|s)/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms;
}

function portFlag(value: string, flag: string, anyFree = false): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n <= 65_535) || (n === 0 && !anyFree))
    throw new CliError(`${flag} ${value}: not a port number (${anyFree ? 0 : 1}-65535)`);
  return n;
}

interface ServeFlags {
  adminPort: string;
  port: string;
  drainTimeout: string;
  minDrainDuration: string;
}

export interface DrainTimes {
  drainTimeoutMs: number;
  minDrainMs: number;
}

export function drainTimes(drainTimeout: string, minDrainDuration: string): DrainTimes {
  const drainTimeoutMs = parseGatewayDuration(drainTimeout, '--drain-timeout');
  const minDrainMs = parseGatewayDuration(minDrainDuration, '--min-drain-duration');
  if (drainTimeoutMs === 0) throw new CliError(`--drain-timeout ${drainTimeout}: must be longer than 0`);
  if (minDrainMs > drainTimeoutMs)
    throw new CliError(
      `--min-drain-duration ${minDrainDuration} is longer than --drain-timeout ${drainTimeout}: ` +
        'the drain would always time out',
    );
  return { drainTimeoutMs, minDrainMs };
}

const say = (line: string) => process.stdout.write(`turnpike: ${line}\n`);

async function serve(opts: ServeFlags): Promise<void> {
  const adminPort = portFlag(opts.adminPort, '--admin-port');
  const port = portFlag(opts.port, '--port', true);
  const times = drainTimes(opts.drainTimeout, opts.minDrainDuration);
  let s: Awaited<ReturnType<typeof startDrainServer>>;
  try {
    s = await startDrainServer({ port, adminPort, ...times, log: say });
  } catch (e) {
    throw new CliError(`--port ${opts.port}: cannot listen (${(e as Error).message})`);
  }
  say(
    `proxy-drain listening on port ${s.port} (GET /wait; POST /drain from loopback), Envoy admin on ` +
      `127.0.0.1:${adminPort}, drain ${times.minDrainMs}-${times.drainTimeoutMs} ms`,
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      say(`proxy-drain: ${signal}, stopping`);
      void s.close().then(resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  // A drain still under way would keep the process up until its timeout: the kubelet asked us to stop.
  process.exit(0);
}

/** POST /drain on loopback; the answer comes when the drain is over. */
function postDrain(port: number): Promise<DrainReport> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/drain', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('error', reject);
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${body.trim()}`));
        try {
          resolve(JSON.parse(body) as DrainReport);
        } catch {
          reject(new Error(`not a drain result: ${body.slice(0, 200)}`));
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function start(opts: { port: string }): Promise<void> {
  const port = portFlag(opts.port, '--port');
  // Exit 0 whatever the drain's outcome: a failing preStop hook only adds an event, and the kubelet
  // goes on with the Pod's termination either way.
  try {
    const r = await postDrain(port);
    say(`proxy-drain: ${describeDrain(r)}`);
  } catch (e) {
    process.stderr.write(
      `turnpike: proxy-drain start: no drain through 127.0.0.1:${port} (${(e as Error).message}); ` +
        'Envoy stops without draining\n',
    );
  }
}

export function registerProxyDrain(program: Command): void {
  const drain = program
    .command('proxy-drain')
    .description(
      "drain a Gateway proxy before it stops: runs beside Envoy in the proxy Pod ('serve'), " +
        "started by the Pod's preStop hook ('start')",
    );
  drain
    .command('serve')
    .description(
      'serve GET /wait (answers once the drain is over: Envoy preStop) and POST /drain (loopback only: ' +
        'fail readiness, drain the Gateway listeners gracefully, wait for their connections to close)',
    )
    .option('--admin-port <port>', "Envoy's admin port on 127.0.0.1", String(PROXY_ADMIN_PORT))
    .option('--port <port>', 'port to serve on, every address (0: any free port)', String(PROXY_DRAIN_PORT))
    .option('--drain-timeout <duration>', 'the longest a drain lasts (Gateway API duration: 60s, 1m30s)', '60s')
    .option(
      '--min-drain-duration <duration>',
      'the shortest a drain lasts, for the endpoint removal to reach every client (500ms, 10s)',
      '10s',
    )
    .action(serve);
  drain
    .command('start')
    .description('start the drain of the server on this port and print its result, once it is over (preStop)')
    .option('--port <port>', "the drain server's port on 127.0.0.1", String(PROXY_DRAIN_PORT))
    .action(start);
}
