// A raw ADS client for protocol-level tests: one call, responses read one at a time.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { INCLUDE_DIRS } from '../src/index.js';

export type Stream = grpc.ClientDuplexStream<Record<string, unknown>, Record<string, any>>;

export function adsClient(port: number): any {
  const def = protoLoader.loadSync('envoy/service/discovery/v3/ads.proto', { keepCase: true, longs: String, enums: String, oneofs: true, includeDirs: INCLUDE_DIRS });
  const pkg = grpc.loadPackageDefinition(def) as any;
  return new pkg.envoy.service.discovery.v3.AggregatedDiscoveryService(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
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

