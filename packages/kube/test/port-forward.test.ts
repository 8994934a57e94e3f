// forwardToPod against a fake API server that speaks the kubelet's side of v4.channel.k8s.io (the real
// kube-apiserver and the kubelet's own code are in e2e/test/port-forward.test.ts): refusals reject with
// the API server's status and message, a slow reader holds the Pod's side back, and the end of a stream
// is delivered whole.
import { afterEach, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { forwardToPod, KubeApiError, type PodPortForward } from '../src/index.js';
import { kubeClientFor } from './kube-client-for.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function listen(server: Server | HttpServer): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

const status = (code: number, reason: string, message: string) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });

/** The kubelet's side of one stream: port prefixes, then the Pod's port, held back by a slow client. */
function kubelet(ws: WebSocket, port: number, taken: Taken): void {
  taken.streams++;
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16LE(port);
  ws.send(Buffer.concat([Buffer.from([0]), prefix]));
  ws.send(Buffer.concat([Buffer.from([1]), prefix]));
  const pod = connect(port, '127.0.0.1');
  let unsent = 0;
  pod.on('data', (c: Buffer) => {
    taken.bytes += c.length;
    unsent += c.length;
    ws.send(Buffer.concat([Buffer.from([0]), c]), () => {
      unsent -= c.length;
      if (unsent < 256 * 1024) pod.resume();
    });
    if (unsent > 1024 * 1024) pod.pause();
  });
  pod.on('end', () => ws.close(1000));
  pod.on('error', (err) => {
    ws.send(Buffer.concat([Buffer.from([1]), Buffer.from(`error forwarding port ${port} to pod p: ${err.message}`)]));
    ws.close(1000);
  });
  ws.on('message', (d: Buffer) => {
    if (d[0] === 0) pod.write(d.subarray(1));
  });
  // The client's close ends the stream: what the Pod still sends has nowhere to go.
  ws.on('close', () => pod.destroy());
}

/** Streams the fake kubelet opened, and the bytes it took from Pods. */
interface Taken {
  streams: number;
  bytes: number;
}

