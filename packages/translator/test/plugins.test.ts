// Plugin rules in the translator: PluginInstallation status from the fetch worker's results,
// ExtensionRef filters on routes, ProxyConfig installation into the infra and xDS IR.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { PLUGIN_MOUNT_ROOT } from '../src/index.js';
import {
  cond,
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  referenceGrant,
  run,
  service,
  sr,
} from './builders.js';

const SHA = 'a'.repeat(64);
const SHA2 = 'b'.repeat(64);

const pi = (name: string, ns = 'apps', generation = 1, image = `registry.example.com/team/${name}:v1`): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'PluginInstallation',
  metadata: { name, namespace: ns, generation },
  spec: { image, type: 'lua' },
});
const fetched = (
  name: string,
  ns = 'apps',
  o: { generation?: number; sha?: string; ok?: boolean; reason?: string; image?: string; configMap?: string } = {},
): KubeObject => ({
  apiVersion: 'turnpike.dev/internal',
  kind: 'PluginFetch',
  metadata: { name, namespace: ns },
  status: {
    observedGeneration: o.generation ?? 1,
    image: o.image ?? `registry.example.com/team/${name}:v1`,
    fetched: o.ok ?? true,
    reason: o.reason ?? 'Fetched',
    message: o.ok === false ? 'registry.example.com is unreachable' : 'Fetched sha256:1234 (10 bytes)',
    ...(o.ok === false
      ? {}
      : {
          digest: 'sha256:1234',
          sha256: o.sha ?? SHA,
          size: 10,
          storage: { configMap: o.configMap ?? `turnpike-plugin-${name}` },
        }),
  },
});
const proxyConfig = (plugins: Record<string, unknown>[], ns = 'infra'): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'ProxyConfig',
  metadata: { name: 'with-plugins', namespace: ns, generation: 3 },
  spec: { plugins },
});
const gatewayWithConfig = () =>
  gateway('gw', [http()], {
    infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'with-plugins' } },
  });
const routeWith = (name: string, plugin?: string) =>
  httpRoute(name, {
    parentRefs: [{ name: 'gw', namespace: 'infra' }],
    hostnames: [`${name}.example.com`],
    rules: [
      {
        ...(plugin
          ? {
              filters: [
                {
                  type: 'ExtensionRef',
                  extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: plugin },
                },
              ],
            }
          : {}),
        backendRefs: [{ name: 'web', port: 8080 }],
      },
    ],
  });
const base = [gatewayClass(), gateway('gw', [http()]), service('web'), endpointSlice('web')];

function routesOf(r: ReturnType<typeof run>) {
  return [...r.xdsIR.gateways.values()][0]!.ports[0]!.listeners[0]!.virtualHosts!.flatMap((v) => v.routes);
}

