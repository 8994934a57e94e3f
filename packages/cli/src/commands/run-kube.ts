// `turnpike run --kubeconfig PATH | --in-cluster`: the controller against a cluster. Watches every
// kind, translates, writes statuses, serves xDS, and answers /healthz, /readyz and /metrics.
// pino JSON logs name the object; SIGTERM stops it gracefully.
import { EventLogWriter, type EngineOutput } from '@turnpike/engine';
import { startController, type Sink } from '../controller.js';
import { ConfigMapPluginStorage, createMetrics, ensurePluginUrlKey, InfraApplier, KUBE_SOURCE, KubeClient, kubeSource, LeaderElector, StatusWriter, startHealthServer } from '@turnpike/kube';
import { buildBootstrap, parseHostPort } from '@turnpike/xds';
import pino from 'pino';
import { CliError } from '../errors.js';
import { startXds } from '../xds-serving.js';
import { startPlugins, type PluginOptions } from '../plugin-serving.js';
import { PLUGINS_SOURCE } from '@turnpike/plugins';

export interface KubeRunOptions extends PluginOptions {
  kubeconfig?: string; inCluster?: boolean; record?: string; quietMs: number; maxDelayMs: number;
  xdsAddress: string; xds: boolean; healthAddress: string; logLevel: string;
  leaderElectionNamespace?: string; leaderElect?: boolean; xdsPublicAddress?: string;
}

export async function runInCluster(o: KubeRunOptions): Promise<void> {
  const log = pino({ level: o.logLevel, base: { component: 'turnpike' } });
  let client: KubeClient;
  try {
    client = o.inCluster ? KubeClient.inCluster() : KubeClient.fromKubeconfig(o.kubeconfig!);
  } catch (e) {
    throw new CliError(`cannot load ${o.inCluster ? 'in-cluster configuration' : `kubeconfig ${o.kubeconfig}`}: ${(e as Error).message}`);
  }
  const metrics = createMetrics();
  const say = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => log[level](fields ?? {}, msg);
  const xdsPublic = parseHostPort(o.xdsPublicAddress ?? 'turnpike.turnpike-system.svc:18000');
  let storage: ConfigMapPluginStorage | undefined;
  const plugins = await startPlugins(o, [KUBE_SOURCE], say, (urlFor) => (storage = new ConfigMapPluginStorage(client, urlFor, say)), (result) => metrics.pluginFetches.inc({ result }),
    async () => {
      try {
        return await ensurePluginUrlKey(client, o.leaderElectionNamespace ?? 'turnpike-system');
      } catch (e) {
        throw new CliError(`plugin URL key: ${(e as Error).message} (or pass --plugin-url-key-file)`);
      }
    });
  const applier = new InfraApplier({
    client, log: say, onError: () => metrics.applyErrors.inc(), pluginContent: (sha) => plugins.content.get(sha),
    bootstrap: (namespace, name) => JSON.stringify(buildBootstrap({ namespace, name, xdsHost: xdsPublic.host, xdsPort: xdsPublic.port })),
  });
  const writer = new StatusWriter({ client, log: say, onWrite: (_k, ok) => metrics.statusWrites.inc({ result: ok ? 'ok' : 'error' }) });
  const xds = o.xds ? await startXds(o.xdsAddress, (m) => log.info(m), (gateway) => metrics.xdsNacks.inc({ gateway }), (sha) => plugins.content.get(sha)) : undefined;
  const recorder = o.record ? new EventLogWriter(o.record, { createdAt: new Date().toISOString(), quietMs: o.quietMs, maxDelayMs: o.maxDelayMs, source: 'kube' }) : undefined;
  let ready = false;
  const hp = parseHostPort(o.healthAddress);
  const health = await startHealthServer(hp.host, hp.port, () => ready, metrics.registry, () => {
    if (!xds) return;
    metrics.xdsPushes.set(xds.server.stats.pushes);
    metrics.connectedProxies.set(xds.server.connectedProxies);
  });
  log.info({ address: `${hp.host}:${health.port}` }, 'serving /healthz, /readyz and /metrics');

  const sources = [plugins.worker.events, ...(xds ? [xds.events] : []), kubeSource({ client, log: say })];
  // Only the leader writes; every replica serves xDS. On gaining the lease, write everything.
  let last: EngineOutput | undefined;
  let leading = o.leaderElect === false;
  // Whether the writer has been given every status since it last started writing: until then it
  // gets whole outputs (which also clears entries a previous run left on objects no longer ours).
  let writtenAll = false;
  metrics.leader.set(leading ? 1 : 0);
  if (leading) void storage?.setLeading(true);
  const elector = o.leaderElect === false ? undefined : new LeaderElector({
    client, namespace: o.leaderElectionNamespace ?? 'turnpike-system', name: 'turnpike', log: say,
    onStartedLeading: () => {
      leading = true;
      metrics.leader.set(1);
      applier.resync();
      void storage?.setLeading(true);
      if (last) {
        writer.update(last.result, last.snapshot);
        applier.update(last.result.infraIR);
        writtenAll = true;
      }
    },
    onStoppedLeading: () => { leading = false; writtenAll = false; metrics.leader.set(0); void storage?.setLeading(false); },
  });
  elector?.start();

  const sinks: Sink[] = [
    ...(xds ? [xds] : []),
    { name: 'last', accept: (out) => { last = out; } },
    // The status writer applies only the statuses an output changed, once it has written them all.
    { name: 'status-writer', accept: (out) => {
      if (!leading) return;
      writer.update(out.result, out.snapshot, writtenAll ? out.changes.statuses : undefined);
      writtenAll = true;
    }, close: () => writer.stop() },
    { name: 'infra-applier', accept: (out) => { if (leading && out.changes.infra.length) applier.update(out.result.infraIR); }, close: () => applier.stop() },
    { name: 'log', accept: (out) => {
      for (const d of out.result.diagnostics) log.warn({ object: d.object }, d.message);
      log.info({ seq: out.seq, gateways: out.result.xdsIR.gateways.size, hash: out.hash.slice(0, 12) }, 'translated');
    } },
    { name: 'plugins', accept: () => undefined, close: () => plugins.close() },
  ];
  const controller = startController({
    sources,
    sourceNames: [KUBE_SOURCE, PLUGINS_SOURCE],
    sinks,
    quietMs: o.quietMs,
    maxDelayMs: o.maxDelayMs,
    ...(recorder ? { recorder } : {}),
    onEvent: (e) => {
      plugins.observe(e);
      metrics.events.inc({ kind: e.kind, type: e.type });
    },
    onTranslation: (out) => {
      metrics.translations.inc();
      metrics.translationSeconds.observe(out.durationMs / 1000);
      ready = true;
    },
    onError: (where, e) => log.error({ err: e.message }, `${where} failed`),
  });

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      // Whatever still holds a socket open must not keep the process from exiting.
      setTimeout(() => process.exit(0), 5000).unref();
      void Promise.all([controller.stop(), elector?.stop(), health.close()]).then(() => { client.close(); resolve(); });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}