async function fakeApiServer(): Promise<{ port: number; taken: Taken }> {
  const taken = { streams: 0, bytes: 0 };
  const server = createHttpServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/portforward$/.exec(url.pathname);
    const refuse = (code: number, body: string) =>
      socket.end(
        `HTTP/1.1 ${code} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
    if (req.headers.authorization !== 'Bearer t') return refuse(401, status(401, 'Unauthorized', 'Unauthorized'));
    if (req.headers['sec-websocket-protocol'] !== 'v4.channel.k8s.io') return refuse(400, 'no protocol');
    if (m?.[2] === 'locked')
      return refuse(
        403,
        status(
          403,
          'Forbidden',
          'pods "locked" is forbidden: User "u" cannot create resource "pods/portforward" in API group "" in the namespace "ns"',
        ),
      );
    if (!m || m[2] === 'gone') return refuse(404, status(404, 'NotFound', 'pods "gone" not found'));
    wss.handleUpgrade(req, socket, head, (ws) => kubelet(ws, Number(url.searchParams.get('ports')), taken));
  });
  const port = await listen(server);
  closers.push(
    () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { port, taken };
}

/** A Pod's port that sends `body` to each connection and ends. */
async function podSending(body: Buffer): Promise<number> {
  const server = createServer((s) => {
    s.on('error', () => undefined); // a stream closed early resets it
    s.end(body);
  });
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return listen(server);
}

async function forward(apiPort: number, pod: string, port: number, onStreamError?: (e: Error) => void) {
  const client = kubeClientFor(apiPort);
  const fwd: PodPortForward = await forwardToPod(client, 'ns', pod, port, { onStreamError });
  closers.push(() => fwd.close());
  return fwd;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function waitFor(what: string, f: () => boolean, everyMs = 20, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe('forwardToPod', () => {
  it('rejects a refused forward with the API server status and message', async () => {
    const { port } = await fakeApiServer();
    const client = kubeClientFor(port);
    const denied = await forwardToPod(client, 'ns', 'locked', 8080).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(KubeApiError);
    expect((denied as KubeApiError).status).toBe(403);
    expect((denied as KubeApiError).reason).toBe('Forbidden');
    expect((denied as KubeApiError).message).toBe(
      'port-forward ns/locked:8080: 403 pods "locked" is forbidden: User "u" cannot create resource ' +
        '"pods/portforward" in API group "" in the namespace "ns"',
    );
    const gone = await forwardToPod(client, 'ns', 'gone', 8080).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(KubeApiError);
    expect((gone as KubeApiError).status).toBe(404);
    expect((gone as KubeApiError).message).toContain('pods "gone" not found');
    client.close();
  });

  it('carries an HTTP exchange both ways, a new stream for each connection', async () => {
    const { port } = await fakeApiServer();
    const body = randomBytes(3 * 1024 * 1024 + 7);
    const pod = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const got = Buffer.concat(chunks);
        res.writeHead(200, { 'X-Upload-Sha': sha(got) }).end(body);
      });
    });
    closers.push(() => new Promise<void>((r) => (pod.closeAllConnections(), pod.close(() => r()))));
    const fwd = await forward(port, 'p', await listen(pod));
    const upload = randomBytes(2 * 1024 * 1024);
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`http://127.0.0.1:${fwd.localPort}/x`, { method: 'POST', body: upload });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-upload-sha')).toBe(sha(upload));
      expect(sha(Buffer.from(await res.arrayBuffer()))).toBe(sha(body));
    }
  }, 30_000);

  it('holds the Pod back while the local reader is slow, and delivers the end of the stream whole', async () => {
    const { port, taken } = await fakeApiServer();
    // Large beside what kernel buffers and the forwarder may hold in flight (some 16 MiB on loopback), so that a
    // forwarder that does not hold the Pod back takes it all.
    const body = randomBytes(128 * 1024 * 1024);
    const fwd = await forward(port, 'p', await podSending(body));
    const local: Socket = connect(fwd.localPort, '127.0.0.1');
    local.pause();
    // The first stream was forwardToPod's own check: count this one's bytes only.
    await waitFor('the stream', () => taken.streams === 2);
    taken.bytes = 0;
    // Nothing is read locally: what the kubelet took from the Pod stops growing well short of the body.
    let last = -1;
    await waitFor(
      'the Pod to be held back',
      () => {
        const stalled = taken.bytes > 0 && taken.bytes === last;
        last = taken.bytes;
        return stalled;
      },
      200,
    );
    expect(taken.bytes).toBeLessThan(body.length / 2);
    const chunks: Buffer[] = [];
    local.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise((r) => local.on('end', r));
    local.resume();
    await ended;
    local.destroy();
    expect(Buffer.concat(chunks).length).toBe(body.length);
    expect(sha(Buffer.concat(chunks))).toBe(sha(body));
  }, 60_000);

  it('resets the local connection and reports why when the kubelet cannot reach the port', async () => {
    const { port } = await fakeApiServer();
    const closed = createServer();
    const deadPort = await listen(closed);
    await new Promise<void>((r) => closed.close(() => r()));
    const errors: Error[] = [];
    const fwd = await forward(port, 'p', deadPort, (e) => errors.push(e));
    const local = connect(fwd.localPort, '127.0.0.1');
    const outcome = await new Promise<string>((r) => {
      local.on('error', (e) => r(`error ${e.message}`));
      local.on('end', () => r('end'));
      local.resume();
    });
    expect(outcome).toMatch(/^error/);
    await waitFor('the stream error', () => errors.length > 0);
    expect(errors[0]!.message).toMatch(
      new RegExp(`^port-forward ns/p:${deadPort}: error forwarding port ${deadPort} to pod p: .*ECONNREFUSED`),
    );
  }, 30_000);
});
