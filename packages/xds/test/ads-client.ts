// A raw ADS client for protocol-level tests: one call, responses read one at a time.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { INCLUDE_DIRS } from '../src/index.js';

export type Stream = grpc.ClientDuplexStream<Record<string, unknown>, Record<string, any>>;

/** PEM material for an mTLS client (no cert/key: server-authenticated TLS only). */
export interface ClientTls { ca: string; cert?: string; key?: string; serverName: string }

export function adsClient(port: number, tls?: ClientTls): any {
  const def = protoLoader.loadSync('envoy/service/discovery/v3/ads.proto', { keepCase: true, longs: String, enums: String, oneofs: true, includeDirs: INCLUDE_DIRS });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const creds = tls
    ? grpc.credentials.createSsl(Buffer.from(tls.ca), tls.key ? Buffer.from(tls.key) : null, tls.cert ? Buffer.from(tls.cert) : null)
    : grpc.credentials.createInsecure();
  // A fresh channel per client: a refused TLS handshake must not be shared with the next one.
  const options = { ...(tls ? { 'grpc.ssl_target_name_override': tls.serverName, 'grpc.default_authority': tls.serverName } : {}), 'grpc.use_local_subchannel_pool': 1 };
  return new pkg.envoy.service.discovery.v3.AggregatedDiscoveryService(`127.0.0.1:${port}`, creds, options);
}

/** Reads responses one at a time. */
export function reader(stream: Stream): (timeoutMs?: number) => Promise<Record<string, any>> {
  const queue: Record<string, any>[] = [];
  const waiters: ((v: Record<string, any>) => void)[] = [];
  stream.on('data', (d) => { const w = waiters.shift(); if (w) w(d); else queue.push(d); });
  stream.on('error', () => undefined);
  return (timeoutMs = 5000) => new Promise((resolve, reject) => {
    const q = queue.shift();
    if (q) return resolve(q);
    const t = setTimeout(() => reject(new Error('no response')), timeoutMs);
    waiters.push((v) => { clearTimeout(t); resolve(v); });
  });
}

