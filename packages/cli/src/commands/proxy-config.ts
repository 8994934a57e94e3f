// `turnpike proxy-config --gateway NS/NAME`: the Envoy configuration a running controller serves
// to that Gateway's proxies, fetched over ADS as a proxy would (with its credentials when the
// controller requires mTLS), decoded to JSON. Private keys and tracer export header values are redacted.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Command } from 'commander';
import { DEBUG_READ_METADATA, decodeMessage, loadAdsService, TYPE } from '@turnpike/xds';
import { CliError } from '../errors.js';
import { gatewayFlag, hostPortFlag } from '../flags.js';
import { format, parseFormat } from '../output.js';

const MESSAGE: Record<string, string> = {
  [TYPE.listener]: 'envoy.config.listener.v3.Listener',
  [TYPE.route]: 'envoy.config.route.v3.RouteConfiguration',
  [TYPE.cluster]: 'envoy.config.cluster.v3.Cluster',
  [TYPE.endpoint]: 'envoy.config.endpoint.v3.ClusterLoadAssignment',
  [TYPE.secret]: 'envoy.extensions.transport_sockets.tls.v3.Secret',
};

type Json = Record<string, unknown>;
interface Flags {
  gateway: string;
  xdsAddress: string;
  tlsDir?: string;
  serverName?: string;
  output: string;
  timeout: string;
}

/** Every value under `key` anywhere in a decoded resource. */
function collect(v: unknown, key: string, out: Set<string>): Set<string> {
  if (Array.isArray(v)) for (const x of v) collect(x, key, out);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === key && typeof x === 'string') out.add(x);
      else collect(x, key, out);
    }
  }
  return out;
}

/** Names of the SDS secrets a resource refers to over ADS (file-based ones are not fetched). */
function sdsNames(v: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(v)) for (const x of v) sdsNames(x, out);
  else if (v && typeof v === 'object') {
    const o = v as Json;
    if (typeof o.name === 'string' && (o.sds_config as Json | undefined)?.ads) out.add(o.name);
    for (const x of Object.values(o)) sdsNames(x, out);
  }
  return out;
}

function redact(secret: Json): Json {
  const tc = secret.tls_certificate as Json | undefined;
  if (tc?.private_key) tc.private_key = { inline_string: '<redacted>' };
  return secret;
}

/**
 * A resource with the values of every gRPC initial metadata in it redacted: a tracer's export headers
 * (XTelemetryPolicy) are often an API key. The controller redacts them for a debug read already; a
 * controller from before did not, so the output never shows them either way.
 */
export function redactInitialMetadata(v: unknown): unknown {
  if (Array.isArray(v)) for (const x of v) redactInitialMetadata(x);
  else if (v && typeof v === 'object') {
    const o = v as Json;
    if (Array.isArray(o.initial_metadata))
      for (const m of o.initial_metadata as Json[]) if (m && typeof m === 'object') m.value = '<redacted>';
    for (const x of Object.values(o)) redactInitialMetadata(x);
  }
  return v;
}

