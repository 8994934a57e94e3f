// Plugins in Envoy: each plugin a listener's routes use becomes one HTTP filter of its own
// (named `turnpike.plugin/<namespace>/<name>`), disabled in the connection manager and enabled
// on exactly the routes whose ExtensionRef names it. Its code comes from the file mounted in the
// proxy when the Gateway's ProxyConfig installs it, else inline (Lua, small Wasm), else from the
// controller's HTTP server with the sha256 Envoy checks (large Wasm).
import type { GatewayIR, GatewayListenerIR, PluginRefIR } from '@turnpike/api';
import { controlPlaneTlsContext, type BootstrapTls } from './bootstrap.js';
import type { Any, AsyncDataSource, Cluster, FilterConfig, HttpFilter, Lua, Wasm } from './envoy-types.js';

/** Plugin content by sha256 (hex). */
export type PluginLookup = (sha256: string) => Buffer | undefined;

export type PluginUse = PluginRefIR;

/** What building plugin filters reads (the Gateway's mounted plugins, content by sha256) and adds to. */
export interface PluginContext {
  gw: GatewayIR;
  lookup: PluginLookup;
  /** Every plugin a filter was built for, whose content clusters (large Wasm) must be sent. */
  used: PluginUse[];
}

export const PLUGIN_FILTER_PREFIX = 'turnpike.plugin/';
const CONTENT_CLUSTER_PREFIX = 'turnpike/plugin-content/';

/** A route whose plugin content is missing fails closed: this Lua answers 500. */
const UNAVAILABLE_LUA =
  'function envoy_on_request(h) h:respond({[":status"] = "500"}, "plugin content unavailable") end\n';

function typed<T extends object>(message: string, value: T): Any {
  return { '@type': `type.googleapis.com/${message}`, ...value } as Any;
}

export function pluginFilterName(plugin: string): string {
  return `${PLUGIN_FILTER_PREFIX}${plugin}`;
}

/** The per-route config that enables a plugin's filter on one route. */
export function enablePlugin(): Any {
  return typed<FilterConfig>('envoy.config.route.v3.FilterConfig', {});
}

/** Every plugin the routes of these listeners use, once each, sorted by name. */
export function pluginsUsed(listeners: readonly GatewayListenerIR[]): PluginUse[] {
  const byName = new Map<string, PluginUse>();
  for (const l of listeners)
    for (const vh of l.virtualHosts ?? [])
      for (const r of vh.routes) for (const p of r.filters?.plugins ?? []) byName.set(p.name, p);
  return [...byName.keys()].sort().map((k) => byName.get(k)!);
}

function contentCluster(url: string): { name: string; host: string; port: number } {
  const u = new URL(url);
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return { name: `${CONTENT_CLUSTER_PREFIX}${host}:${port}`, host, port };
}

/** The HTTP filters for the plugins used (disabled; routes enable them). */
export function pluginHttpFilters(used: readonly PluginUse[], gw: GatewayIR, lookup: PluginLookup): HttpFilter[] {
  return used.map((p): HttpFilter => ({
    name: pluginFilterName(p.name),
    disabled: true,
    typed_config: pluginConfig(p, gw, lookup),
  }));
}

/**
 * A plugin's filter config: its Lua or Wasm code from the file the proxy mounts, inline, or by URL;
 * missing content fails closed (a Lua answering 500).
 */
export function pluginConfig(p: PluginUse, gw: GatewayIR, lookup: PluginLookup): Any {
  const m = (gw.installedPlugins ?? []).find((installed) => installed.name === p.name);
  // A held rollout pins the digest the Pods have mounted: never a route that asks for content they lack.
  const file = m && (m.sha256 === p.sha256 || m.held) ? m.mountPath : undefined;
  const content = file ? undefined : lookup(p.sha256);
  if (p.type === 'lua' || (!file && !content && !p.url)) {
    const source = file
      ? { filename: file }
      : { inline_string: content && p.type === 'lua' ? content.toString('utf8') : UNAVAILABLE_LUA };
    return typed<Lua>('envoy.extensions.filters.http.lua.v3.Lua', { default_source_code: source });
  }
  let code: AsyncDataSource;
  if (file) code = { local: { filename: file } };
  else if (content && !p.url) code = { local: { inline_bytes: content.toString('base64') as unknown as Buffer } };
  else {
    const c = contentCluster(p.url!);
    code = {
      remote: {
        http_uri: { uri: p.url!, cluster: c.name, timeout: { seconds: '30', nanos: 0 } },
        sha256: p.sha256,
        retry_policy: { num_retries: { value: 10 } },
      },
    };
  }
  return typed<Wasm>('envoy.extensions.filters.http.wasm.v3.Wasm', {
    config: {
      name: p.name,
      root_id: '',
      fail_open: false,
      vm_config: { vm_id: p.name, runtime: 'envoy.wasm.runtime.v8', code },
    },
  });
}

/** The clusters that reach the plugin content server; over TLS (with the proxy's client certificate) for https URLs. */
export function pluginContentClusters(used: readonly PluginUse[], gw: GatewayIR, tls?: BootstrapTls): Cluster[] {
  const mounted = new Map((gw.installedPlugins ?? []).map((p) => [p.name, p]));
  const out = new Map<string, Cluster>();
  for (const p of used) {
    const m = mounted.get(p.name);
    if (p.type !== 'wasm' || !p.url || (m && (m.sha256 === p.sha256 || m.held))) continue;
    const c = contentCluster(p.url);
    const https = new URL(p.url).protocol === 'https:';
    out.set(c.name, {
      ...(https && tls
        ? {
            transport_socket: {
              name: 'envoy.transport_sockets.tls',
              typed_config: {
                '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
                ...controlPlaneTlsContext(tls, 'plugins', c.host),
              },
            },
          }
        : {}),
      name: c.name,
      type: /^[0-9.]+$|:/.test(c.host) ? 'STATIC' : 'STRICT_DNS',
      connect_timeout: { seconds: '5', nanos: 0 },
      load_assignment: {
        cluster_name: c.name,
        endpoints: [
          { lb_endpoints: [{ endpoint: { address: { socket_address: { address: c.host, port_value: c.port } } } }] },
        ],
      },
    });
  }
  return [...out.values()];
}
