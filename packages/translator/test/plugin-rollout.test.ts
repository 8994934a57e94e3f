// Installed means the proxies run it: the proxy Deployment's rollout (an input) and the proxies'
// acknowledgement (the replicas' ProxyReports) decide it, per Gateway; a held rollout keeps the pod template and
// the digest the Pods mount. Every step is translated incrementally and checked against a fresh
// translation of the same objects.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { referencedPlugins } from '@turnpike/api';
import {
  PLUGIN_MOUNT_ROOT,
  PLUGINS_ANNOTATION,
  proxyPlacement,
  snapshotFromObjects,
  translate,
  Translator,
  type TranslateResult,
} from '../src/index.js';
import { cond, endpointSlice, gateway, gatewayClass, http, httpRoute, service, sr } from './builders.js';
import { CONNECTED_AT, proxiesSaid, replicaReport, reportedGateway } from './proxy-reports.js';

const SHA = 'a'.repeat(64);
const SHA2 = 'b'.repeat(64);
const MOUNT = `${PLUGIN_MOUNT_ROOT}/infra/hello/plugin.lua`;

const pi = (): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'PluginInstallation',
  metadata: { name: 'hello', namespace: 'infra', generation: 1 },
  spec: { image: 'registry.example.com/team/hello:v1', type: 'lua' },
});
const fetched = (sha = SHA): KubeObject => ({
  apiVersion: 'turnpike.dev/internal',
  kind: 'PluginFetch',
  metadata: { name: 'hello', namespace: 'infra' },
  status: {
    observedGeneration: 1,
    image: 'registry.example.com/team/hello:v1',
    fetched: true,
    reason: 'Fetched',
    message: 'ok',
    digest: `sha256:${sha.slice(0, 8)}`,
    sha256: sha,
    size: 10,
    storage: { configMap: 'turnpike-plugin-hello' },
  },
});
const proxyConfig = (rollout?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'ProxyConfig',
  metadata: { name: 'pc', namespace: 'infra', generation: 1 },
  spec: { plugins: [{ name: 'hello' }], ...(rollout ? { rollout } : {}) },
});
const gw = (name = 'gw') =>
  gateway(name, [http()], {
    infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } },
  });
const route = httpRoute(
  'uses',
  {
    parentRefs: [{ name: 'gw' }],
    rules: [
      {
        filters: [
          { type: 'ExtensionRef', extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'hello' } },
        ],
        backendRefs: [{ name: 'web', port: 8080 }],
      },
    ],
  },
  'infra',
);

/** The route and its backend. */
const routeObjects = [route, service('web', 'infra'), endpointSlice('web', 'infra')];

/** The proxy Deployment as the cluster reports it. */
function deployment(o: {
  mounts?: string;
  updated: number;
  available?: number;
  replicas?: number;
  image?: string;
  failed?: string;
  gateway?: string;
}): KubeObject {
  const place = proxyPlacement('infra', o.gateway ?? 'gw');
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: place.name,
      namespace: place.namespace,
      generation: 4,
      labels: {
        'app.kubernetes.io/managed-by': 'turnpike',
        'gateway.networking.k8s.io/gateway-name': o.gateway ?? 'gw',
        'turnpike.dev/gateway-namespace': 'infra',
      },
    },
    spec: {
      replicas: 2,
      template: {
        metadata: {
          labels: { app: 'proxy' },
          annotations: o.mounts ? { [PLUGINS_ANNOTATION]: JSON.stringify({ 'infra/hello': o.mounts }) } : {},
        },
        spec: { containers: [{ name: 'envoy', image: o.image ?? 'envoyproxy/envoy:distroless-v1.36.2' }] },
      },
    },
    status: {
      observedGeneration: 4,
      replicas: o.replicas ?? 2,
      updatedReplicas: o.updated,
      availableReplicas: o.available ?? o.updated,
      ...(o.failed
        ? {
            conditions: [
              { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: o.failed },
            ],
          }
        : {}),
    },
  };
}

const proxyStatus = (plugins: string[] | undefined, behind: string[] = []): KubeObject =>
  proxiesSaid('infra/gw', { sync: { connected: 2, behind, ...(plugins ? { plugins } : {}) } });

