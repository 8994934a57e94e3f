// `turnpike run --dir DIR`: the engine on a directory of YAML, printing status changes as they
// happen. `--record FILE` writes the event log.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import {
  DIRECTORY_SOURCE,
  DEFAULT_MAX_DELAY_MS,
  DEFAULT_QUIET_MS,
  digestKeySource,
  directorySource,
} from '@turnpike/engine';
import { openRecording } from '../record.js';
import { openFlightRecorder, recordFlags } from '../flight-recording.js';
import { startController } from '../controller.js';
import { CliError } from '../errors.js';
import { hostPortFlag, isLoopbackHost, VALIDATE_HELP, validationFlag } from '../flags.js';
import { ConsoleData } from '../console/console-data.js';
import { LiveLog, teeRecorder } from '../console/live-log.js';
import { serveConsole } from './console.js';
import { statusPrinter } from '../sinks/status-printer.js';
import { startXds } from '../xds-serving.js';
import { PROXY_PLACEMENTS, replicaNameProblem, runInCluster, type ProxyPlacementMode } from './run-kube.js';
import { contentTlsFromFiles, xdsTlsFromFiles, type XdsTlsFlags } from '../xds-tls.js';
import { DEFAULT_TRUST_DOMAIN, gatewayOfCertificate, loadEnvoyProtosSoon, type BootstrapTls } from '@turnpike/xds';
import { pluginFlagHelp, startPlugins, type PluginOptions } from '../plugin-serving.js';
import { PLUGINS_SOURCE } from '@turnpike/plugins';
import { DEFAULT_DRAIN_IMAGE } from '@turnpike/kube';

