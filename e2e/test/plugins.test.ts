// Plugins end to end: a real apiserver, a real registry (docker-registry behind htpasswd), the
// controller as a process. PluginInstallation → content stored in a ConfigMap → installed into
// the proxy Deployment (mount and rollout hash) → ProxyConfig says the rollout is under way; an HTTPRoute's
// ExtensionRef enables the filter on its own xDS route and on no other.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { waitFor, xdsCheckBinary } from '../harness/cluster.js';
import { cond, gatewayClass, ns, ourParents } from '../harness/fixtures.js';
import { clusterWithController } from '../harness/setup.js';
import { pullSecret, TestRegistry } from '../../packages/plugins/test/support/registry.js';
import { proxyCredentials, xdsCheckTlsArgs } from '../harness/xds-credentials.js';
import { proxyObjectsOf } from '../harness/proxies.js';

/** A ConfigMap named by a PluginInstallation's status.storage.configMap (`namespace/name` or, beside it, `name`). */
const storagePath = (ref: string, besides: string) => {
  const [namespace, name] = ref.includes('/') ? ref.split('/') : [besides, ref];
  return `/api/v1/namespaces/${namespace}/configmaps/${name}`;
};

const LUA_V1 = 'function envoy_on_request(h) h:headers():add("x-plugin", "v1") end\n';
const LUA_V2 = 'function envoy_on_request(h) h:headers():add("x-plugin", "v2") end\n';
type Obj = KubeObject & { spec?: any; status?: any; data?: Record<string, string> };

