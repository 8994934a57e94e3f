// Plugins in Envoy resources: one disabled HTTP filter per plugin, enabled on the routes that
// name it; code from the mounted file, inline, or fetched from the controller with its sha256.
import { describe, expect, it } from '@jest/globals';
import { referencedPlugins, type GatewayIR, type HTTPRouteIR } from '@turnpike/api';
import { decodeMessage, encodeMessage, envoyResourcesFor, pluginFilterName, validateResources } from '../src/index.js';

const LUA = 'function envoy_on_request(h) h:headers():add("x-plugin", "hi") end';
const WASM = Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
const SHA_LUA = 'a'.repeat(64),
  SHA_WASM = 'b'.repeat(64),
  SHA_BIG = 'c'.repeat(64);

const route = (name: string, plugins?: NonNullable<HTTPRouteIR['filters']>['plugins']): HTTPRouteIR => ({
  name,
  source: { kind: 'HTTPRoute', namespace: 'apps', name, rule: 0 },
  match: { path: { type: 'PathPrefix', value: `/${name}` }, headers: [], queryParams: [] },
  backends: [{ cluster: 'apps/web/8080', weight: 1 }],
  ...(plugins ? { filters: { plugins } } : {}),
});

function gatewayIR(routes: HTTPRouteIR[], installed: GatewayIR['installedPlugins'] = []): GatewayIR {
  return {
    name: 'infra/gw',
    ports: [
      {
        name: 'tcp-80',
        port: 80,
        listenPort: 10080,
        transport: 'tcp',
        listeners: [
          { name: 'Gateway/infra/gw/http', protocol: 'HTTP', virtualHosts: [{ name: 'all', domains: ['*'], routes }] },
        ],
      },
    ],
    clusters: [{ name: 'apps/web/8080', service: { namespace: 'apps', name: 'web', port: 8080 }, protocol: 'http' }],
    secrets: [],
    installedPlugins: installed,
  } as unknown as GatewayIR;
}

const lookup = (sha: string) => (sha === SHA_LUA ? Buffer.from(LUA) : sha === SHA_WASM ? WASM : undefined);

function hcmFilters(res: ReturnType<typeof envoyResourcesFor>) {
  const hcm = res.listeners[0]!.filter_chains![0]!.filters![0]!.typed_config as unknown as {
    http_filters: { name: string; disabled?: boolean; typed_config: Record<string, unknown> }[];
  };
  return hcm.http_filters;
}