const installed = (r: TranslateResult) => {
  const s = r.statuses.get('ProxyConfig/infra/pc') as { plugins: { conditions: unknown }[] };
  return cond(s.plugins[0]!.conditions, 'Installed')!;
};
const gatewayCondition = (r: TranslateResult, type: string) =>
  cond((r.statuses.get('Gateway/infra/gw') as { conditions: unknown }).conditions, type);

/** Translates each step incrementally, checking every output against a fresh translation. */
function steps(): (objects: KubeObject[]) => TranslateResult {
  const t = new Translator();
  return (objects) => {
    const r = t.translate(snapshotFromObjects(objects));
    const fresh = translate(snapshotFromObjects(objects));
    expect(Object.fromEntries(r.statuses)).toEqual(Object.fromEntries(fresh.statuses));
    expect(Object.fromEntries(r.xdsIR.gateways)).toEqual(Object.fromEntries(fresh.xdsIR.gateways));
    expect(Object.fromEntries(r.infraIR.gateways)).toEqual(Object.fromEntries(fresh.infraIR.gateways));
    return r;
  };
}

describe('plugin rollout: Installed only once the proxies run it', () => {
  const base = [gatewayClass(), gw(), proxyConfig(), pi(), fetched(), ...routeObjects];

  it('Pending → RolloutInProgress → Pending (acknowledgement) → Installed, and the routes read the file only once every Pod has it', () => {
    const step = steps();
    let r = step(base);
    expect(installed(r)).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(installed(r).message).toContain('the proxy Deployment of Gateway infra/gw is not created yet');
    // What the Deployment's template gets, read back to tell which digest the Pods mount.
    expect(JSON.parse(r.infraIR.gateways.get('infra/gw')!.pod.annotations[PLUGINS_ANNOTATION]!)).toEqual({
      'infra/hello': SHA,
    });
    expect(r.xdsIR.gateways.get('infra/gw')!.installedPlugins).toBeUndefined();

    // The old template is still rolled out everywhere.
    r = step([...base, deployment({ updated: 2 })]);
    expect(installed(r)).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(installed(r).message).toMatch(/does not mount sha256 a{12} yet \(its Pods do not run it\)/);

    r = step([...base, deployment({ mounts: SHA, updated: 1, available: 0, replicas: 3 })]);
    expect(installed(r)).toMatchObject({ status: 'False', reason: 'RolloutInProgress' });
    expect(installed(r).message).toContain('1 of 2 replicas run sha256 aaaaaaaaaaaa, 0 available');
    expect(gatewayCondition(r, 'turnpike.dev/PluginsInstalled')).toMatchObject({
      status: 'False',
      reason: 'RolloutInProgress',
    });
    // Old Pods lack the file: routes get the content inline meanwhile.
    expect(r.xdsIR.gateways.get('infra/gw')!.installedPlugins).toBeUndefined();

    r = step([...base, deployment({ mounts: SHA, updated: 2 })]);
    expect(r.xdsIR.gateways.get('infra/gw')!.installedPlugins).toEqual([
      { name: 'infra/hello', sha256: SHA, mountPath: MOUNT },
    ]);
    expect(installed(r).message).toContain('no proxy of Gateway infra/gw is connected');

    // Connected, but the configuration they acknowledged does not run it yet.
    r = step([...base, deployment({ mounts: SHA, updated: 2 }), proxyStatus([])]);
    expect(installed(r)).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(installed(r).message).toContain('waiting for the proxies of Gateway infra/gw to acknowledge');

    r = step([...base, deployment({ mounts: SHA, updated: 2 }), proxyStatus([`infra/hello@${SHA}`])]);
    expect(installed(r)).toMatchObject({ status: 'True', reason: 'Installed' });
    expect(gatewayCondition(r, 'turnpike.dev/PluginsInstalled')).toMatchObject({
      status: 'True',
      reason: 'Installed',
      message: 'installed: infra/hello@sha256:aaaaaaaa',
    });
    expect(sr((r.statuses.get('ProxyConfig/infra/pc') as { conditions: unknown }).conditions, 'Accepted')).toBe(
      'True/Accepted',
    );
  });

  it('with proxies on two replicas, Installed waits for the proxies of both, naming the one holding its ACK', () => {
    const step = steps();
    const ran = [`infra/hello@${SHA}`];
    const rolled = [...base, deployment({ mounts: SHA, updated: 2 })];
    const leader = (plugins: string[] | undefined, behind: string[] = []) =>
      replicaReport('leader', [
        reportedGateway('infra/gw', { sync: { connected: 1, behind, ...(plugins ? { plugins } : {}) } }),
      ]);
    const follower = (plugins: string[] | undefined, behind: string[] = []) =>
      replicaReport('follower', [
        {
          ...reportedGateway('infra/gw', { sync: { connected: 1, behind, ...(plugins ? { plugins } : {}) } }),
          proxies: [{ id: 'gw-follower-1', connectedAt: CONNECTED_AT, ...(behind.length ? { behind: true } : {}) }],
        },
      ]);
    // The leader's proxy runs it; the follower's has not acknowledged the configuration that does.
    let r = step([...rolled, leader(ran), follower([], ['gw-follower-1'])]);
    expect(installed(r)).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(installed(r).message).toContain('(not yet: gw-follower-1)');
    // All proxies on the follower, all acknowledged: Installed, though none is connected to the leader.
    r = step([...rolled, follower(ran)]);
    expect(installed(r)).toMatchObject({ status: 'True', reason: 'Installed' });
    expect(gatewayCondition(r, 'turnpike.dev/ProxiesInSync')).toMatchObject({ status: 'True', reason: 'InSync' });
    // Both replicas' proxies acknowledged it.
    r = step([...rolled, leader(ran), follower(ran)]);
    expect(installed(r)).toMatchObject({ status: 'True', reason: 'Installed' });
    expect(gatewayCondition(r, 'turnpike.dev/ProxiesInSync')!.message).toContain('All 2 connected proxies');
  });

  it('a failed rollout says why, in the words of the Deployment', () => {
    const r = steps()([
      ...base,
      deployment({ mounts: SHA, updated: 1, failed: 'ReplicaSet "x" has timed out progressing.' }),
    ]);
    expect(installed(r)).toMatchObject({ status: 'False', reason: 'RolloutFailed' });
    expect(installed(r).message).toContain('ProgressDeadlineExceeded: ReplicaSet "x" has timed out progressing.');
  });

  it('a Deployment that is not ours (no labels of ours) is not read', () => {
    const foreign = deployment({ mounts: SHA, updated: 2 });
    foreign.metadata.labels = {};
    const r = steps()([...base, foreign, proxyStatus([`infra/hello@${SHA}`])]);
    expect(installed(r).message).toContain('not created yet');
  });

  it('a Gateway each: the ProxyConfig names the one that waits', () => {
    const second = httpRoute('uses2', { parentRefs: [{ name: 'gw2', namespace: 'infra' }], rules: [{}] });
    const r = steps()([
      ...base,
      gw('gw2'),
      second,
      deployment({ mounts: SHA, updated: 2 }),
      proxyStatus([`infra/hello@${SHA}`]),
      deployment({ mounts: SHA, updated: 0, gateway: 'gw2' }),
    ]);
    expect(installed(r)).toMatchObject({ status: 'False', reason: 'RolloutInProgress' });
    expect(installed(r).message).toMatch(/^installed in 1 of 2 Gateway\(s\); Deployment infra\/gw2-\w+: 0 of 2/);
  });
});

