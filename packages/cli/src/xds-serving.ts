// Serving the engine's outputs over ADS: a sink that applies each output's changes to the node
// snapshots (only the Gateways and clusters that changed are rebuilt).
import type { EngineOutput } from '@turnpike/engine';
import type { KubeObject, ProxyStatus } from '@turnpike/api';
import { remove, upsert, type SourceEvent } from '@turnpike/engine';
import { Subject } from 'rxjs';
import { AdsServer, SnapshotCache, XdsSnapshotBuilder, type AdsTlsOptions, type BootstrapTls, type PluginLookup, type StreamRefusal } from '@turnpike/xds';
import { CliError } from './errors.js';
import { hostPortFlag } from './flags.js';
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

export interface XdsServingOptions {
  address: string;
  log?: (m: string) => void;
  onNack?: (node: string) => void;
  /** A stream refused for its client certificate (counted by the caller). */
  onRefuse?: (r: StreamRefusal) => void;
  plugins?: PluginLookup;
  /** Absent: plaintext. */
  tls?: AdsTlsOptions;
  /** Set when plugin content is served over TLS: how the proxies' content clusters reach it. */
  controlPlaneTls?: BootstrapTls;
}

export async function startXds(o: XdsServingOptions): Promise<XdsServing> {
  const { address, onNack, plugins } = o;
  const log = o.log ?? ((m: string) => process.stderr.write(`turnpike: ${m}\n`));
  const hp = hostPortFlag('--xds-address', address);
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
    ...(o.tls ? { tls: o.tls } : {}),
    ...(o.onRefuse ? { onRefuse: o.onRefuse } : {}),
  });
  let port: number;
  try {
    port = await server.listen(`${hp.host.includes(':') ? `[${hp.host}]` : hp.host}:${hp.port}`);
  } catch (e) {
    throw new CliError(`--xds-address ${address}: cannot listen (${(e as Error).message})`);
  }
  log(`serving xDS on ${hp.host}:${port}${o.tls ? (o.tls.trustDomain ? ' (mTLS, one Gateway per client certificate)' : ' (TLS)') : ''}`);
  const builder = new XdsSnapshotBuilder(o.controlPlaneTls ? { controlPlaneTls: o.controlPlaneTls } : {});
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
