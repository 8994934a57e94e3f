// `turnpike run --kubeconfig PATH | --in-cluster`: the controller against a cluster. Watches every
// kind, translates, writes statuses, serves xDS, and answers /healthz, /readyz and /metrics.
// pino JSON logs name the object; SIGTERM stops it gracefully.
import { ConsoleData } from '../console/console-data.js';
import { LiveLog, teeRecorder } from '../console/live-log.js';
import { serveConsole } from './console.js';
import { openRecording } from '../record.js';
import { openFlightRecorder, type RecordFlags } from '../flight-recording.js';
import { startController, type Sink } from '../controller.js';
import { LeaderWrites } from '../sinks/leader-writes.js';
import {
  ConfigMapPluginStorage,
  createMetrics,
  ensurePluginUrlKey,
  InfraApplier,
  KUBE_SOURCE,
  KubeClient,
  kubeSource,
  LeaderElector,
  ProxyReportPublisher,
  ReferenceRecordPublisher,
  StatusWriter,
  startDebugServer,
  startHealthServer,
  XDS_CA_SECRET,
  XdsAuthority,
} from '@turnpike/kube';
import { DEFAULT_TRUST_DOMAIN, gatewayOfCertificate, loadEnvoyProtosSoon, type BootstrapTls } from '@turnpike/xds';
import { contentTlsFromAuthority, xdsTlsFromAuthority } from '../xds-tls.js';
import { controlPlaneTls, proxyObjectsContext, xdsServerNames } from '../proxy-objects.js';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { ServerResponse } from 'node:http';
import { digestKeySource, listSegments, writeCapture } from '@turnpike/engine';
import pino from 'pino';
import { CliError } from '../errors.js';
import { hostPortFlag, isLoopbackHost } from '../flags.js';
import { startXds, type XdsServing } from '../xds-serving.js';
import { startPlugins, type PluginOptions, type PluginServing } from '../plugin-serving.js';
import { PLUGINS_SOURCE } from '@turnpike/plugins';

export interface KubeRunOptions extends PluginOptions, RecordFlags {
  kubeconfig?: string;
  inCluster?: boolean;
  record?: string;
  quietMs: number;
  maxDelayMs: number;
  xdsAddress: string;
  xds: boolean;
  healthAddress: string;
  debugAddress?: string;
  logLevel: string;
  leaderElectionNamespace?: string;
  leaderElect?: boolean;
  xdsPublicAddress?: string;
  /** Serve xDS and plugin content without TLS (tests, or a mesh that already encrypts). */
  xdsPlaintext?: boolean;
  xdsTrustDomain?: string;
  xdsServerName?: string[];
  caValidityMs?: number;
  caRotationGraceMs?: number;
  certValidityMs?: number;
  /** Serve the web console here (off unless given; beyond loopback it asks for the token of consoleTokenFile). */
  consoleAddress?: string;
  /** The console's token beyond loopback (never logged: the controller's log is read more widely). */
  consoleTokenFile?: string;
  /** Every proxy in the controller's namespace (the default), or each beside its Gateway. */
  proxyPlacement?: ProxyPlacementMode;
  /** The drain container's image in every proxy Pod. */
  proxyDrainImage?: string;
  /** This replica's name: its ProxyReport's (default: $POD_NAME, else host name and pid). */
  replicaName?: string;
  /** How long this replica's ProxyReport stays live without a renewal. */
  reportLeaseMs?: number;
}

export const PROXY_PLACEMENTS = ['controller-namespace', 'gateway-namespace'] as const;

/** In a Pod, its name (the Deployment sets POD_NAME); elsewhere the host name and process id. */
function defaultReplicaName(): string {
  const name = process.env.POD_NAME || `${hostname()}-${process.pid}`;
  return replicaNameProblem(name) ? `replica-${process.pid}` : name;
}

/** Why a name cannot name a ProxyReport (a DNS subdomain), or undefined. */
export function replicaNameProblem(name: string): string | undefined {
  if (name.length > 253) return 'longer than 253 characters';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name))
    return 'not a DNS subdomain (lowercase letters, digits, "-" and ".", starting and ending alphanumeric)';
  return undefined;
}
export type ProxyPlacementMode = (typeof PROXY_PLACEMENTS)[number];

function kubeClient(o: KubeRunOptions): KubeClient {
  try {
    return o.inCluster ? KubeClient.inCluster() : KubeClient.fromKubeconfig(o.kubeconfig!);
  } catch (e) {
    const what = o.inCluster ? 'in-cluster configuration' : `kubeconfig ${o.kubeconfig}`;
    throw new CliError(`cannot load ${what}: ${(e as Error).message}`);
  }
}