describe('plugin rollout: a hold', () => {
  it('keeps the template and the mounted digest through a plugin upgrade, names what waits, and a release applies it', () => {
    const step = steps();
    const old = deployment({ mounts: SHA, updated: 2, image: 'envoyproxy/envoy:v1.35.0' });
    const held = [
      gatewayClass(),
      gw(),
      proxyConfig({ hold: true }),
      pi(),
      route,
      old,
      proxyStatus([`infra/hello@${SHA}`]),
    ];
    let r = step([...held, fetched(SHA)]);
    expect(installed(r)).toMatchObject({ status: 'True' });
    expect(gatewayCondition(r, 'turnpike.dev/RolloutHeld')).toMatchObject({ status: 'True', reason: 'RolloutHeld' });

    // A new digest: the Pods keep the old one, and so do the routes (never content the Pods lack).
    r = step([...held, fetched(SHA2)]);
    const infra = r.infraIR.gateways.get('infra/gw')!;
    expect(infra.held?.template).toEqual((old.spec as { template: unknown }).template);
    // The old template predates the drain's grace period: releasing the hold brings it (`shutdown`).
    expect(infra.held?.pending).toEqual([
      'image',
      'pod labels',
      'pod annotations',
      'ports',
      'shutdown',
      `plugin infra/hello sha256 ${SHA.slice(0, 12)} → ${SHA2.slice(0, 12)}`,
    ]);
    const ir = r.xdsIR.gateways.get('infra/gw')!;
    expect(ir.installedPlugins).toEqual([{ name: 'infra/hello', sha256: SHA, mountPath: MOUNT, held: true }]);
    expect(referencedPlugins(ir)).toEqual([`infra/hello@${SHA}`]);
    expect(installed(r)).toMatchObject({ status: 'False', reason: 'RolloutHeld' });
    expect(installed(r).message).toContain(
      'held by ProxyConfig infra/pc spec.rollout.hold: its Pods run sha256 aaaaaaaaaaaa',
    );
    expect(gatewayCondition(r, 'turnpike.dev/RolloutHeld')!.message).toContain(
      `pending: image, pod labels, pod annotations, ports, shutdown, plugin infra/hello sha256 ${SHA.slice(0, 12)} → ${SHA2.slice(0, 12)}`,
    );
    expect(
      cond((r.statuses.get('ProxyConfig/infra/pc') as { conditions: unknown }).conditions, 'RolloutHeld'),
    ).toMatchObject({
      status: 'True',
    });

    // Released: the template is the translator's again, with the new digest.
    r = step([
      gatewayClass(),
      gw(),
      proxyConfig(),
      pi(),
      route,
      old,
      proxyStatus([`infra/hello@${SHA}`]),
      fetched(SHA2),
    ]);
    const released = r.infraIR.gateways.get('infra/gw')!;
    expect(released.held).toBeUndefined();
    expect(JSON.parse(released.pod.annotations[PLUGINS_ANNOTATION]!)).toEqual({ 'infra/hello': SHA2 });
    expect(gatewayCondition(r, 'turnpike.dev/RolloutHeld')).toBeUndefined();
    expect(installed(r)).toMatchObject({ status: 'False', reason: 'Pending' });
  });

  it('a Gateway annotation holds one Gateway; with no Deployment yet there is nothing to hold', () => {
    const annotated = gateway(
      'gw',
      [http()],
      { infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } } },
      'infra',
      { annotations: { 'turnpike.dev/rollout-hold': 'true' } },
    );
    const objects = [gatewayClass(), annotated, proxyConfig(), pi(), fetched()];
    let r = steps()(objects);
    expect(r.infraIR.gateways.get('infra/gw')!.held).toBeUndefined();
    expect(gatewayCondition(r, 'turnpike.dev/RolloutHeld')).toMatchObject({ status: 'False', reason: 'Pending' });
    r = steps()([...objects, deployment({ mounts: SHA, updated: 2 })]);
    expect(r.infraIR.gateways.get('infra/gw')!.held?.by).toBe("the Gateway's annotation turnpike.dev/rollout-hold");
  });
});

describe('plugin consumers', () => {
  it('a PluginInstallation lists the ProxyConfigs and Gateways that use it, at most 16, and counts them all', () => {
    const configs = Array.from({ length: 20 }, (_, i) => ({
      ...proxyConfig(),
      metadata: { name: `pc${String(i).padStart(2, '0')}`, namespace: 'infra', generation: 1 },
    }));
    const r = steps()([gatewayClass(), gw(), proxyConfig(), pi(), fetched(), ...configs]);
    const s = r.statuses.get('PluginInstallation/infra/hello') as { consumers: unknown[]; consumerCount: number };
    expect(s.consumerCount).toBe(22);
    expect(s.consumers).toHaveLength(16);
    expect(s.consumers[0]).toEqual({
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      namespace: 'infra',
      name: 'gw',
    });
    expect(s.consumers[1]).toEqual({ group: 'turnpike.dev', kind: 'ProxyConfig', namespace: 'infra', name: 'pc' });
  });
});
