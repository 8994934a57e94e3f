// /healthz (the process serves), /readyz (first sync and translation done), /metrics; and, on
// their own address (loopback by default), JSON debug endpoints (/debug/proxies for `turnpike
// proxy-status`), which name every connected proxy and its peer address.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

export interface HealthServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** `beforeScrape` refreshes gauges that mirror live state (connected proxies) at scrape time. */
export function startHealthServer(
  host: string,
  port: number,
  ready: () => boolean,
  registry: Registry,
  beforeScrape?: () => void,
): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
      return;
    }
    if (path === '/readyz') {
      const ok = ready();
      res
        .writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain' })
        .end(ok ? 'ready\n' : 'waiting for the first sync and translation\n');
      return;
    }
    if (path === '/metrics') {
      beforeScrape?.();
      registry.metrics().then(
        (body) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(body),
        (e) => res.writeHead(500).end(String(e)),
      );
      return;
    }
    res.writeHead(404).end();
  });
  return listen(server, host, port);
}

/** An endpoint that writes its own answer (a capture streams many megabytes). */
export type DebugStream = (url: URL, res: ServerResponse) => Promise<void>;

/** JSON debug endpoints on an address of their own: GET PATH answers `endpoints[PATH]()`, or streams. */
export function startDebugServer(
  host: string,
  port: number,
  endpoints: Record<string, () => unknown>,
  streams: Record<string, DebugStream> = {},
): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://debug');
    const stream = streams[url.pathname];
    if (stream && req.method === 'GET') {
      stream(url, res).catch((e: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${e.message}\n`);
        else res.destroy(e);
      });
      return;
    }
    const dbg = endpoints[url.pathname];
    if (!dbg || req.method !== 'GET') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(`${JSON.stringify(dbg(), null, 2)}\n`);
  });
  return listen(server, host, port);
}

/** Listens on host:port (0: any free port); resolves with the port it got. */
function listen(server: Server, host: string, port: number): Promise<HealthServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address();
      resolve({
        server,
        port: typeof addr === 'object' && addr ? addr.port : port,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}
