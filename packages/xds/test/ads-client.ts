// A raw ADS client for protocol-level tests: one call, responses read one at a time.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { INCLUDE_DIRS, TYPE } from '../src/index.js';

export type Stream = grpc.ClientDuplexStream<Record<string, unknown>, Record<string, any>>;

/** PEM material for an mTLS client (no cert/key: server-authenticated TLS only). */
export interface ClientTls {
  ca: string;
  cert?: string;
  key?: string;
  serverName: string;
}

export function adsClient(port: number, tls?: ClientTls): any {
  const def = protoLoader.loadSync('envoy/service/discovery/v3/ads.proto', {
    keepCase: true,
    longs: String,
    enums: String,
    oneofs: true,
    includeDirs: INCLUDE_DIRS,
  });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const creds = tls
    ? grpc.credentials.createSsl(
        Buffer.from(tls.ca),
        tls.key ? Buffer.from(tls.key) : null,
        tls.cert ? Buffer.from(tls.cert) : null,
      )
    : grpc.credentials.createInsecure();
  // A fresh channel per client: a refused TLS handshake must not be shared with the next one.
  const options = {
    ...(tls ? { 'grpc.ssl_target_name_override': tls.serverName, 'grpc.default_authority': tls.serverName } : {}),
    'grpc.use_local_subchannel_pool': 1,
  };
  return new pkg.envoy.service.discovery.v3.AggregatedDiscoveryService(`127.0.0.1:${port}`, creds, options);
}

/** Reads responses one at a time. */
export function reader(stream: Stream): (timeoutMs?: number) => Promise<Record<string, any>> {
  const queue: Record<string, any>[] = [];
  const waiters: ((v: Record<string, any>) => void)[] = [];
  stream.on('data', (d) => {
    const w = waiters.shift();
    if (w) w(d);
    else queue.push(d);
  });
  stream.on('error', () => undefined);
  return (timeoutMs = 5000) =>
    new Promise((resolve, reject) => {
      const q = queue.shift();
      if (q) return resolve(q);
      const t = setTimeout(() => reject(new Error('no response')), timeoutMs);
      waiters.push((v) => {
        clearTimeout(t);
        resolve(v);
      });
    });
}

/** The raw bytes of a response's resources (SotW or delta) as text, to look for names in. */
export function resourceText(r: Record<string, any>): string {
  return (r.resources ?? []).map((x: any) => (x.resource ?? x).value.toString('latin1')).join('');
}

export type FirstResponse =
  | { ok: true; first: Record<string, any>; stream: Stream; next: ReturnType<typeof reader> }
  | { ok: false; code: number; details: string };

/** Opens a SotW stream as `node` (node.cluster), asks for listeners, and resolves with the first response or the error that ended the stream. */
export function openListenerStream(
  port: number,
  tls: ClientTls | undefined,
  node: string,
  timeoutMs = 10_000,
  id = 'test',
): Promise<FirstResponse> {
  const stream: Stream = adsClient(port, tls).StreamAggregatedResources();
  const failed = new Promise<FirstResponse>((resolve) =>
    stream.on('error', (e: { code: number; details: string }) =>
      resolve({ ok: false, code: e.code, details: e.details }),
    ),
  );
  const next = reader(stream);
  stream.write({ node: { id, cluster: node }, type_url: TYPE.listener });
  return Promise.race([next(timeoutMs).then((first): FirstResponse => ({ ok: true, first, stream, next })), failed]);
}