/** Applies each Gateway's proxy objects; with mTLS, their bootstrap mounts the xDS client credentials. */
function infraApplier(
  client: KubeClient,
  log: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void,
  metrics: ReturnType<typeof createMetrics>,
  plugins: PluginServing,
  xdsPublic: { host: string; port: number },
  mtls: { tls: BootstrapTls; authority: XdsAuthority } | undefined,
  proxyNamespace: string | undefined,
  drainImage: string | undefined,
): InfraApplier {
  return new InfraApplier({
    client,
    ...(proxyNamespace !== undefined ? { namespace: proxyNamespace } : {}),
    log,
    onError: () => metrics.applyErrors.inc(),
    pluginContent: (sha) => plugins.content.get(sha),
    ...proxyObjectsContext(xdsPublic, mtls?.tls, drainImage),
    ...(mtls ? { xdsCredentials: (gateway, secret) => mtls.authority.clientCredentials(gateway, secret) } : {}),
  });
}

/** /healthz, /readyz (ready once a complete translation went out) and /metrics. */
async function serveHealth(
  address: string,
  isReady: () => boolean,
  metrics: ReturnType<typeof createMetrics>,
  xds: XdsServing | undefined,
  log: pino.Logger,
): Promise<{ port: number; close(): Promise<void> }> {
  const hostPort = hostPortFlag('--health-address', address);
  const health = await startHealthServer(hostPort.host, hostPort.port, isReady, metrics.registry, () => {
    if (!xds) return;
    metrics.xdsPushes.set(xds.server.stats.pushes);
    metrics.connectedProxies.set(xds.server.connectedProxies);
  });
  log.info({ address: `${hostPort.host}:${health.port}` }, 'serving /healthz, /readyz and /metrics');
  return health;
}

/**
 * /debug/proxies (turnpike proxy-status): every proxy and its peer address; /debug/recorder/segments and
 * /debug/recorder/capture?since=TIME (turnpike capture): the flight recording. Loopback by default: a
 * user reaches it through the API server's port-forward, which RBAC grants (the turnpike-debugger role).
 */
export async function serveDebug(
  address: string,
  xds: XdsServing | undefined,
  recordDir: string | undefined,
  log: pino.Logger,
): Promise<{ port: number; close(): Promise<void> }> {
  const hostPort = hostPortFlag('--debug-address', address);
  if (!isLoopbackHost(hostPort.host))
    log.warn(
      `--debug-address ${address}: /debug/proxies (every proxy and its address) and /debug/recorder (the flight ` +
        'recording) are served without authentication to whoever reaches it; keep it on loopback and use a port-forward',
    );
  const noRecording = (res: ServerResponse): void => {
    res
      .writeHead(404, { 'Content-Type': 'text/plain' })
      .end('this controller keeps no flight recording (it runs without --record-dir)\n');
  };
  const debug = await startDebugServer(
    hostPort.host,
    hostPort.port,
    { '/debug/proxies': () => xds?.server.proxies() ?? [] },
    {
      '/debug/recorder/segments': async (_url, res) => {
        if (!recordDir) return noRecording(res);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(await listSegments(recordDir)));
      },
      '/debug/recorder/capture': async (url, res) => {
        if (!recordDir) return noRecording(res);
        const since = url.searchParams.get('since');
        const sinceMs = since ? Date.parse(since) : 0;
        if (Number.isNaN(sinceMs)) {
          res.writeHead(400, { 'Content-Type': 'text/plain' }).end(`since=${since}: not a time (RFC 3339)\n`);
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/gzip' });
        const info = await writeCapture(recordDir, sinceMs, res);
        res.end();
        log.info({ segments: info.segments.length, bytes: info.bytes, since }, 'served a flight-recording capture');
      },
    },
  );
  log.info({ address: `${hostPort.host}:${debug.port}` }, 'serving /debug/proxies and /debug/recorder');
  return debug;
}

/** The console's token, from a file (a Secret's key mounted there). */
function consoleToken(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new CliError(`--console-token-file ${file}: ${(e as Error).message}`);
  }
  if (token.length < 16) throw new CliError(`--console-token-file ${file}: the token must have at least 16 characters`);
  return token;
}

