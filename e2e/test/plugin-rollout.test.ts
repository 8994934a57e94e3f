// Plugin rollout against a real API server: kube-controller-manager rolls the proxy Deployment, the
// fake kubelet decides when its Pods are Ready, and a raw ADS client stands in for the proxy so that
// it can hold its ACK back. Installed follows the rollout and the ACK; a failed rollout says why; a
// hold keeps the Deployment's template as it is through a plugin upgrade and a release rolls it once.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { TYPE } from '@turnpike/xds';
import { Cluster, waitFor } from '../harness/cluster.js';
import { Controller } from '../harness/controller.js';
import { FakeKubelet, type Pod } from '../harness/fake-kubelet.js';
import { cond, gatewayClass, ns } from '../harness/fixtures.js';
import { proxyObjectsOf } from '../harness/proxies.js';
import { proxyCredentials, XDS_SERVER_NAME } from '../harness/xds-credentials.js';
import { adsClient, reader, resourceText, type Stream } from '../../packages/xds/test/ads-client.js';
import { TestRegistry } from '../../packages/plugins/test/support/registry.js';

type Obj = KubeObject & { spec?: any; status?: any };
const LUA_V1 = 'function envoy_on_request(h) h:headers():add("x-plugin", "v1") end\n';
const LUA_V2 = 'function envoy_on_request(h) h:headers():add("x-plugin", "v2") end\n';
const GW = 'gateway.networking.k8s.io/v1';

/** A stand-in proxy: an ADS stream that ACKs every response, unless told to hold its ACKs. */
class StandInProxy {
  private readonly stream: Stream;
  private readonly node: { id: string; cluster: string };
  latest?: Record<string, any>;
  held?: Record<string, any>;
  holding = true;
  closed = false;

  constructor(port: number, tls: Parameters<typeof adsClient>[1], gateway: string) {
    this.node = { id: `proxy-of-${gateway}`, cluster: gateway };
    this.stream = adsClient(port, tls).StreamAggregatedResources();
    const next = reader(this.stream);
    this.stream.write({ node: this.node, type_url: TYPE.listener });
    void (async () => {
      while (!this.closed) {
        const r = await next(3_600_000).catch(() => undefined);
        if (!r) continue;
        this.latest = r;
        if (this.holding) this.held = r;
        else this.ack(r);
      }
    })();
  }

  /** The types it acknowledged a response of: with its listeners, an Envoy's init is done (LIVE). */
  readonly acked = new Set<string>();
  private ack(r: Record<string, any>): void {
    this.stream.write({ node: this.node, type_url: r.type_url, version_info: r.version_info, response_nonce: r.nonce });
    this.acked.add(r.type_url);
  }
  get live(): boolean {
    return this.acked.has(TYPE.listener);
  }

  /** ACK what was held, and everything from now on. */
  release(): void {
    this.holding = false;
    if (this.held) this.ack(this.held);
    this.held = undefined;
  }

  close(): void {
    this.closed = true;
    this.stream.end();
  }
}

