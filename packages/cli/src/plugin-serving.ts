// The plugin side of `turnpike run`: the fetch worker (a source of PluginFetch events fed by the
// engine's own events), the in-memory content store the xDS builder and the infra applier read,
// and the HTTP server that hands large Wasm to the proxies.
import { readFileSync } from 'node:fs';
import type { Sink } from './controller.js';
import {
  DEFAULT_PLUGIN_MAX_TOTAL_BYTES,
  MemoryStorage,
  OciClient,
  parseRegistryList,
  PluginContentServer,
  PluginContentStore,
  PluginFetchWorker,
  type ContentReader,
  type ContentServerTls,
  type ContentTlsSource,
  type PluginStorage,
} from '@turnpike/plugins';
import type { GatewayIR } from '@turnpike/api';
import { pluginsUsed } from '@turnpike/xds';
import { CliError } from './errors.js';
import { hostPortFlag, isLoopbackHost } from './flags.js';

export interface PluginOptions {
  pluginAddress: string;
  pluginPublicUrl?: string;
  pluginMaxBytes: string;
  /** The most plugin content held in memory in all (unset: PLUGIN_DEFAULTS.maxTotalBytes). */
  pluginMaxTotalBytes?: string;
  pluginResolveInterval: string;
  pluginUrlKeyFile?: string;
  insecureRegistry?: string[];
  /** `host[:port],...`: the only registries plugins may come from; unset: any. */
  pluginRegistries?: string;
  /**
   * Serve plugin content over HTTPS (requiring client certificates when it names CAs): fixed, or from
   * a source followed as it changes (ContentTlsSource).
   */
  tls?: ContentServerTls | ContentTlsSource;
  /** With `tls`: the Gateway a client certificate names; content goes only to Gateways that use it. */
  readerOf?: ContentReader;
  /** A taken --plugin-address is reported and tried again (run --dir) rather than fatal (in a cluster). */
  retryListen?: boolean;
}

export const PLUGIN_DEFAULTS = {
  maxBytes: String(32 * 1024 * 1024),
  maxTotalBytes: String(DEFAULT_PLUGIN_MAX_TOTAL_BYTES),
  resolveIntervalS: '600',
};

/** The worker is a sink of every translation, the incomplete ones too (they tell it what to fetch). */
export interface PluginServing extends Sink {
  worker: PluginFetchWorker;
  content: PluginContentStore;
  server: PluginContentServer;
  close(): Promise<void>;
}

function positive(v: string, flag: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new CliError(`${flag} ${v}: not a positive number`);
  return n;
}

/**
 * Starts the content server and the worker; `storage` defaults to memory (off-cluster). After the
 * first translation the worker reports `synced` once every plugin has a first result: the
 * translations before that are kept from the other sinks (completeAfter).
 */