export interface RunOptions extends PluginOptions, XdsTlsFlags {
  xdsPlaintext?: boolean;
  xdsAnyClient?: boolean;
  xdsCaValidity: string;
  xdsCaRotationGrace: string;
  xdsCertValidity: string;
  xdsServerName?: string[];
  dir?: string;
  kubeconfig?: string;
  inCluster?: boolean;
  record?: string;
  recordDir?: string;
  recordSegmentBytes: string;
  recordSegmentAge: string;
  recordRetainBytes: string;
  recordRetainAge: string;
  output: string;
  quietMs: string;
  maxDelayMs: string;
  poll: string;
  validate: string;
  /** Unset: 127.0.0.1:0 with --dir (any free port, printed), off with a cluster. `off` turns it off. */
  consoleAddress?: string;
  consoleTokenFile?: string;
  xdsAddress: string;
  xds: boolean;
  healthAddress: string;
  logLevel: string;
  leaderElectionNamespace: string;
  proxyPlacement: string;
  proxyDrainImage: string;
  proxyBootstrapDir: string;
  leaderElect: boolean;
  xdsPublicAddress: string;
  replicaName?: string;
  reportLease: string;
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      'run the controller: on a directory of YAML manifests (--dir), or against a cluster (--kubeconfig, --in-cluster)',
    )
    .option('--dir <dir>', 'directory of manifests to watch')
    .option('--kubeconfig <path>', 'run against the cluster of this kubeconfig')
    .option('--in-cluster', "run inside a cluster, with the pod's service account")
    .option('--health-address <host:port>', 'with a cluster: /healthz, /readyz and /metrics', '0.0.0.0:8080')
    .option(
      '--debug-address <host:port>',
      'with a cluster: /debug/proxies for turnpike proxy-status ' +
        '(names every proxy: keep it on loopback, use a port-forward)',
      '127.0.0.1:8081',
    )
    .option('--log-level <level>', 'with a cluster: pino log level', 'info')
    .option(
      '--leader-election-namespace <ns>',
      "with a cluster: the controller's namespace (its leader Lease, CA Secret and, by default, every proxy)",
      'turnpike-system',
    )
    .option(
      '--proxy-placement <mode>',
      "with a cluster: controller-namespace runs every Gateway's proxy in the controller's namespace (writes need a " +
        'Role there only, deploy/rbac.yaml); gateway-namespace runs each beside its Gateway (needs the ClusterRole ' +
        'of deploy/overlays/gateway-namespace)',
      'controller-namespace',
    )
    .option(
      '--proxy-drain-image <image>',
      "with a cluster: the image of the drain container in every proxy Pod (the controller's own: it runs " +
        '`turnpike proxy-drain`)',
      DEFAULT_DRAIN_IMAGE,
    )
    .option(
      '--xds-public-address <host:port>',
      'with a cluster: where proxies reach this controller for xDS',
      'turnpike.turnpike-system.svc:18000',
    )
    .option('--no-leader-elect', 'with a cluster: write without electing a leader (single replica)')
    .option(
      '--replica-name <name>',
      "with a cluster: this replica's name, which names its ProxyReport (default: $POD_NAME, else host name and pid)",
    )
    .option(
      '--report-lease <duration>',
      "with a cluster: a replica's ProxyReport not renewed for this long counts as gone (renewed every third of it)",
      '15s',
    )
    .option('--record <file>', 'write the event log (NDJSON) to this file')
    .option('-o, --output <format>', 'text or json (one JSON object per line)', 'text')
    .option('--quiet-ms <ms>', 'holdoff quiet period', String(DEFAULT_QUIET_MS))
    .option('--max-delay-ms <ms>', 'holdoff maximum delay', String(DEFAULT_MAX_DELAY_MS))
    .option('--poll <ms>', 'rescan the directory this often, besides file notifications', '1000')
    .option('--validate <mode>', `with --dir: ${VALIDATE_HELP}`, 'strict')
    .option(
      '--console-address <host:port>',
      'serve the web console here (default with --dir: 127.0.0.1, any free port; with a cluster: off); "off" to disable',
    )
    .option(
      '--console-token-file <file>',
      'with a cluster: the token the console asks for beyond loopback (a Secret mounted as a file; never logged)',
    )
    .option('--xds-address <host:port>', 'serve xDS (ADS) here; port 0 picks a free one', '127.0.0.1:18000')
    .option('--no-xds', 'do not serve xDS')
    .option(
      '--xds-tls-cert <file>',
      'with --dir: serve xDS over TLS with this certificate (PEM; reloaded when it changes)',
    )
    .option('--xds-tls-key <file>', 'with --dir: the key of --xds-tls-cert')
    .option(
      '--xds-client-ca <file>',
      'with --dir: require client certificates from these CAs; each may read only the Gateway it names',
    )
    .option(
      '--xds-trust-domain <domain>',
      'SPIFFE trust domain of proxy identities (spiffe://DOMAIN/ns/NS/gateway/NAME)',
      DEFAULT_TRUST_DOMAIN,
    )
    .option(
      '--xds-plaintext',
      "serve xDS and plugin content without TLS: with a cluster, any pod could read any Gateway's keys; with --dir, " +
        'needed to serve plaintext beyond loopback',
    )
    .option(
      '--xds-any-client',
      'with --dir and --xds-tls-cert but no --xds-client-ca: accept clients without a certificate (any client that ' +
        "connects reads every Gateway's configuration and keys)",
    )
    .option(
      '--xds-ca-validity <duration>',
      'with a cluster: lifetime of the control-plane CA (rotated at two thirds)',
      '8760h',
    )
    .option(
      '--xds-ca-rotation-grace <duration>',
      'with a cluster: on a CA rotation, how long the new CA is trusted before it signs ' +
        '(longer than Secret volumes take to reach pods)',
      '5m',
    )
    .option(
      '--xds-cert-validity <duration>',
      'with a cluster: lifetime of serving and proxy certificates (renewed at two thirds)',
      '720h',
    )
    .option(
      '--xds-server-name <name>',
      'with a cluster: a DNS name of the serving certificate (repeatable; default: the host of --xds-public-address)',
      (v: string, acc: string[] = []) => [...acc, v],
    )
    .option(
      '--proxy-bootstrap-dir <dir>',
      "with --dir and --xds-tls-cert: where the proxies' bootstrap and its SDS files are (the --out-dir of turnpike " +
        'bootstrap); their clusters to the plugin content server present the client certificate named there',
      '/etc/envoy',
    )
    .option(
      '--insecure-registry <host>',
      'reach this plugin registry over plain HTTP (repeatable; loopback always is)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    );
  const run = program.commands.find((c) => c.name() === 'run')!;
  for (const [flag, help, def] of pluginFlagHelp()) run.option(flag, help, def);
  recordFlags(run);
  run.action(async (opts: RunOptions) => {
    const modes = [opts.dir, opts.kubeconfig, opts.inCluster].filter(Boolean).length;
    if (modes !== 1) throw new CliError('run needs exactly one of --dir DIR, --kubeconfig PATH, --in-cluster');
    if (!opts.dir) {
      if (opts.xdsTlsCert || opts.xdsTlsKey || opts.xdsClientCa)
        throw new CliError(
          '--xds-tls-cert, --xds-tls-key and --xds-client-ca are for --dir; in a cluster the controller keeps its own CA',
        );
      // A token printed into the controller's log would be read by whoever may read the Pod's logs.
      const consoleAt = opts.consoleAddress && opts.consoleAddress !== 'off' ? opts.consoleAddress : undefined;
      if (consoleAt && !isLoopbackHost(hostPortFlag('--console-address', consoleAt).host) && !opts.consoleTokenFile)
        throw new CliError(
          `--console-address ${consoleAt}: beyond loopback the console asks for a token; in a cluster give it with ` +
            '--console-token-file FILE (it is never logged), or keep the console on loopback and use a port-forward',
        );
      if (!(PROXY_PLACEMENTS as readonly string[]).includes(opts.proxyPlacement))
        throw new CliError(`--proxy-placement ${opts.proxyPlacement}: use ${PROXY_PLACEMENTS.join(' or ')}`);
      await runInCluster({
        ...opts,
        proxyPlacement: opts.proxyPlacement as ProxyPlacementMode,
        quietMs: parseMs(opts.quietMs, '--quiet-ms'),
        maxDelayMs: parseMs(opts.maxDelayMs, '--max-delay-ms'),
        caValidityMs: parseDuration(opts.xdsCaValidity, '--xds-ca-validity'),
        caRotationGraceMs: parseDuration(opts.xdsCaRotationGrace, '--xds-ca-rotation-grace'),
        certValidityMs: parseDuration(opts.xdsCertValidity, '--xds-cert-validity'),
        reportLeaseMs: parseDuration(opts.reportLease, '--report-lease'),
        ...(opts.replicaName !== undefined ? { replicaName: replicaNameFlag(opts.replicaName) } : {}),
      });
      return;
    }
    if (opts.output !== 'text' && opts.output !== 'json')
      throw new CliError(`-o ${opts.output}: unknown format (text, json)`);
    await runOnDirectory(opts);
  });
}