describe('plugin rollout', () => {
  let cluster: Cluster;
  let controller: Controller;
  let kubelet: FakeKubelet;
  let reg: TestRegistry;
  let proxy: StandInProxy | undefined;
  const pi: Obj = {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'PluginInstallation',
    metadata: { name: 'hello', namespace: 'edge' },
    spec: { image: '', type: 'lua' },
  };
  const proxyConfig = (name: string, rollout?: Record<string, unknown>): Obj => ({
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'ProxyConfig',
    metadata: { name, namespace: 'edge' },
    spec: { service: { type: 'ClusterIP' }, plugins: [{ name: 'hello' }], ...(rollout ? { rollout } : {}) },
  });
  const gateway = (name: string, config: string): Obj => ({
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name, namespace: 'edge' },
    spec: {
      gatewayClassName: 'tp',
      infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: config } },
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }],
    },
  });
  const installedOf = async (config: string) => {
    const s = (await cluster.get(proxyConfig(config)))?.status as any;
    return cond(s?.plugins?.[0]?.conditions, 'Installed');
  };
  const gatewayCondition = async (name: string, type: string) =>
    cond(((await cluster.get(gateway(name, ''))) as Obj | undefined)?.status?.conditions, type);
  const deploymentOf = async (gw: string) => {
    const at = proxyObjectsOf('edge', gw);
    const r = await cluster.admin.request<Obj>(
      'GET',
      `/apis/apps/v1/namespaces/${at.namespace}/deployments/${at.name}`,
    );
    return r.status === 200 ? r.body : undefined;
  };
  const ofGateway = (gw: string) => (p: Pod) => p.metadata.labels?.['gateway.networking.k8s.io/gateway-name'] === gw;

  beforeAll(async () => {
    cluster = await Cluster.start();
    await cluster.startControllerManager();
    kubelet = new FakeKubelet(cluster.admin);
    await kubelet.start();
    reg = await TestRegistry.start();
    await reg.pushImage('team/hello', 'v1', { 'plugin.lua': LUA_V1 });
    await reg.pushImage('team/hello', 'v2', { 'plugin.lua': LUA_V2 });
    pi.spec.image = `${reg.host}/team/hello:v1`;
    await cluster.apply(ns('edge'));
    await cluster.apply(gatewayClass('tp'));
    controller = new Controller(cluster.controllerKubeconfig);
    await controller.start();
    await controller.ready();
    // Only a plugin something uses is fetched: the ProxyConfig the first test's Gateway uses installs it.
    await cluster.apply(proxyConfig('proxy'));
    await cluster.apply(pi);
    await waitFor(
      'plugin Fetched',
      async () =>
        cond(((await cluster.get(pi)) as Obj | undefined)?.status?.conditions, 'Fetched')?.status === 'True'
          ? true
          : undefined,
      60_000,
    );
  }, 600_000);
  afterAll(async () => {
    proxy?.close();
    kubelet?.stop();
    await reg?.stop();
    await controller?.stop();
    await cluster?.stop();
  }, 30_000);

  it('plugin rollout: Installed moves Pending → RolloutInProgress → True only after the new revision is available and the proxy ACKed', async () => {
    // The proxies of this Gateway start but do not become Ready until the test says so.
    kubelet.unready = ofGateway('public');
    await cluster.apply(proxyConfig('proxy'));
    await cluster.apply(gateway('public', 'proxy'));
    await cluster.apply({
      apiVersion: GW,
      kind: 'HTTPRoute',
      metadata: { name: 'uses', namespace: 'edge' },
      spec: {
        parentRefs: [{ name: 'public' }],
        rules: [
          {
            filters: [
              {
                type: 'ExtensionRef',
                extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'hello' },
              },
            ],
          },
        ],
      },
    } as KubeObject);
    const seen: string[] = [];
    const note = (c: { status: string; reason: string } | undefined) => {
      const r = c ? `${c.status}/${c.reason}` : 'none';
      if (seen.at(-1) !== r) seen.push(r);
    };
    const inProgress = await waitFor(
      'Installed=False RolloutInProgress',
      async () => {
        const c = await installedOf('proxy');
        note(c);
        // Once kube-controller-manager made the new Pod (which the kubelet keeps from being Ready).
        return c?.reason === 'RolloutInProgress' && c.message?.includes('1 of 1') ? c : undefined;
      },
      60_000,
    );
    expect(inProgress.status).toBe('False');
    expect(inProgress.message).toMatch(
      /Deployment turnpike-system\/edge-public-\w+: 1 of 1 replicas run sha256 \w{12}, 0 available/,
    );
    const dep = (await deploymentOf('public'))!;
    expect(JSON.parse(dep.spec.template.metadata.annotations['turnpike.dev/plugins'])).toEqual({
      'edge/hello': expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect((await gatewayCondition('public', 'turnpike.dev/PluginsInstalled'))?.reason).toBe('RolloutInProgress');

    // The Pods become Ready: the rollout completes, but no proxy acknowledged anything yet.
    kubelet.unready = () => false;
    const waiting = await waitFor(
      'Installed=False Pending, no proxy connected',
      async () => {
        const c = await installedOf('proxy');
        note(c);
        return c?.reason === 'Pending' && c.message?.includes('no proxy of Gateway edge/public is connected')
          ? c
          : undefined;
      },
      60_000,
    );
    expect(waiting.status).toBe('False');

    // A proxy connects and receives the configuration, holding its ACK back.
    const creds = await proxyCredentials(cluster, 'edge', 'public');
    proxy = new StandInProxy(
      controller.xdsPort,
      { ca: creds.ca, cert: creds.cert, key: creds.key, serverName: XDS_SERVER_NAME },
      'edge/public',
    );
    await waitFor('the listener with the plugin filter', async () =>
      proxy!.held && resourceText(proxy!.held).includes('turnpike.plugin/edge/hello') ? true : undefined,
    );
    await waitFor('Installed=False waiting for the ACK', async () => {
      const c = await installedOf('proxy');
      note(c);
      return c?.message?.includes('waiting for the proxies of Gateway edge/public to acknowledge') ? c : undefined;
    });
    proxy.release();
    const installed = await waitFor('Installed=True', async () => {
      const c = await installedOf('proxy');
      note(c);
      return c?.status === 'True' ? c : undefined;
    });
    expect(installed.reason).toBe('Installed');
    // Never True before the kubelet made the new revision available and the proxy ACKed.
    expect(seen.indexOf('True/Installed')).toBe(seen.length - 1);
    expect(seen.filter((s) => s === 'True/Installed')).toHaveLength(1);
    expect(seen).toContain('False/RolloutInProgress');
    const digest = ((await cluster.get(pi))?.status as { digest: string }).digest;
    expect((await gatewayCondition('public', 'turnpike.dev/PluginsInstalled'))?.message).toBe(
      `installed: edge/hello@${digest}`,
    );
    // The blast radius of an upgrade, on the PluginInstallation.
    const piStatus = (await waitFor('consumers listed', async () => {
      const s = (await cluster.get(pi))?.status as { consumerCount?: number } | undefined;
      return s?.consumerCount === 2 ? s : undefined;
    })) as { consumers: unknown[] };
    expect(piStatus.consumers).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'edge', name: 'public' },
      { group: 'turnpike.dev', kind: 'ProxyConfig', namespace: 'edge', name: 'proxy' },
    ]);
  }, 300_000);

  it("plugin rollout: a failed rollout says why, in the Deployment's words", async () => {
    kubelet.unready = ofGateway('slow');
    await cluster.apply(proxyConfig('slow', { progressDeadlineSeconds: 2 }));
    await cluster.apply(gateway('slow', 'slow'));
    const failed = await waitFor(
      'Installed=False RolloutFailed',
      async () => {
        const c = await installedOf('slow');
        return c?.reason === 'RolloutFailed' ? c : undefined;
      },
      120_000,
    );
    expect(failed.message).toMatch(
      /^installed in 0 of 1 Gateway\(s\); Deployment turnpike-system\/edge-slow-\w+: ProgressDeadlineExceeded: /,
    );
    expect((await deploymentOf('slow'))!.spec.progressDeadlineSeconds).toBe(2);
    kubelet.unready = () => false;
  }, 180_000);

  it('plugin rollout: a hold keeps the template byte-identical through a plugin upgrade, says what waits, and a release rolls it out once', async () => {
    await cluster.apply(proxyConfig('proxy', { hold: true }));
    const heldNothing = await waitFor('RolloutHeld=True', async () => {
      const c = await gatewayCondition('public', 'turnpike.dev/RolloutHeld');
      return c?.status === 'True' ? c : undefined;
    });
    expect(heldNothing.message).toContain('no change pending');
    const before = (await deploymentOf('public'))!;
    const template = JSON.stringify(before.spec.template);

    // The plugin moves to v2: fetched, but the Pods keep v1 and so do the routes.
    await cluster.apply({ ...pi, spec: { ...pi.spec, image: `${reg.host}/team/hello:v2` } });
    const held = await waitFor(
      'RolloutHeld names the plugin',
      async () => {
        const c = await gatewayCondition('public', 'turnpike.dev/RolloutHeld');
        return c?.message?.includes('plugin edge/hello sha256') ? c : undefined;
      },
      60_000,
    );
    expect(held.message).toMatch(/pending: plugin edge\/hello sha256 \w{12} → \w{12}$/);
    const installed = await waitFor('Installed=False RolloutHeld', async () => {
      const c = await installedOf('proxy');
      return c?.reason === 'RolloutHeld' ? c : undefined;
    });
    expect(installed.message).toContain('held by ProxyConfig edge/proxy spec.rollout.hold');
    await new Promise((r) => setTimeout(r, 1500));
    const during = (await deploymentOf('public'))!;
    expect(JSON.stringify(during.spec.template)).toBe(template);
    expect(during.metadata.generation).toBe(before.metadata.generation);
    // The proxy still runs the mounted v1 file: the v2 code is nowhere in what it was sent.
    expect(resourceText(proxy!.latest!)).toContain('/etc/turnpike/plugins/edge/hello/plugin.lua');
    expect(resourceText(proxy!.latest!)).not.toContain('"v2"');

    // Released: one rollout, to v2.
    await cluster.apply(proxyConfig('proxy'));
    const after = await waitFor(
      'Installed=True with v2',
      async () => {
        const c = await installedOf('proxy');
        const d = await deploymentOf('public');
        return c?.status === 'True' && d && JSON.stringify(d.spec.template) !== template ? d : undefined;
      },
      120_000,
    );
    expect(after.metadata.generation).toBe(before.metadata.generation! + 1);
    expect(await gatewayCondition('public', 'turnpike.dev/RolloutHeld')).toBeUndefined();
  }, 300_000);

  it('a proxy Pod is Ready only once its Envoy has its configuration (/ready), and Installed waits for that', async () => {
    // The kubelet asks each Pod's Envoy /ready, which answers 200 once the proxy acknowledged its listeners.
    // Filled once the proxy connects below; until then the Gateway's Pods are not live.
    const connected: { proxy?: StandInProxy } = {};
    kubelet.envoyLive = (pod) => !ofGateway('readied')(pod) || !!connected.proxy?.live;
    await cluster.apply(proxyConfig('readied'));
    await cluster.apply(gateway('readied', 'readied'));
    const pods = async () =>
      (
        await cluster.admin.must<{ items: (Pod & { status?: any })[] }>(
          'GET',
          `/api/v1/namespaces/turnpike-system/pods?labelSelector=${encodeURIComponent('gateway.networking.k8s.io/gateway-name=readied')}`,
        )
      ).items;
    // Running, but not Ready: no Envoy of it has a configuration yet.
    const running = await waitFor(
      'a running, unready Pod',
      async () => {
        const list = await pods();
        return list.length && list.every((p) => p.status?.phase === 'Running') ? list : undefined;
      },
      60_000,
    );
    expect(running.map((p) => cond(p.status?.conditions, 'Ready')?.status)).toEqual(['False']);
    const unavailable = await waitFor('Installed=False RolloutInProgress, 0 available', async () => {
      const c = await installedOf('readied');
      return c?.reason === 'RolloutInProgress' && c.message?.includes('0 available') ? c : undefined;
    });
    expect(unavailable.status).toBe('False');
    expect((await deploymentOf('readied'))!.status?.availableReplicas ?? 0).toBe(0);

    // Its Envoy connects and acknowledges: /ready answers 200, the Pod becomes Ready, Installed follows.
    const creds = await proxyCredentials(cluster, 'edge', 'readied');
    const standIn = (connected.proxy = new StandInProxy(
      controller.xdsPort,
      { ca: creds.ca, cert: creds.cert, key: creds.key, serverName: XDS_SERVER_NAME },
      'edge/readied',
    ));
    standIn.release();
    try {
      const installed = await waitFor(
        'Installed=True',
        async () => {
          const c = await installedOf('readied');
          return c?.status === 'True' ? c : undefined;
        },
        60_000,
      );
      expect(installed.reason).toBe('Installed');
      expect(standIn.live).toBe(true);
      expect((await pods()).map((p) => cond(p.status?.conditions, 'Ready')?.status)).toEqual(['True']);
      expect((await deploymentOf('readied'))!.status?.availableReplicas).toBe(1);
    } finally {
      standIn.close();
      kubelet.envoyLive = () => true;
    }
  }, 300_000);
});