describe('plugin installation status', () => {
  it('Fetched follows the fetch result for the current generation; Pending before one exists', () => {
    const used = [...base, routeWith('user', 'hello')];
    expect(
      sr(
        (run([...used, pi('hello')]).statuses.get('PluginInstallation/apps/hello') as { conditions: unknown })
          .conditions,
        'Fetched',
      ),
    ).toBe('False/Pending');
    const s = run([...used, pi('hello'), fetched('hello')]).statuses.get('PluginInstallation/apps/hello') as Record<
      string,
      unknown
    >;
    expect(sr(s.conditions, 'Fetched')).toBe('True/Fetched');
    expect(sr(s.conditions, 'Accepted')).toBe('True/Accepted');
    expect(s).toMatchObject({
      observedGeneration: 1,
      digest: 'sha256:1234',
      storage: { configMap: 'turnpike-plugin-hello', sha256: SHA, size: 10 },
    });
    const failed = run([...used, pi('hello'), fetched('hello', 'apps', { ok: false, reason: 'Pending' })]).statuses.get(
      'PluginInstallation/apps/hello',
    ) as Record<string, unknown>;
    expect(cond(failed.conditions, 'Fetched')).toMatchObject({
      status: 'False',
      reason: 'Pending',
      message: 'registry.example.com is unreachable',
    });
  });

  it('a new generation is Pending while the previous content keeps serving (make before break)', () => {
    const objects = [
      ...base,
      pi('hello', 'apps', 2, 'registry.example.com/team/hello:v2'),
      fetched('hello'),
      routeWith('r', 'hello'),
    ];
    const r = run(objects);
    const s = r.statuses.get('PluginInstallation/apps/hello') as Record<string, unknown>;
    expect(sr(s.conditions, 'Fetched')).toBe('False/Pending');
    expect(s.digest).toBe('sha256:1234');
    expect(routesOf(r)[0]!.filters?.plugins).toEqual([{ name: 'apps/hello', type: 'lua', sha256: SHA }]);
    // The new generation failed: the route stops using the old content and answers 500.
    const failed = run([
      ...base,
      pi('hello', 'apps', 2, 'registry.example.com/team/hello:v2'),
      fetched('hello', 'apps', {
        generation: 2,
        image: 'registry.example.com/team/hello:v2',
        ok: false,
        reason: 'NotFound',
      }),
      routeWith('r', 'hello'),
    ]);
    expect(
      sr(
        (failed.statuses.get('HTTPRoute/apps/r') as { parents: { conditions: unknown }[] }).parents[0]!.conditions,
        'ResolvedRefs',
      ),
    ).toBe('False/PluginNotFetched');
  });

  it('a pull Secret gone after the fetch keeps the content serving; a revoked grant stops it', () => {
    const withSecret = (ns: string) =>
      ({
        ...pi('hello'),
        spec: {
          image: 'registry.example.com/team/hello:v1',
          type: 'lua',
          pullSecretRef: { name: 'creds', namespace: ns },
        },
      }) as KubeObject;
    const missing = run([...base, withSecret('apps'), fetched('hello'), routeWith('r', 'hello')]);
    expect(
      sr((missing.statuses.get('PluginInstallation/apps/hello') as { conditions: unknown }).conditions, 'Accepted'),
    ).toBe('False/InvalidPullSecret');
    expect(routesOf(missing)[0]!.filters?.plugins?.[0]?.sha256).toBe(SHA);
    const revoked = run([...base, withSecret('vault'), fetched('hello'), routeWith('r', 'hello')]);
    expect(
      sr((revoked.statuses.get('PluginInstallation/apps/hello') as { conditions: unknown }).conditions, 'Fetched'),
    ).toBe('False/RefNotPermitted');
    expect(routesOf(revoked)[0]!.directResponse).toEqual({ status: 500 });
  });

  it('the fetch request carries the pull Secret it may use, from data or (file input) stringData, and says why not', () => {
    const withPullSecret = {
      ...pi('hello'),
      spec: { image: 'registry.example.com/team/hello:v1', type: 'lua', pullSecretRef: { name: 'creds' } },
    } as KubeObject;
    const config = JSON.stringify({ auths: { 'registry.example.com': { username: 'u', password: 'p' } } });
    const secret = (values: Record<string, unknown>): KubeObject =>
      ({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds', namespace: 'apps' },
        type: 'kubernetes.io/dockerconfigjson',
        ...values,
      }) as KubeObject;
    for (const held of [
      { data: { '.dockerconfigjson': Buffer.from(config).toString('base64') } },
      { stringData: { '.dockerconfigjson': config } },
    ]) {
      const r = run([...base, routeWith('user', 'hello'), withPullSecret, secret(held)]);
      expect(
        sr((r.statuses.get('PluginInstallation/apps/hello') as { conditions: unknown }).conditions, 'Accepted'),
      ).toBe('True/Accepted');
      expect(r.pluginFetches.get('apps/hello')).toEqual({
        namespace: 'apps',
        name: 'hello',
        generation: 1,
        image: 'registry.example.com/team/hello:v1',
        type: 'lua',
        dockerConfig: config,
      });
    }
    const without = run([...base, routeWith('user', 'hello'), withPullSecret, secret({ data: {} })]).pluginFetches.get(
      'apps/hello',
    );
    expect(without?.blocked).toMatch(/spec.pullSecretRef/);
    expect(without?.dockerConfig).toBeUndefined();
  });

  it('invalid specs are not Accepted and say which field is wrong', () => {
    const bad = { ...pi('bad'), spec: { image: 'just-a-name', type: 'lua' } } as KubeObject;
    const wrongType = { ...pi('wt'), spec: { image: 'registry.example.com/x:v1', type: 'python' } } as KubeObject;
    const r = run([bad, wrongType]);
    expect(
      cond((r.statuses.get('PluginInstallation/apps/bad') as { conditions: unknown }).conditions, 'Accepted'),
    ).toMatchObject({ status: 'False', reason: 'InvalidImage' });
    expect(
      cond((r.statuses.get('PluginInstallation/apps/wt') as { conditions: unknown }).conditions, 'Accepted')!.message,
    ).toMatch(/^spec.type: "python" is not supported/);
  });
});