export async function startPlugins(
  o: PluginOptions,
  log: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void,
  storage?: (urlFor: (sha: string, type: string) => string) => PluginStorage,
  onAttempt?: (result: string) => void,
  urlKey?: () => Promise<Buffer>,
): Promise<PluginServing> {
  const maxBytes = positive(o.pluginMaxBytes, '--plugin-max-bytes');
  const maxTotalBytes = positive(o.pluginMaxTotalBytes ?? PLUGIN_DEFAULTS.maxTotalBytes, '--plugin-max-total-bytes');
  if (maxTotalBytes < maxBytes)
    throw new CliError(
      `--plugin-max-total-bytes ${maxTotalBytes} is less than --plugin-max-bytes ${maxBytes}: no plugin of the largest size would fit`,
    );
  const resolveEveryMs = positive(o.pluginResolveInterval, '--plugin-resolve-interval') * 1000;
  let registries: string[] | undefined;
  try {
    registries = o.pluginRegistries === undefined ? undefined : parseRegistryList(o.pluginRegistries);
  } catch (e) {
    throw new CliError(`--plugin-registries ${o.pluginRegistries}: ${(e as Error).message}`);
  }
  let key: Buffer | undefined;
  if (o.pluginUrlKeyFile) {
    try {
      key = readFileSync(o.pluginUrlKeyFile);
    } catch (e) {
      throw new CliError(`--plugin-url-key-file ${o.pluginUrlKeyFile}: ${(e as Error).message}`);
    }
    if (key.length < 16)
      throw new CliError(`--plugin-url-key-file ${o.pluginUrlKeyFile}: the key must have at least 16 bytes`);
  } else if (urlKey) {
    key = await urlKey();
  }
  const content = new PluginContentStore(maxTotalBytes);
  if (o.tls && o.pluginPublicUrl?.startsWith('http:'))
    throw new CliError(`--plugin-public-url ${o.pluginPublicUrl}: plugin content is served over TLS, use https://`);
  const server = new PluginContentServer(content, o.pluginPublicUrl, key, o.tls, o.readerOf, (e) =>
    log(
      'error',
      `plugin content server: new TLS certificates could not be used; serving the previous ones (${e.message})`,
    ),
  );
  const hp = hostPortFlag('--plugin-address', o.pluginAddress);
  if (!o.tls && !isLoopbackHost(hp.host))
    log(
      'warn',
      `--plugin-address ${o.pluginAddress}: plugin content is served in plaintext beyond loopback: whoever sees the ` +
        "traffic reads each plugin's code as the proxies fetch it; serve it over TLS (--xds-tls-cert with --dir, " +
        'or without --xds-plaintext in a cluster)',
    );
  const listen = async () => {
    const port = await server.listen(hp.host, hp.port);
    log('info', `serving plugin content on ${hp.host}:${port}`);
  };
  try {
    await listen();
  } catch (e) {
    const why = `--plugin-address ${o.pluginAddress}: cannot listen (${(e as Error).message})`;
    if (!o.retryListen) throw new CliError(why);
    // Most directories use no plugin, or only ones small enough to go inline: go on, and keep trying.
    log('warn', `${why}; plugin content too large to send inline cannot be served until it can; trying every 5 s`);
    const retry = setInterval(() => {
      listen().then(
        () => clearInterval(retry),
        () => undefined,
      );
    }, 5000);
    retry.unref();
  }
  const urlFor = (sha: string, type: string) => server.urlFor(sha, type);
  const worker = new PluginFetchWorker({
    client: new OciClient({ maxBytes, timeoutMs: 30_000, insecureRegistries: o.insecureRegistry ?? [] }),
    storage: storage ? storage(urlFor) : new MemoryStorage(urlFor),
    content,
    maxBytes,
    resolveEveryMs,
    log,
    ...(registries ? { registries } : {}),
    ...(onAttempt ? { onAttempt } : {}),
  });
  return {
    worker,
    content,
    server,
    name: 'plugins',
    beforeComplete: true,
    accept: (out) => {
      worker.accept(out);
      if (o.tls && o.readerOf) server.setReaders(contentReaders(out.result.xdsIR.gateways));
    },
    async close() {
      worker.stop();
      await server.close();
    },
  };
}

/** Which Gateways' configuration uses each plugin content (by sha256): who may read it over TLS. */
export function contentReaders(gateways: Iterable<readonly [string, GatewayIR]>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [key, gw] of gateways)
    for (const port of gw.ports) {
      // What routes run, and what listeners run before routing (GEP-5224 ExtensionRef filters).
      const listenerPlugins = port.listeners.flatMap((l) =>
        (l.preRouting ?? []).flatMap((f) => (f.type === 'ExtensionRef' ? [f.plugin] : [])),
      );
      for (const use of [...pluginsUsed(port.listeners), ...listenerPlugins]) {
        let set = out.get(use.sha256);
        if (!set) out.set(use.sha256, (set = new Set()));
        set.add(key);
      }
    }
  return out;
}

/** The plugin flags, shared by both ways of running. */
export function pluginFlagHelp(): [string, string, string?][] {
  return [
    [
      '--plugin-address <host:port>',
      'serve large plugin content to the proxies here (port 0 picks one)',
      '127.0.0.1:18002',
    ],
    ['--plugin-public-url <url>', 'where proxies reach the plugin content server (default: its listen address)'],
    ['--plugin-max-bytes <n>', 'largest plugin fetched', PLUGIN_DEFAULTS.maxBytes],
    [
      '--plugin-max-total-bytes <n>',
      'most plugin content held in memory in all (a plugin that would go beyond is not fetched, and says so)',
      PLUGIN_DEFAULTS.maxTotalBytes,
    ],
    ['--plugin-resolve-interval <s>', 'how often plugin tags are resolved again', PLUGIN_DEFAULTS.resolveIntervalS],
    ['--plugin-url-key-file <file>', 'HMAC key for the content URLs (replicas sharing it serve the same URLs)'],
    [
      '--plugin-registries <hosts>',
      'fetch plugins only from these registries (host[:port],...; a PluginInstallation naming another is refused); ' +
        'default: any',
    ],
  ];
}