function parseDuration(v: string, flag: string): number {
  const m = /^(\d+)(ms|s|m|h)$/.exec(v);
  if (!m || Number(m[1]) <= 0) throw new CliError(`${flag} ${v}: not a duration (e.g. 720h, 30m, 10s)`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
}

function replicaNameFlag(name: string): string {
  const problem = replicaNameProblem(name);
  if (problem) throw new CliError(`--replica-name ${name}: ${problem}`);
  return name;
}

function parseMs(v: string, flag: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new CliError(`${flag} ${v}: not a number of milliseconds`);
  return n;
}

export async function runOnDirectory(opts: RunOptions): Promise<void> {
  const quietMs = parseMs(opts.quietMs, '--quiet-ms');
  const maxDelayMs = parseMs(opts.maxDelayMs, '--max-delay-ms');
  const json = opts.output === 'json';
  // A missing or mistyped directory is a mistake, not an empty configuration.
  if (!existsSync(opts.dir!)) throw new CliError(`--dir ${opts.dir}: no such file or directory`);
  const header = {
    createdAt: new Date().toISOString(),
    quietMs,
    maxDelayMs,
    source: `dir:${opts.dir}`,
    completeAfter: [PLUGINS_SOURCE],
    leadingEdge: true,
  };
  const live = (opts.consoleAddress ?? '127.0.0.1:0') === 'off' ? undefined : new LiveLog(header);
  const file = opts.record ? openRecording(opts.record, header) : undefined;
  const { createdAt: _created, ...segmentHeader } = header;
  const flight = openFlightRecorder(opts, segmentHeader, (level, m) =>
    process.stderr.write(`turnpike: ${level === 'warn' ? 'warning: ' : ''}${m}\n`),
  );
  const recorder = teeRecorder(file, flight.recorder, live);
  const source = directorySource(opts.dir!, {
    pollMs: parseMs(opts.poll, '--poll'),
    validation: validationFlag(opts.validate),
    onError: (m) => process.stderr.write(`turnpike: error: ${m}\n`),
    onWarning: (m) => process.stderr.write(`turnpike: warning: ${m}\n`),
    onFixed: (m) => process.stderr.write(`turnpike: fixed: ${m}\n`),
    // A save that truncates a file, then writes it, is one change: the objects stay for the quiet period.
    emptiedFileHoldMs: quietMs,
  });
  if (opts.xds) refuseOpenXds(opts);
  // With xDS over TLS, plugin content is too: with the same certificate and, when xDS requires
  // client certificates, only to the proxies of Gateways whose configuration uses that content.
  const contentTls = contentTlsFromFiles(opts);
  const plugins = await startPlugins(
    {
      ...opts,
      retryListen: true,
      ...(contentTls ? { tls: contentTls } : {}),
      ...(contentTls?.current()?.ca ? { readerOf: (san) => gatewayOfCertificate(san, opts.xdsTrustDomain) } : {}),
    },
    (level, msg, fields) => {
      if (level !== 'info' || !json)
        process.stderr.write(
          `turnpike: ${level === 'info' ? '' : `${level}: `}${msg}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`,
        );
    },
  );
  let xds: Awaited<ReturnType<typeof startXds>> | undefined;
  try {
    const tls = xdsTlsFromFiles(opts);
    xds = opts.xds
      ? await startXds({
          address: opts.xdsAddress,
          plugins: (sha) => plugins.content.get(sha),
          ...(tls ? { tls } : {}),
          // The proxies fetch large Wasm with the client certificate their bootstrap's SDS files name
          // (each content cluster checks the name of its URL's host, so no server name is given here).
          ...(contentTls ? { controlPlaneTls: proxyTlsFiles(opts.proxyBootstrapDir) } : {}),
        })
      : undefined;
  } catch (e) {
    // The plugin server is already listening: close it, or the process would not exit.
    await plugins.close();
    throw e;
  }
  let consoleServer: { close: () => Promise<void> } | undefined;
  try {
    const data = live
      ? new ConsoleData(
          () => live.log(),
          () => live.base,
        )
      : undefined;
    const say = (m: string) => process.stderr.write(`turnpike: ${m}\n`);
    consoleServer = data
      ? await serveConsole(data, opts.consoleAddress ?? '127.0.0.1:0', '--console-address', say)
      : undefined;
  } catch (e) {
    await Promise.all([plugins.close(), xds?.close()]);
    throw e;
  }
  const controller = startController({
    // The DigestKey first: Secret values are digested under it, in the translator and in the event log.
    sources: [digestKeySource(), plugins.worker.events, ...(xds ? [xds.events] : []), source],
    sourceNames: [DIRECTORY_SOURCE],
    completeAfter: [PLUGINS_SOURCE],
    sinks: [plugins, ...(xds ? [xds] : []), statusPrinter(json)],
    quietMs,
    maxDelayMs,
    leadingEdge: true,
    adaptiveQuiet: true,
    ...(flight.firstSeq ? { firstSeq: flight.firstSeq } : {}),
    ...(recorder ? { recorder } : {}),
    // The directory's EndpointSlices are the operator's: loopback backends beside a local proxy are kept.
    translateOptions: { loopbackEndpoints: true },
    onError: (where, e) => process.stderr.write(`turnpike: error: ${where} failed: ${e.message}\n`),
  });
  // While the first files are read (on workers, for a large directory), not after.
  if (xds) loadEnvoyProtosSoon();
  return new Promise<void>((resolve) => {
    const stop = () => {
      // A client that keeps a stream or socket open must not keep us from exiting.
      setTimeout(() => process.exit(0), 2000).unref();
      void controller
        .stop()
        .then(() => consoleServer?.close())
        .then(() => resolve());
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

function proxyTlsFiles(dir: string): BootstrapTls {
  const at = resolve(dir);
  return { certDir: at, sdsDir: at, serverName: '' };
}

/**
 * xDS carries every Gateway's configuration and private keys: `run --dir` refuses to hand them to
 * whoever connects unless told to. TLS without client certificates, or plaintext beyond loopback,
 * each needs its flag.
 */
function refuseOpenXds(opts: RunOptions): void {
  const tls = !!(opts.xdsTlsCert || opts.xdsTlsKey);
  if (tls && !opts.xdsClientCa && !opts.xdsAnyClient)
    throw new CliError(
      "--xds-tls-cert without --xds-client-ca would serve every Gateway's configuration and private keys to any " +
        'client that connects: add --xds-client-ca FILE to require client certificates naming their Gateway, or ' +
        '--xds-any-client to accept that',
    );
  if (tls && opts.xdsPlaintext) throw new CliError('--xds-plaintext and --xds-tls-cert contradict each other');
  const host = hostPortFlag('--xds-address', opts.xdsAddress).host;
  if (!tls && !isLoopbackHost(host) && !opts.xdsPlaintext)
    throw new CliError(
      `--xds-address ${opts.xdsAddress}: plaintext xDS beyond loopback would serve every Gateway's configuration ` +
        'and private keys to anyone who can reach it: serve TLS (--xds-tls-cert, --xds-tls-key, --xds-client-ca), ' +
        'or add --xds-plaintext to accept that',
    );
  if (!tls && !isLoopbackHost(host))
    process.stderr.write(
      `turnpike: warning: serving xDS in plaintext on ${opts.xdsAddress}: ` +
        "anyone who reaches it reads every Gateway's keys\n",
    );
  if (tls && !opts.xdsClientCa)
    process.stderr.write(
      "turnpike: warning: --xds-any-client: any client that connects reads every Gateway's configuration and keys\n",
    );
}
