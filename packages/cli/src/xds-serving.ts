// Serving the engine's outputs over ADS: a sink that applies each output's changes to the node
// snapshots (only the Gateways and clusters that changed are rebuilt).
import type { EngineOutput } from '@turnpike/engine';
import { referencedPlugins, type KubeObject, type ProxyStatus } from '@turnpike/api';
import { remove, upsert, type SourceEvent } from '@turnpike/engine';
import { Subject } from 'rxjs';
import {
  AdsServer,
  ProxySyncTracker,
  SnapshotCache,
  XdsSnapshotBuilder,
  type AdsTlsOptions,
  type BootstrapTls,
  type PluginLookup,
  type StreamRefusal,
} from '@turnpike/xds';
import { CliError } from './errors.js';
import { GatewayBuildQueue } from './gateway-build-queue.js';
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

function proxyStatus(node: string, status: ProxyStatus['status']): ProxyStatus {
  const [namespace, name] = node.split('/') as [string, string];
  return { apiVersion: 'turnpike.dev/internal', kind: 'ProxyStatus', metadata: { name, namespace }, status };
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
  /** A proxy acknowledged a change: seconds from the change's first event (turnpike_config_latency_seconds). */
  onConfigLatency?: (gateway: string, seconds: number) => void;
}

export async function startXds(o: XdsServingOptions): Promise<XdsServing> {
  const { address, onNack, plugins } = o;
  const log = o.log ?? ((m: string) => process.stderr.write(`turnpike: ${m}\n`));
  const hp = hostPortFlag('--xds-address', address);
  const cache = new SnapshotCache();
  const events = new Subject<SourceEvent>();
  // What the proxies of each Gateway said, as one ProxyStatus object per Gateway for the engine.
  const told = new Map<string, ProxyStatus['status']>();
  const tell = (node: string, change: Partial<ProxyStatus['status']>) => {
    const [namespace, name] = node.split('/') as [string, string];
    if (!namespace || !name) return;
    const status: ProxyStatus['status'] = { ...told.get(node), ...change };
    for (const k of Object.keys(status) as (keyof ProxyStatus['status'])[])
      if (status[k] === undefined) delete status[k];
    if (Object.keys(status).length) {
      told.set(node, status);
      events.next(upsert(XDS_SOURCE, proxyStatus(node, status)));
    } else if (told.delete(node)) {
      events.next(remove(XDS_SOURCE, 'ProxyStatus', namespace, name));
    }
  };
  const sync = new ProxySyncTracker({
    onChange: (node, s) => tell(node, { sync: s.connected ? s : undefined }),
    ...(o.onConfigLatency ? { onLatency: o.onConfigLatency } : {}),
  });
  // Called only from accept(), once startXds has returned: server and builder exist by then.
  const queue = new GatewayBuildQueue({
    watched: (gateway) => server.watched(gateway),
    build: ({ out, gateways, endpoints, since }) => {
      const lookup = (kind: string, ns: string, name: string) =>
        out.snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
      // What each Gateway built runs, so that an ACK says which plugins its proxies run.
      const referenced = new Map<string, string[] | undefined>();
      for (const key of gateways) {
        const gw = out.result.xdsIR.gateways.get(key);
        referenced.set(key, gw ? referencedPlugins(gw) : undefined);
      }
      sync.push(
        since,
        () => cache.update(builder.update(out.result.xdsIR, { gateways, endpoints }, lookup, plugins)),
        referenced,
      );
    },
  });
  const server = new AdsServer({
    cache,
    // A NACK becomes a condition on the Gateway; a later ACK of another version clears it.
    onNack: (n) => {
      onNack?.(n.node);
      tell(n.node, {
        rejected: { typeUrl: n.typeUrl, version: n.version, message: n.message.slice(0, 500), node: n.node },
      });
    },
    onAck: (node, _type, version) => {
      const r = told.get(node)?.rejected;
      if (r === undefined || r.version === version) return;
      tell(node, { rejected: undefined });
    },
    onStreamChange: (stream, closed) => sync.streamChanged(stream, closed),
    onWatch: (node) => queue.watching(node),
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
  log(
    `serving xDS on ${hp.host}:${port}${o.tls ? (o.tls.trustDomain ? ' (mTLS, one Gateway per client certificate)' : ' (TLS)') : ''}`,
  );
  const builder = new XdsSnapshotBuilder({
    ...(o.controlPlaneTls ? { controlPlaneTls: o.controlPlaneTls } : {}),
    // Withheld as Envoy would refuse it: logged, and a condition on the Gateway through ProxyStatus.
    onWithheld: (gateway, withheld) => {
      for (const w of withheld)
        log(`withheld from ${gateway}: ${w.source ? `${w.source}: ` : ''}${w.resource} ${w.field}: ${w.message}`);
      tell(gateway, { withheld: withheld.length ? withheld.slice(0, 20) : undefined });
    },
  });
  return {
    name: 'xds',
    server,
    cache,
    events,
    accept: (out: EngineOutput) => queue.accept(out),
    close: () => {
      queue.close();
      return server.close();
    },
  };
}
