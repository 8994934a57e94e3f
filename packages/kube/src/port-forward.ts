// Port-forward to a Pod through the API server (pods/portforward), as `kubectl port-forward` does, for
// an endpoint a Pod serves on loopback only. The API server hands the request to the kubelet, which
// speaks the websocket protocol v4.channel.k8s.io: one websocket per connection to one port, each
// message a channel byte (0 data, 1 error) and its bytes; the first two bytes on each channel are the
// port, little-endian. The protocol has no half-close: a stream ends when the kubelet closes it, once
// the Pod's side ended. A local listener on 127.0.0.1 turns each connection into one such websocket,
// so a caller uses plain http or fetch. @kubernetes/client-node's PortForward drops the API server's
// answer to a refused upgrade (403, 404) and does not hold back a fast sender: hence this, on `ws`.
import type { IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import { createServer, type Socket } from 'node:net';
import WebSocket from 'ws';
import { KubeApiError, type KubeClient } from './client.js';

export const PORT_FORWARD_PROTOCOL = 'v4.channel.k8s.io';

/** Bytes sent to the API server and not yet written out past which the local connection stops being read. */
const SEND_HIGH_WATER = 1024 * 1024;
const SEND_LOW_WATER = 256 * 1024;
const HANDSHAKE_TIMEOUT_MS = 30_000;

export interface PodPortForward {
  /** The port on 127.0.0.1 that forwards: each connection to it is a new stream to the Pod's port. */
  readonly localPort: number;
  /** Stops listening and ends the open streams. */
  close(): Promise<void>;
}

export interface PortForwardOptions {
  /**
   * Told why a stream failed after the forward was set up (the API server refused it, the kubelet could not
   * reach the Pod's port, the connection broke): its local connection is reset.
   */
  onStreamError?: (err: Error) => void;
}

/**
 * Forwards 127.0.0.1:<localPort> to `port` of Pod `namespace`/`pod` through the API server. One stream is
 * opened and closed first (the Pod sees a connection without data), so a refusal rejects here: with
 * KubeApiError carrying the API server's status, reason and message (403: the user lacks get or create on
 * pods/portforward there, a websocket needing both; 404: no such Pod; 400: the Pod is on no node), or an
 * Error when the API server is not reached.
 */
export async function forwardToPod(
  client: KubeClient,
  namespace: string,
  pod: string,
  port: number,
  options: PortForwardOptions = {},
): Promise<PodPortForward> {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`port-forward: bad port ${port}`);
  const what = `port-forward ${namespace}/${pod}:${port}`;
  const probe = await openStream(client, namespace, pod, port, what);
  probe.ws.close(1000);

  const streams = new Set<{ socket: Socket; ws?: WebSocket }>();
  let closed = false;
  const onStreamError = (err: Error) => {
    if (!closed) options.onStreamError?.(err);
  };
  const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) => {
    const stream: { socket: Socket; ws?: WebSocket } = { socket };
    streams.add(stream);
    socket.on('error', () => undefined); // 'close' follows
    socket.on('close', () => streams.delete(stream));
    openStream(client, namespace, pod, port, what).then(
      (opened) => {
        stream.ws = opened.ws;
        if (socket.destroyed) opened.ws.terminate();
        else splice(socket, opened, what, onStreamError);
      },
      (err: Error) => {
        onStreamError(err);
        socket.resetAndDestroy();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const localPort = typeof address === 'object' && address ? address.port : 0;
  return {
    localPort,
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        server.close(() => resolve());
        for (const s of streams) {
          s.socket.resetAndDestroy();
          s.ws?.terminate();
        }
      }),
  };
}

interface Stream {
  ws: WebSocket;
  /** Messages that came before the stream was handed over, and the listener that kept them. */
  early: Buffer[];
  hold: (data: WebSocket.RawData) => void;
}

