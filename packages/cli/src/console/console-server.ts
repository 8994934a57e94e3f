// The console's HTTP server: the page and its assets (built into dist/console-ui, Preact and htm
// served from the package's own dependencies: nothing comes from a CDN) and a small JSON API over
// ConsoleData. Meant for loopback or a port-forward: it shows every status and the xDS of every
// Gateway; console-access.ts says who may read it.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkAccess, consoleAccess, type ConsoleAccess } from './console-access.js';
import type { ConsoleData } from './console-data.js';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, '../..');

const ASSETS: Record<string, { file: () => string; type: string }> = {
  '/': { file: () => join(packageRoot, 'console-ui/index.html'), type: 'text/html; charset=utf-8' },
  '/assets/style.css': { file: () => join(packageRoot, 'console-ui/style.css'), type: 'text/css; charset=utf-8' },
  '/assets/app.js': { file: () => join(packageRoot, 'dist/console-ui/app.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/vendor/preact.mjs': { file: () => require.resolve('preact'), type: 'text/javascript; charset=utf-8' },
  '/assets/vendor/hooks.mjs': { file: () => require.resolve('preact/hooks'), type: 'text/javascript; charset=utf-8' },
  '/assets/vendor/htm.mjs': {
    file: () => join(dirname(require.resolve('htm')), 'htm.mjs'),
    type: 'text/javascript; charset=utf-8',
  },
};

class BadRequest extends Error {}

function intParam(q: URLSearchParams, name: string, fallback?: number): number {
  const raw = q.get(name);
  if (raw === null) {
    if (fallback === undefined) throw new BadRequest(`${name} is required`);
    return fallback;
  }
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new BadRequest(`${name}=${raw}: not a whole number`);
  return n;
}

function stringParam(q: URLSearchParams, name: string): string {
  const v = q.get(name);
  if (!v) throw new BadRequest(`${name} is required`);
  return v;
}

/** The API: each route reads its query and returns JSON. */
function api(data: ConsoleData, path: string, q: URLSearchParams): unknown {
  switch (path) {
    case '/api/summary':
      return data.summary();
    case '/api/event':
      return data.eventAt(intParam(q, 'seq')) ?? null;
    case '/api/events':
      return data.events(intParam(q, 'offset', 0), Math.min(500, intParam(q, 'limit', 50)));
    case '/api/density':
      return data.density(Math.min(1000, Math.max(1, intParam(q, 'buckets', 200))));
    case '/api/objects':
      return data.objects(intParam(q, 'seq'), {
        filter: q.get('filter') ?? '',
        trouble: q.get('trouble') === 'true',
        offset: intParam(q, 'offset', 0),
        limit: Math.min(500, intParam(q, 'limit', 100)),
      });
    case '/api/object':
      return data.object(stringParam(q, 'key'), intParam(q, 'seq'));
    case '/api/history':
      return data.history(stringParam(q, 'key'));
    case '/api/diff':
      return data.diff(intParam(q, 'a'), intParam(q, 'b'));
    default:
      return undefined;
  }
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(body);
}

function handle(data: ConsoleData, access: ConsoleAccess, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://console');
  const verdict = checkAccess(access, req, url);
  if (!verdict.ok) return send(res, verdict.status, 'text/plain', verdict.message);
  if (verdict.setCookie) res.setHeader('set-cookie', verdict.setCookie);
  if (req.method !== 'GET') return send(res, 405, 'text/plain', 'only GET\n');
  const asset = ASSETS[url.pathname];
  if (asset) {
    try {
      return send(res, 200, asset.type, readFileSync(asset.file()));
    } catch (e) {
      return send(res, 500, 'text/plain', `console asset missing (${(e as Error).message}); run pnpm run build\n`);
    }
  }
  if (!url.pathname.startsWith('/api/')) return send(res, 404, 'text/plain', 'not found\n');
  const fail = (e: unknown) => {
    const status = e instanceof BadRequest ? 400 : 500;
    send(res, status, 'application/json', JSON.stringify({ error: (e as Error).message }));
  };
  try {
    const body = api(data, url.pathname, url.searchParams);
    if (body === undefined)
      return send(res, 404, 'application/json', JSON.stringify({ error: `no such endpoint ${url.pathname}` }));
    // A long answer (an object's history) is computed in slices: other requests are served meanwhile.
    if (body instanceof Promise) body.then((b) => send(res, 200, 'application/json', JSON.stringify(b)), fail);
    else send(res, 200, 'application/json', JSON.stringify(body));
  } catch (e) {
    fail(e);
  }
}

/** Listens on host:port (0: any free port); resolves with the server and the port it got. */
export function startConsoleServer(
  data: ConsoleData,
  host: string,
  port: number,
  access: ConsoleAccess = consoleAccess(host),
): Promise<{ server: Server; port: number; token?: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => handle(data, access, req, res));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      resolve({
        server,
        port: bound,
        ...(access.token ? { token: access.token } : {}),
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}