describe('plugin ExtensionRef on routes', () => {
  it('enables the plugin on the route that names it and on no other route', () => {
    const r = run([...base, pi('hello'), fetched('hello'), routeWith('with', 'hello'), routeWith('without')]);
    const routes = routesOf(r);
    expect(routes.find((x) => x.source.name === 'with')!.filters?.plugins).toEqual([
      { name: 'apps/hello', type: 'lua', sha256: SHA },
    ]);
    expect(routes.find((x) => x.source.name === 'without')!.filters?.plugins).toBeUndefined();
    expect(
      sr(
        (r.statuses.get('HTTPRoute/apps/with') as { parents: { conditions: unknown }[] }).parents[0]!.conditions,
        'ResolvedRefs',
      ),
    ).toBe('True/ResolvedRefs');
  });

  it('a missing or unfetched plugin: ResolvedRefs=False and the rule answers 500', () => {
    for (const [objects, reason] of [
      [[], 'PluginNotFound'],
      [[pi('hello')], 'PluginNotFetched'],
    ] as const) {
      const r = run([...base, ...objects, routeWith('with', 'hello')]);
      const c = cond(
        (r.statuses.get('HTTPRoute/apps/with') as { parents: { conditions: unknown }[] }).parents[0]!.conditions,
        'ResolvedRefs',
      )!;
      expect(`${c.status}/${c.reason}`).toBe(`False/${reason}`);
      expect(c.message).toMatch(/spec.rules\[0\].filters\[0\].extensionRef: PluginInstallation apps\/hello/);
      expect(routesOf(r)[0]!.directResponse).toEqual({ status: 500 });
    }
  });
});

describe('plugin installation through ProxyConfig', () => {
  it('installs fetched plugins: mounted in the infra IR; not Installed, nor read from the file, before the proxies run it', () => {
    const r = run([
      gatewayClass(),
      gatewayWithConfig(),
      proxyConfig([{ name: 'hello', namespace: 'apps' }, { name: 'local' }]),
      pi('hello'),
      fetched('hello'),
      pi('local', 'infra'),
      fetched('local', 'infra', { sha: SHA2 }),
      referenceGrant(
        'pc-may-use',
        'apps',
        [{ group: 'turnpike.dev', kind: 'ProxyConfig', namespace: 'infra' }],
        [{ group: 'turnpike.dev', kind: 'PluginInstallation' }],
      ),
    ]);
    const status = r.statuses.get('ProxyConfig/infra/with-plugins') as {
      plugins: { name: string; conditions: unknown }[];
    };
    expect(status.plugins.map((p) => `${p.name}:${sr(p.conditions, 'Installed')}`)).toEqual([
      'hello:False/Pending',
      'local:False/Pending',
    ]);
    const infra = r.infraIR.gateways.get('infra/gw')!;
    expect(infra.plugins.map((p) => [p.namespace, p.name, p.sha256, p.mountPath])).toEqual([
      ['apps', 'hello', SHA, `${PLUGIN_MOUNT_ROOT}/apps/hello/plugin.lua`],
      ['infra', 'local', SHA2, `${PLUGIN_MOUNT_ROOT}/infra/local/plugin.lua`],
    ]);
    // No Pod mounts them yet (no Deployment reported): the routes do not read the file (plugin-rollout.test.ts).
    expect(r.xdsIR.gateways.get('infra/gw')!.installedPlugins).toBeUndefined();
  });

  it('another namespace needs a grant; missing and unfetched plugins are not installed, each with its reason', () => {
    const r = run([
      gatewayClass(),
      gatewayWithConfig(),
      proxyConfig([{ name: 'hello', namespace: 'apps' }, { name: 'absent' }, { name: 'pending' }]),
      pi('hello'),
      fetched('hello'),
      pi('pending', 'infra'),
    ]);
    const status = r.statuses.get('ProxyConfig/infra/with-plugins') as {
      plugins: { name: string; conditions: unknown }[];
    };
    expect(status.plugins.map((p) => `${p.name}:${sr(p.conditions, 'Installed')}`)).toEqual([
      'hello:False/RefNotPermitted',
      'absent:False/PluginNotFound',
      'pending:False/PluginNotFetched',
    ]);
    expect(r.infraIR.gateways.get('infra/gw')!.plugins).toEqual([]);
  });

  it('the infra IR changes with the plugin content and with nothing else about the plugin', () => {
    const objects = (sha: string, message = 'Fetched') => {
      const f = fetched('local', 'infra', { sha });
      (f.status as Record<string, unknown>).message = message;
      return [gatewayClass(), gatewayWithConfig(), proxyConfig([{ name: 'local' }]), pi('local', 'infra'), f];
    };
    const a = run(objects(SHA)).infraIR.gateways.get('infra/gw');
    expect(run(objects(SHA, 'Fetched again after a re-resolve')).infraIR.gateways.get('infra/gw')).toEqual(a);
    expect(run(objects(SHA2)).infraIR.gateways.get('infra/gw')!.plugins[0]!.sha256).toBe(SHA2);
  });
});