export async function runInCluster(o: KubeRunOptions): Promise<void> {
  const log = pino({ level: o.logLevel, base: { component: 'turnpike' } });
  const client = kubeClient(o);
  const metrics = createMetrics();
  const say = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) =>
    log[level](fields ?? {}, msg);
  const xdsPublic = hostPortFlag('--xds-public-address', o.xdsPublicAddress ?? 'turnpike.turnpike-system.svc:18000');
  const namespace = o.leaderElectionNamespace ?? 'turnpike-system';
  // With every proxy in our namespace, the controller writes nowhere else (deploy/rbac.yaml's Role).
  const proxyNamespace = o.proxyPlacement === 'gateway-namespace' ? undefined : namespace;
  const trustDomain = o.xdsTrustDomain ?? DEFAULT_TRUST_DOMAIN;
  let storage: ConfigMapPluginStorage | undefined;
  // Created once the plugin server is up; the CA and the elector call into it before that.
  const infraRef: { applier?: InfraApplier } = {};
  const serverNames = xdsServerNames(xdsPublic.host, o.xdsServerName);
  const authority = o.xdsPlaintext
    ? undefined
    : new XdsAuthority({
        client,
        namespace,
        trustDomain,
        serverNames,
        caValidityMs: o.caValidityMs ?? 365 * 24 * 3_600_000,
        ...(o.caRotationGraceMs !== undefined ? { caRotationGraceMs: o.caRotationGraceMs } : {}),
        certValidityMs: o.certValidityMs ?? 30 * 24 * 3_600_000,
        isLeader: () => leader.isLeading,
        log: say,
        onCredentialsChanged: () => infraRef.applier?.refresh(),
      });
  if (o.xdsPlaintext)
    log.warn(
      "serving xDS and plugin content without TLS: any pod that reaches the controller can read any Gateway's configuration and keys",
    );
  const replica = o.replicaName ?? defaultReplicaName();
  const writer = new StatusWriter({
    client,
    log: say,
    onWrite: (_k, ok) => metrics.statusWrites.inc({ result: ok ? 'ok' : 'error' }),
  });
  // Only the leader writes; every replica serves xDS. On gaining the lease, write everything.
  // The record of referenced Secrets goes into our namespace, for the live tools (turnpike-viewer).
  const record = new ReferenceRecordPublisher({ client, namespace, log: say });
  const leader = new LeaderWrites(writer, () => infraRef.applier, o.leaderElect === false, record);
  metrics.leader.set(leader.isLeading ? 1 : 0);
  const elector =
    o.leaderElect === false
      ? undefined
      : new LeaderElector({
          client,
          namespace,
          name: 'turnpike',
          // The replica's (Pod's) name first: `turnpike capture` finds the leader's Pod by it.
          identity: `${replica}_${process.pid.toString(36)}${Date.now().toString(36)}`,
          log: say,
          onStartedLeading: () => {
            metrics.leader.set(1);
            infraRef.applier?.resync();
            void storage?.setLeading(true);
            // The CA is created (or rotated) by the leader: look at it now rather than at the next tick.
            void authority?.check();
            leader.startedLeading();
          },
          onStoppedLeading: () => {
            leader.stoppedLeading();
            metrics.leader.set(0);
            void storage?.setLeading(false);
          },
        });
  elector?.start();
  // Every replica needs the CA before it can serve; the leader creates it if there is none.
  if (authority) {
    await authority.start();
    log.info(
      { secret: `${namespace}/${XDS_CA_SECRET}`, trustDomain, serverNames },
      'xDS and plugin content are served over mTLS',
    );
  }
  const plugins = await startPlugins(
    {
      ...o,
      // Served with this replica's certificate as it is renewed and the CA rotates; content goes only
      // to the proxies of Gateways whose configuration uses it.
      ...(authority
        ? {
            tls: contentTlsFromAuthority(authority.provider),
            readerOf: (san) => gatewayOfCertificate(san, trustDomain),
          }
        : {}),
    },
    say,
    (urlFor) => (storage = new ConfigMapPluginStorage(client, urlFor, say, proxyNamespace)),
    (result) => metrics.pluginFetches.inc({ result }),
    async () => {
      try {
        return await ensurePluginUrlKey(client, namespace);
      } catch (e) {
        throw new CliError(`plugin URL key: ${(e as Error).message} (or pass --plugin-url-key-file)`);
      }
    },
  );
  if (leader.isLeading) void storage?.setLeading(true);
  const tls = authority ? controlPlaneTls(serverNames[0]!) : undefined;
  const infra = infraApplier(
    client,
    say,
    metrics,
    plugins,
    xdsPublic,
    tls && authority ? { tls, authority } : undefined,
    proxyNamespace,
    o.proxyDrainImage,
  );
  // What this replica's proxies say goes to the API server, for every replica to read back.
  const reports = o.xds
    ? new ProxyReportPublisher({
        client,
        namespace,
        replica,
        ...(o.reportLeaseMs !== undefined ? { leaseDurationMs: o.reportLeaseMs } : {}),
        log: say,
        onWrite: (ok) => metrics.proxyReportWrites.inc({ result: ok ? 'ok' : 'error' }),
      })
    : undefined;
  const xds = o.xds
    ? await startXds({
        ...(reports ? { reports } : {}),
        address: o.xdsAddress,
        log: (m) => log.info(m),
        onNack: (gateway) => metrics.xdsNacks.inc({ gateway }),
        plugins: (sha) => plugins.content.get(sha),
        onRefuse: (r) => metrics.xdsRefused.inc({ reason: r.reason }),
        onConfigLatency: (gateway, seconds) => metrics.configLatency.observe({ gateway }, seconds),
        ...(authority ? { tls: xdsTlsFromAuthority(authority.provider, trustDomain), controlPlaneTls: tls! } : {}),
      })
    : undefined;
  const header = {
    createdAt: new Date().toISOString(),
    quietMs: o.quietMs,
    maxDelayMs: o.maxDelayMs,
    source: 'kube',
    completeAfter: [PLUGINS_SOURCE],
    leadingEdge: true,
    ...(proxyNamespace !== undefined ? { proxyNamespace } : {}),
  };
  const live = o.consoleAddress && o.consoleAddress !== 'off' ? new LiveLog(header) : undefined;
  const { createdAt: _created, ...segmentHeader } = header;
  const flight = openFlightRecorder(o, segmentHeader, (level, m) => log[level](m));
  const recorder = teeRecorder(o.record ? openRecording(o.record, header) : undefined, flight.recorder, live);
  if (flight.recorder) {
    const stats = flight.recorder.stats;
    metrics.recorder(() => stats);
  }
  const consoleServer = live
    ? await serveConsole(
        new ConsoleData(
          () => live.log(),
          () => live.base,
        ),
        o.consoleAddress!,
        '--console-address',
        (m) => log.info(m),
        o.consoleTokenFile ? { value: consoleToken(o.consoleTokenFile), from: '--console-token-file' } : undefined,
      )
    : undefined;
  let ready = false;
  const health = await serveHealth(o.healthAddress, () => ready, metrics, xds, log);
  const debug = await serveDebug(o.debugAddress ?? '127.0.0.1:8081', xds, o.recordDir, log);

  const sources = [
    // The DigestKey first: Secret values are digested under it, in the translator and in the event log.
    digestKeySource(),
    plugins.worker.events,
    ...(xds ? [xds.events] : []),
    kubeSource({
      client,
      log: say,
      ...(proxyNamespace !== undefined ? { proxyNamespace } : {}),
      reportNamespace: namespace,
      onReportsLive: (n) => metrics.liveProxyReports.set(n),
      // The leader clears away the reports of replicas that are gone (a new one writes its own again).
      onReportExpired: (ns, name) => {
        if (!leader.isLeading || name === replica) return;
        client
          .request('DELETE', `/apis/turnpike.dev/v1alpha1/namespaces/${ns}/proxyreports/${encodeURIComponent(name)}`)
          .catch((e: Error) => say('warn', 'cannot delete an expired proxy report', { report: name, err: e.message }));
      },
    }),
  ];
  infraRef.applier = infra;

  const sinks: Sink[] = [
    ...(xds ? [xds] : []),
    ...leader.sinks(() => authority?.stop()),
    {
      name: 'log',
      accept: (out) => {
        for (const d of out.result.diagnostics) log.warn({ object: d.object }, d.message);
        // The hash once the engine has worked it out: reading it here would put it before the push's writes.
        const fields = { seq: out.seq, gateways: out.result.xdsIR.gateways.size };
        void out.hashed.then((hash) => log.info({ ...fields, hash: hash.slice(0, 12) }, 'translated'));
      },
    },
    plugins,
  ];
  const controller = startController({
    sources,
    sourceNames: [KUBE_SOURCE],
    completeAfter: [PLUGINS_SOURCE],
    sinks,
    ...(proxyNamespace !== undefined ? { translateOptions: { proxyNamespace } } : {}),
    quietMs: o.quietMs,
    maxDelayMs: o.maxDelayMs,
    leadingEdge: true,
    adaptiveQuiet: true,
    ...(flight.firstSeq ? { firstSeq: flight.firstSeq } : {}),
    ...(recorder ? { recorder } : {}),
    onEvent: (e) => metrics.events.inc({ kind: e.kind, type: e.type }),
    onTranslation: (out) => {
      metrics.translations.inc();
      metrics.translationSeconds.observe(out.durationMs / 1000);
      // Ready once the proxies may be served: the first translation with the plugins' results.
      if (out.complete) ready = true;
    },
    onError: (where, e) => log.error({ err: e.message }, `${where} failed`),
  });
  // While the API server lists, not after.
  if (xds) loadEnvoyProtosSoon();
  reports?.start();
  log.info({ replica, report: `${namespace}/${replica}` }, "publishing what this replica's proxies say");

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      // Whatever still holds a socket open must not keep the process from exiting.
      setTimeout(() => process.exit(0), 5000).unref();
      void Promise.all([
        // The proxies go to the other replicas: this one's report goes with it.
        reports?.stop(),
        controller.stop(),
        elector?.stop(),
        health.close(),
        debug.close(),
        consoleServer?.close(),
      ]).then(() => {
        client.close();
        resolve();
      });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}
