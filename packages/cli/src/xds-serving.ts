// Serving the engine's outputs over ADS: each changed output becomes the node snapshots.
import type { EngineOutput } from '@turnpike/engine';
import type { KubeObject } from '@turnpike/api';
import { AdsServer, parseHostPort, SnapshotCache, XdsSnapshotBuilder } from '@turnpike/xds';
import { CliError } from './errors.js';

export interface XdsServing { server: AdsServer; cache: SnapshotCache; update(out: EngineOutput): void; close(): Promise<void> }

export async function startXds(address: string, log: (m: string) => void = (m) => process.stderr.write(`turnpike: ${m}\n`)): Promise<XdsServing> {
  let hp;
  try {
    hp = parseHostPort(address);
  } catch (e) {
    throw new CliError(`--xds-address: ${(e as Error).message}`);
  }
  const cache = new SnapshotCache();
  const server = new AdsServer({
    cache,
    log: (msg, fields) => log(`${msg}${fields ? ' ' + JSON.stringify(fields) : ''}`),
  });
  let port: number;
  try {
    port = await server.listen(`${hp.host.includes(':') ? `[${hp.host}]` : hp.host}:${hp.port}`);
  } catch (e) {
    throw new CliError(`--xds-address ${address}: cannot listen (${(e as Error).message})`);
  }
  log(`serving xDS on ${hp.host}:${port}`);
  const builder = new XdsSnapshotBuilder();
  return {
    server,
    cache,
    update(out: EngineOutput) {
      const lookup = (kind: string, ns: string, name: string) => out.snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
      cache.setAll(builder.build(out.result.xdsIR.gateways, lookup));
    },
    close: () => server.close(),
  };
}