describe('plugin filters in xDS', () => {
  it('a Lua plugin is a disabled filter enabled only on the route that names it', () => {
    const res = envoyResourcesFor(
      gatewayIR([route('with', [{ name: 'apps/hello', type: 'lua', sha256: SHA_LUA }]), route('without')]),
      () => undefined,
      lookup,
    );
    expect(validateResources(res)).toEqual([]);
    const filters = hcmFilters(res);
    expect(filters.map((f) => f.name)).toEqual([pluginFilterName('apps/hello'), 'envoy.filters.http.router']);
    expect(filters[0]).toMatchObject({
      disabled: true,
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua',
        default_source_code: { inline_string: LUA },
      },
    });
    const routes = res.routes[0]!.virtual_hosts![0]!.routes!;
    expect(Object.keys(routes.find((r) => r.name === 'with')!.typed_per_filter_config ?? {})).toEqual([
      pluginFilterName('apps/hello'),
    ]);
    expect(routes.find((r) => r.name === 'without')!.typed_per_filter_config).toBeUndefined();
    const bytes = encodeMessage('envoy.config.listener.v3.Listener', res.listeners[0]!);
    expect(JSON.stringify(decodeMessage('envoy.config.listener.v3.Listener', bytes))).toContain('x-plugin');
  });

  it('an installed plugin is read from its mounted file; other sources are inline or fetched with the sha256', () => {
    const gw = gatewayIR(
      [
        route('r', [
          { name: 'apps/hello', type: 'lua', sha256: SHA_LUA },
          { name: 'apps/small', type: 'wasm', sha256: SHA_WASM },
          {
            name: 'apps/big',
            type: 'wasm',
            sha256: SHA_BIG,
            url: 'http://turnpike.turnpike-system.svc:18002/plugins/tok.wasm',
          },
        ]),
      ],
      [{ name: 'apps/hello', sha256: SHA_LUA, mountPath: '/etc/turnpike/plugins/apps/hello/plugin.lua' }],
    );
    const res = envoyResourcesFor(gw, () => undefined, lookup);
    expect(validateResources(res)).toEqual([]);
    const byName = new Map(hcmFilters(res).map((f) => [f.name, f.typed_config]));
    expect(byName.get(pluginFilterName('apps/hello'))).toMatchObject({
      default_source_code: { filename: '/etc/turnpike/plugins/apps/hello/plugin.lua' },
    });
    expect(byName.get(pluginFilterName('apps/small'))).toMatchObject({
      config: {
        vm_config: { runtime: 'envoy.wasm.runtime.v8', code: { local: { inline_bytes: WASM.toString('base64') } } },
      },
    });
    expect(byName.get(pluginFilterName('apps/big'))).toMatchObject({
      config: {
        vm_config: {
          code: {
            remote: {
              sha256: SHA_BIG,
              http_uri: {
                uri: 'http://turnpike.turnpike-system.svc:18002/plugins/tok.wasm',
                cluster: 'turnpike/plugin-content/turnpike.turnpike-system.svc:18002',
              },
            },
          },
        },
      },
    });
    const cluster = res.clusters.find((c) => c.name === 'turnpike/plugin-content/turnpike.turnpike-system.svc:18002');
    expect(cluster).toMatchObject({ type: 'STRICT_DNS' });
    for (const c of res.clusters) encodeMessage('envoy.config.cluster.v3.Cluster', c);
  });

  it('a plugin whose content is not at hand fails closed: its filter answers 500', () => {
    const res = envoyResourcesFor(
      gatewayIR([route('r', [{ name: 'apps/lost', type: 'lua', sha256: 'd'.repeat(64) }])]),
      () => undefined,
      lookup,
    );
    expect(JSON.stringify(hcmFilters(res)[0]!.typed_config)).toMatch(/h:respond\(\{\[\\":status\\"\] = \\"500\\"\}/);
    expect(validateResources(res)).toEqual([]);
  });
});

describe('plugin filters on routes the proxy answers itself', () => {
  it('a route answered directly (no ready endpoint) still enables its plugin', () => {
    const r = {
      ...route('down', [{ name: 'apps/hello', type: 'lua', sha256: SHA_LUA }]),
      backends: undefined,
      directResponse: { status: 503 },
    } as HTTPRouteIR;
    const res = envoyResourcesFor(gatewayIR([r]), () => undefined, lookup);
    expect(Object.keys(res.routes[0]!.virtual_hosts![0]!.routes![0]!.typed_per_filter_config ?? {})).toEqual([
      pluginFilterName('apps/hello'),
    ]);
  });
  it('a held rollout pins the mounted file: a route naming a newer digest reads what the Pods have', () => {
    const mounted = { name: 'apps/hello', sha256: SHA_LUA, mountPath: '/etc/turnpike/plugins/apps/hello/plugin.lua' };
    const newer = [route('r', [{ name: 'apps/hello', type: 'lua' as const, sha256: 'd'.repeat(64) }])];
    const source = (installed: GatewayIR['installedPlugins']) =>
      (
        hcmFilters(envoyResourcesFor(gatewayIR(newer, installed), () => undefined, lookup))[0]!.typed_config as {
          default_source_code: Record<string, string>;
        }
      ).default_source_code;
    // Not held: the mounted file is another digest, so the content comes inline (here: unavailable, fails closed).
    expect(source([mounted]).filename).toBeUndefined();
    expect(source([{ ...mounted, held: true }])).toEqual({ filename: mounted.mountPath });
    expect(referencedPlugins(gatewayIR(newer, [{ ...mounted, held: true }]))).toEqual([`apps/hello@${SHA_LUA}`]);
  });
});