/** Opens one websocket to the Pod's port: resolves once the API server (and the kubelet) switched protocols. */
async function openStream(
  client: KubeClient,
  namespace: string,
  pod: string,
  port: number,
  what: string,
): Promise<Stream> {
  const cluster = client.kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(cluster.server);
  url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
  const ns = encodeURIComponent(namespace);
  url.pathname = `${url.pathname.replace(/\/$/, '')}/api/v1/namespaces/${ns}/pods/${encodeURIComponent(pod)}/portforward`;
  url.search = `ports=${port}`;
  // Credentials and TLS material as for every request (tokens rotate); its agent honours a proxy-url.
  const opts: RequestOptions = { headers: {} };
  await client.kc.applyToHTTPSOptions(opts);
  const ws = new WebSocket(url, [PORT_FORWARD_PROTOCOL], {
    ...opts,
    perMessageDeflate: false,
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
  });
  // Messages can come in the same read as the handshake's answer, before the caller has the websocket.
  const early: Buffer[] = [];
  const hold = (data: WebSocket.RawData) => early.push(data as Buffer);
  ws.on('message', hold);
  return new Promise<Stream>((resolve, reject) => {
    // Errors after the outcome are followed by 'close', where the stream's user learns of them.
    ws.on('error', (err) => reject(new Error(`${what}: ${err.message}`)));
    ws.once('open', () => resolve({ ws, early, hold }));
    ws.once('unexpected-response', (req, res) => {
      readRefusal(res).then((text) => {
        reject(refusal(res.statusCode ?? 0, text, what));
        req.destroy();
      }, reject);
    });
  });
}

/** The body of a refused upgrade (a Status, or the kubelet's text), up to 64 KiB. */
async function readRefusal(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of res) {
    if (size >= 64 * 1024) continue;
    chunks.push(c as Buffer);
    size += (c as Buffer).length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

function refusal(status: number, text: string, what: string): KubeApiError {
  let st: { reason?: string; message?: string } | undefined;
  try {
    st = JSON.parse(text) as typeof st;
  } catch {
    st = undefined;
  }
  const message = (st?.message ?? text).trim().slice(0, 500) || 'no message';
  return new KubeApiError(status, st?.reason ?? String(status), `${what}: ${status} ${message}`);
}

/** Copies between a local connection and its websocket, each side held back while the other is behind. */
function splice(socket: Socket, { ws, early, hold }: Stream, what: string, onError: (err: Error) => void): void {
  // The kubelet starts each channel with the port: two bytes, not part of the stream.
  const portBytesLeft: [number, number] = [2, 2];
  let errorText = '';
  let failure: Error | undefined;
  const onMessage = (data: Buffer) => {
    const channel = data[0];
    if (channel !== 0 && channel !== 1) return;
    let payload = data.subarray(1);
    const skip = Math.min(portBytesLeft[channel], payload.length);
    if (skip > 0) {
      portBytesLeft[channel] -= skip;
      payload = payload.subarray(skip);
    }
    if (payload.length === 0) return;
    if (channel === 1) errorText += payload.toString('utf8');
    else if (!socket.write(payload)) ws.pause();
  };
  ws.off('message', hold);
  for (const m of early) onMessage(m);
  // binaryType 'nodebuffer': one Buffer a message.
  ws.on('message', (data) => onMessage(data as Buffer));
  socket.on('drain', () => ws.resume());
  ws.on('error', (err) => (failure ??= err));
  ws.on('close', (code) => {
    const err = errorText
      ? new Error(`${what}: ${errorText}`)
      : code !== 1000
        ? new Error(`${what}: stream broken (${failure?.message ?? `websocket closed with ${code}`})`)
        : undefined;
    if (!err) {
      // Clean end: what was written still reaches the local side before its FIN.
      socket.end();
      return;
    }
    if (socket.destroyed) return;
    onError(err);
    // A reset, not a FIN: the local side must not take a broken stream for a whole one.
    socket.resetAndDestroy();
  });

  let unsent = 0;
  socket.on('data', (chunk: Buffer) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    const frame = Buffer.allocUnsafe(chunk.length + 1);
    frame[0] = 0;
    chunk.copy(frame, 1);
    unsent += frame.length;
    ws.send(frame, { binary: true }, () => {
      unsent -= frame.length;
      if (unsent <= SEND_LOW_WATER && socket.isPaused() && !socket.destroyed) socket.resume();
    });
    if (unsent > SEND_HIGH_WATER) socket.pause();
  });
  // The local side's FIN cannot be passed on (v4 has no half-close): the Pod's end closes the stream.
  socket.on('close', () => {
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    else ws.terminate();
  });
  socket.resume();
}
