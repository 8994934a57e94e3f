// Serving the engine's outputs over ADS: a sink that applies each output's changes to the node
// snapshots (only the Gateways and clusters that changed are rebuilt).
import type { EngineOutput } from '@turnpike/engine';
import { proxyReportObject, referencedPlugins, type KubeObject, type ReportedGateway } from '@turnpike/api';
import { upsert, type SourceEvent } from '@turnpike/engine';
import { Subject } from 'rxjs';
import {
  AdsServer,
  ProxySyncTracker,
  SnapshotCache,
  XdsSnapshotBuilder,
  type AdsTlsOptions,
  type BootstrapTls,
  type GatewaySync,
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
  /** Without `reports`: what the proxies said, as events for the engine (this process's ProxyReport). */
  events: Subject<SourceEvent>;
  close(): Promise<void>;
}

export const XDS_SOURCE = 'xds';

/** Where this process's part of the proxies' report goes: a ProxyReport written to the API server, or the engine. */
export interface ProxyReportOutlet {
  /** One Gateway's entry changed; undefined: it has none any more. */
  set(gateway: string, entry: ReportedGateway | undefined): void;
}

/** The replica name of the report a process without a cluster makes for itself (`run --dir`). */
export const LOCAL_REPLICA = 'local';
export const LOCAL_REPORT_NAMESPACE = 'turnpike-system';

/** Without a cluster, the report goes straight to the engine, as an object no one else writes. */
function localReports(events: Subject<SourceEvent>): ProxyReportOutlet {
  const gateways = new Map<string, ReportedGateway>();
  return {
    set(gateway, entry) {
      if (entry) gateways.set(gateway, entry);
      else if (!gateways.delete(gateway)) return;
      const report = proxyReportObject(LOCAL_REPORT_NAMESPACE, LOCAL_REPLICA, gateways.values(), '', 0);
      events.next(upsert(XDS_SOURCE, report));
    },
  };
}

type Withheld = NonNullable<ReportedGateway['withheld']>;

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
  /** Where the report of what the proxies said goes; absent: to the engine, through `events`. */
  reports?: ProxyReportOutlet;
}

export async function startXds(o: XdsServingOptions): Promise<XdsServing> {
  const { address, onNack, plugins } = o;
  const log = o.log ?? ((m: string) => process.stderr.write(`turnpike: ${m}\n`));
  const hp = hostPortFlag('--xds-address', address);
  const cache = new SnapshotCache();
  const events = new Subject<SourceEvent>();
  const reports = o.reports ?? localReports(events);
  // What each Gateway's proxies said, and what its serving path withheld: its entry in the report.
  const syncs = new Map<string, GatewaySync>();
  const withheldFrom = new Map<string, Withheld>();
  const report = (gateway: string) => {
    const [namespace, name] = gateway.split('/') as [string, string];
    if (!namespace || !name) return;
    const sync = syncs.get(gateway);
    const withheld = withheldFrom.get(gateway);
    if (!sync && !withheld) return reports.set(gateway, undefined);
    reports.set(gateway, {
      namespace,
      name,
      connected: sync?.connected ?? 0,
      proxies: sync?.proxies ?? [],
      ...(sync?.plugins ? { plugins: sync.plugins } : {}),
      ...(withheld ? { withheld } : {}),
    });
  };
  const sync = new ProxySyncTracker({
    onChange: (gateway, s) => {
      if (s.connected) syncs.set(gateway, s);
      else syncs.delete(gateway);
      report(gateway);
    },
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
    // A NACK stands on its stream until the proxy accepts that type again: the tracker reports it.
    onNack: (n) => onNack?.(n.node),
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
    // Withheld as Envoy would refuse it: logged, and a condition on the Gateway through the report.
    onWithheld: (gateway, withheld) => {
      for (const w of withheld)
        log(`withheld from ${gateway}: ${w.source ? `${w.source}: ` : ''}${w.resource} ${w.field}: ${w.message}`);
      if (withheld.length) withheldFrom.set(gateway, withheld.slice(0, 20));
      else if (!withheldFrom.delete(gateway)) return;
      report(gateway);
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
