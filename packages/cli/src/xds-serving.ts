// Serving the engine's outputs over ADS: a sink that applies each output's changes to the node
// snapshots (only the Gateways and clusters that changed are rebuilt).
import type { EngineOutput } from '@turnpike/engine';
import type { KubeObject, ProxyStatus } from '@turnpike/api';
import { remove, upsert, type SourceEvent } from '@turnpike/engine';
import { Subject } from 'rxjs';
import { AdsServer, parseHostPort, SnapshotCache, XdsSnapshotBuilder, type PluginLookup } from '@turnpike/xds';
import { CliError } from './errors.js';
import type { Sink } from './controller.js';

export interface XdsServing extends Sink {
  server: AdsServer;
  cache: SnapshotCache;
  /** What the proxies said, as events for the engine (ProxyStatus objects). */
  events: Subject<SourceEvent>;
  close(): Promise<void>;
}

export const XDS_SOURCE = 'xds';

function proxyStatus(node: string, rejected?: ProxyStatus['status']['rejected']): ProxyStatus {
  const [namespace, name] = node.split('/') as [string, string];
  return { apiVersion: 'turnpike.dev/internal', kind: 'ProxyStatus', metadata: { name, namespace }, status: rejected ? { rejected } : {} };
}

export async function startXds(address: string, log: (m: string) => void = (m) => process.stderr.write(`turnpike: ${m}\n`), onNack?: (node: string) => void, plugins?: PluginLookup): Promise<XdsServing> {
  let hp;
  try {
    hp = parseHostPort(address);
  } catch (e) {
    throw new CliError(`--xds-address: ${(e as Error).message}`);
  }
  const cache = new SnapshotCache();
  const events = new Subject<SourceEvent>();
  const rejected = new Map<string, string>();
  const server = new AdsServer({
    cache,
    // A NACK becomes a condition on the Gateway; a later ACK of another version clears it.
    onNack: (n) => {
      const [namespace, name] = n.node.split('/');
      if (!namespace || !name) return;
      rejected.set(n.node, n.version);
      onNack?.(n.node);
      events.next(upsert(XDS_SOURCE, proxyStatus(n.node, { typeUrl: n.typeUrl, version: n.version, message: n.message.slice(0, 500), node: n.node })));
    },
    onAck: (node, _type, version) => {
      const v = rejected.get(node);
      if (v === undefined || v === version) return;
      rejected.delete(node);
      const [namespace, name] = node.split('/') as [string, string];
      events.next(remove(XDS_SOURCE, 'ProxyStatus', namespace, name));
    },
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
    name: 'xds',
    server,
    cache,
    events,
    accept(out: EngineOutput) {
      const lookup = (kind: string, ns: string, name: string) => out.snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
      cache.update(builder.update(out.result.xdsIR, out.changes, lookup, plugins));
    },
    close: () => server.close(),
  };
}