export async function fetchProxyConfig(o: {
  address: string;
  node: string;
  credentials: grpc.ChannelCredentials;
  serverName?: string;
  timeoutMs: number;
}): Promise<Record<string, Json[]>> {
  const Ads = grpc.makeGenericClientConstructor(loadAdsService(), 'AggregatedDiscoveryService');
  const client = new Ads(
    o.address,
    o.credentials,
    o.serverName ? { 'grpc.ssl_target_name_override': o.serverName, 'grpc.default_authority': o.serverName } : {},
  );
  const call = (
    client as unknown as { StreamAggregatedResources(): grpc.ClientDuplexStream<Json, Json> }
  ).StreamAggregatedResources();
  const waiting = new Map<string, (r: Json) => void>();
  let failure: Error | undefined;
  call.on('data', (r: Json) => {
    waiting.get(r.type_url as string)?.(r);
  });
  call.on('error', (e: Error) => {
    failure = e;
    for (const w of waiting.values()) w({});
  });
  // A debug read: served what the Gateway's proxies are, left out of their sync accounting.
  const node = {
    id: 'turnpike-proxy-config',
    cluster: o.node,
    metadata: { fields: { [DEBUG_READ_METADATA]: { boolValue: true } } },
  };
  const fetch = (typeUrl: string, names: string[]) =>
    new Promise<Json[]>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${typeUrl.slice(typeUrl.lastIndexOf('.') + 1)} response in ${o.timeoutMs} ms`)),
        o.timeoutMs,
      );
      waiting.set(typeUrl, (r) => {
        clearTimeout(timer);
        waiting.delete(typeUrl);
        if (failure) return reject(failure);
        call.write({
          node,
          type_url: typeUrl,
          resource_names: names,
          version_info: r.version_info,
          response_nonce: r.nonce,
        });
        resolve(
          ((r.resources ?? []) as { value: Buffer }[]).map((x) => decodeMessage(MESSAGE[typeUrl]!, x.value) as Json),
        );
      });
      call.write({ node, type_url: typeUrl, resource_names: names });
    });
  try {
    const listeners = (await fetch(TYPE.listener, [])).map((l) => redactInitialMetadata(l) as Json);
    const clusters = await fetch(TYPE.cluster, []);
    const routeNames = [...collect(listeners, 'route_config_name', new Set())].sort();
    const routes = routeNames.length ? await fetch(TYPE.route, routeNames) : [];
    const edsNames = [
      ...collect(
        clusters.filter((c) => c.type === 'EDS'),
        'service_name',
        new Set(),
      ),
    ].sort();
    const endpoints = edsNames.length ? await fetch(TYPE.endpoint, edsNames) : [];
    const secretNames = [...sdsNames([listeners, clusters], new Set())].sort();
    const secrets = secretNames.length ? (await fetch(TYPE.secret, secretNames)).map(redact) : [];
    return { listeners, routes, clusters, endpoints, secrets };
  } finally {
    call.end();
    client.close();
  }
}

export function registerProxyConfig(program: Command): void {
  program
    .command('proxy-config')
    .description(
      "print the Envoy configuration a running controller serves to a Gateway's proxies " +
        '(private keys and tracer export header values redacted)',
    )
    .requiredOption('--gateway <ns/name>', 'the Gateway whose configuration to fetch')
    .option('--xds-address <host:port>', 'where the controller serves xDS', '127.0.0.1:18000')
    .option(
      '--tls-dir <dir>',
      "mTLS with tls.crt, tls.key and ca.crt from this directory (the Gateway's xDS client Secret)",
    )
    .option(
      '--server-name <name>',
      "with --tls-dir: the name in the controller's certificate",
      'turnpike.turnpike-system.svc',
    )
    .option('--timeout <ms>', 'how long to wait for each response', '10000')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .action(async (opts: Flags) => {
      const fmt = parseFormat(opts.output);
      const { namespace: ns, name } = gatewayFlag(opts.gateway);
      hostPortFlag('--xds-address', opts.xdsAddress);
      let credentials = grpc.credentials.createInsecure();
      if (opts.tlsDir) {
        const read = (f: string) => {
          try {
            return readFileSync(join(opts.tlsDir!, f));
          } catch (e) {
            throw new CliError(
              `--tls-dir ${opts.tlsDir}: cannot read ${f} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
            );
          }
        };
        credentials = grpc.credentials.createSsl(read('ca.crt'), read('tls.key'), read('tls.crt'));
      }
      let config;
      try {
        config = await fetchProxyConfig({
          address: opts.xdsAddress,
          node: `${ns}/${name}`,
          credentials,
          ...(opts.tlsDir ? { serverName: opts.serverName } : {}),
          timeoutMs: Number(opts.timeout) || 10_000,
        });
      } catch (e) {
        throw new CliError(`${opts.xdsAddress}: ${(e as { details?: string }).details ?? (e as Error).message}`);
      }
      process.stdout.write(format({ gateway: `${ns}/${name}`, ...config }, fmt));
    });
}