describe('plugins in a cluster', () => {
  let reg: TestRegistry;
  const env = clusterWithController(async (c) => {
    reg = await TestRegistry.start({ basic: { username: 'plugin-puller', password: 'correct horse' } });
    await c.apply(ns('edge'));
    await c.apply(gatewayClass('tp'));
  });
  afterAll(async () => {
    await reg?.stop();
  });

  it('plugin: fetched into a ConfigMap, mounted into the proxy, Installed, enabled on one route only; new content rolls the pods', async () => {
    const { cluster, controller } = env;
    const get = async (path: string) => {
      const r = await cluster.admin.request<Obj>('GET', path);
      return r.status === 200 ? r.body : undefined;
    };
    const d1 = await reg.pushImage('team/hello', 'v1', { 'plugin.lua': LUA_V1 });
    await reg.pushImage('team/hello', 'v2', { 'plugin.lua': LUA_V2 });
    await cluster.apply(pullSecret('edge', 'puller', reg.host, 'plugin-puller', 'correct horse') as KubeObject);
    const pi: Obj = {
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'PluginInstallation',
      metadata: { name: 'hello', namespace: 'edge' },
      spec: { image: `${reg.host}/team/hello:v1`, type: 'lua', pullSecretRef: { name: 'puller' } },
    };
    const created = await cluster.apply(pi);
    // Only a plugin something uses is fetched: a ProxyConfig installing it is such a use.
    const pc: Obj = {
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ProxyConfig',
      metadata: { name: 'proxy', namespace: 'edge' },
      spec: { service: { type: 'ClusterIP' }, plugins: [{ name: 'hello' }] },
    };
    await cluster.apply(pc);

    // Fetched, with the digest, and the content stored in a ConfigMap in the controller's namespace.
    const status = await waitFor(
      'plugin Fetched',
      async () => {
        const s = ((await cluster.get(pi)) as Obj | undefined)?.status;
        return cond(s?.conditions, 'Fetched')?.status === 'True' ? s : undefined;
      },
      30_000,
    );
    expect(status.digest).toBe(d1);
    expect(status.observedGeneration).toBe(created.metadata.generation);
    expect(cond(status.conditions, 'Accepted')?.status).toBe('True');
    const stored = (await get(storagePath(status.storage.configMap, 'edge')))!;
    expect(stored.data!['plugin.lua']).toBe(LUA_V1);
    // In the controller's namespace: no owner reference (it cannot cross namespaces); it names its plugin.
    expect(stored.metadata.ownerReferences).toBeUndefined();
    expect(stored.metadata.annotations!['turnpike.dev/plugin-installation']).toBe('edge/hello');
    expect(status.storage.sha256).toBe(stored.metadata.annotations!['turnpike.dev/plugin-sha256']);

    // Installed through the Gateway's ProxyConfig: a copy next to the proxy, mounted.
    await cluster.apply({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'public', namespace: 'edge' },
      spec: {
        gatewayClassName: 'tp',
        infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'proxy' } },
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }],
      },
    });
    // No controller-manager runs in this suite: the Deployment never rolls out, so the plugin is not
    // Installed, and says so (the states through to Installed: plugin-rollout.test.ts).
    const installed = await waitFor(
      'ProxyConfig Installed=False RolloutInProgress',
      async () => {
        const p = ((await cluster.get(pc)) as Obj | undefined)?.status?.plugins?.[0];
        return cond(p?.conditions, 'Installed')?.reason === 'RolloutInProgress' ? p : undefined;
      },
      30_000,
    );
    expect(installed).toMatchObject({ name: 'hello', namespace: 'edge' });
    expect(cond(installed.conditions, 'Installed')?.message).toMatch(/0 of 1 replicas run sha256 \w{12}/);
    const proxies = proxyObjectsOf('edge', 'public');
    const deployment = async () => get(`/apis/apps/v1/namespaces/${proxies.namespace}/deployments/${proxies.name}`);
    const dep1 = await waitFor('Deployment with the plugin', async () => {
      const d = await deployment();
      return d?.spec.template.spec.volumes.some((v: any) => v.name.startsWith('plugin-')) ? d : undefined;
    });
    const vol = dep1.spec.template.spec.volumes.find((v: any) => v.name.startsWith('plugin-'));
    const mount = dep1.spec.template.spec.containers[0].volumeMounts.find((m: any) => m.name === vol.name);
    expect(mount.mountPath).toBe('/etc/turnpike/plugins/edge/hello');
    const copy = (await get(`/api/v1/namespaces/${proxies.namespace}/configmaps/${vol.configMap.name}`))!;
    expect(copy.data!['plugin.lua']).toBe(LUA_V1);
    const hash1 = dep1.spec.template.metadata.annotations['turnpike.dev/config-hash'];

    // One route names the plugin, one does not.
    await cluster.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'edge' },
      spec: { ports: [{ name: 'http', port: 8080 }] },
    });
    await cluster.apply({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-1', namespace: 'edge', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080 }],
      endpoints: [{ addresses: ['10.1.2.3'], conditions: { ready: true } }],
    } as KubeObject);
    const route = (name: string, withPlugin: boolean): Obj => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name, namespace: 'edge' },
      spec: {
        parentRefs: [{ name: 'public' }],
        hostnames: [`${name}.example.com`],
        rules: [
          {
            ...(withPlugin
              ? {
                  filters: [
                    {
                      type: 'ExtensionRef',
                      extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'hello' },
                    },
                  ],
                }
              : {}),
            backendRefs: [{ name: 'web', port: 8080 }],
          },
        ],
      },
    });
    const routes = [route('with', true), route('without', false)];
    for (const r of routes) await cluster.apply(r);
    for (const r of routes) {
      await waitFor(`${r.metadata.name} resolved`, async () =>
        cond(ourParents(await cluster.get(r))[0]?.conditions, 'ResolvedRefs')?.status === 'True' ? true : undefined,
      );
    }
    const tlsArgs = xdsCheckTlsArgs(await proxyCredentials(cluster, 'edge', 'public'));
    const report = await waitFor('xDS with the plugin filter', async () => {
      const out = execFileSync(
        xdsCheckBinary(),
        ['-address', `127.0.0.1:${controller.xdsPort}`, '-node', 'edge/public', ...tlsArgs],
        { encoding: 'utf8' },
      );
      const rep = JSON.parse(out) as {
        errors: string[];
        httpFilters: Record<string, string[]>;
        routeFilters: Record<string, string[]>;
      };
      return rep.routeFilters['httproute/edge/with/rule/0/match/0'] ? rep : undefined;
    });
    expect(report.errors).toEqual([]);
    expect(report.httpFilters['tcp-80']).toEqual(['turnpike.plugin/edge/hello', 'envoy.filters.http.router']);
    expect(report.routeFilters['httproute/edge/with/rule/0/match/0']).toEqual(['turnpike.plugin/edge/hello']);
    expect(report.routeFilters['httproute/edge/without/rule/0/match/0']).toEqual([]);

    // New content (the spec moves to v2): stored, copied, and the pods roll; nothing else moves.
    await cluster.apply({ ...pi, spec: { ...pi.spec, image: `${reg.host}/team/hello:v2` } });
    const dep2 = await waitFor(
      'Deployment rolled',
      async () => {
        const d = await deployment();
        return d && d.spec.template.metadata.annotations['turnpike.dev/config-hash'] !== hash1 ? d : undefined;
      },
      30_000,
    );
    const vol2 = dep2.spec.template.spec.volumes.find((v: any) => v.name.startsWith('plugin-'));
    expect(
      (await get(`/api/v1/namespaces/${proxies.namespace}/configmaps/${vol2.configMap.name}`))!.data!['plugin.lua'],
    ).toBe(LUA_V2);
    expect((await get(storagePath(status.storage.configMap, 'edge')))!.data!['plugin.lua']).toBe(LUA_V2);
    expect(await controller.metric('turnpike_plugin_fetches_total', 'result="Fetched"')).toBeGreaterThanOrEqual(2);

    // A restart while the registry is down: the stored content is served, nothing rolls.
    const hash2 = dep2.spec.template.metadata.annotations['turnpike.dev/config-hash'];
    await reg.down();
    await controller.stop();
    await controller.start();
    await controller.ready();
    const after = await waitFor(
      'stored content served after restart',
      async () => {
        const s = ((await cluster.get(pi)) as Obj | undefined)?.status;
        const f = cond(s?.conditions, 'Fetched');
        return f?.status === 'True' && /stored before/.test(f.message ?? '') ? s : undefined;
      },
      30_000,
    );
    expect(after.storage.sha256).toBe(createHash('sha256').update(LUA_V2).digest('hex'));
    await new Promise((r) => setTimeout(r, 2000));
    expect((await deployment())!.spec.template.metadata.annotations['turnpike.dev/config-hash']).toBe(hash2);
    const rep = JSON.parse(
      execFileSync(
        xdsCheckBinary(),
        ['-address', `127.0.0.1:${controller.xdsPort}`, '-node', 'edge/public', ...tlsArgs],
        { encoding: 'utf8' },
      ),
    ) as { routeFilters: Record<string, string[]> };
    expect(rep.routeFilters['httproute/edge/with/rule/0/match/0']).toEqual(['turnpike.plugin/edge/hello']);
    await reg.up();

    // The PluginInstallation goes: its stored content goes too (no owner reference reaches across namespaces).
    expect(status.storage.configMap).toMatch(/^turnpike-system\//);
    await cluster.delete(pi);
    await waitFor('storage ConfigMap deleted', async () =>
      (await get(storagePath(status.storage.configMap, 'edge'))) === undefined ? true : undefined,
    );
  }, 300_000);
});
