// Two and three controller replicas against one real API server, each writing the ProxyReport of the
// proxies connected to it. Stand-in proxies (raw ADS streams that can hold their ACK or NACK) are pinned
// to chosen replicas by dialling a replica's own address. The statuses the leader writes judge every
// proxy of every replica; a replica killed with SIGKILL stops counting once its report expires, its
// proxies reconnect elsewhere, and a new leader writes from all the reports.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject, ProxyReport } from '@turnpike/api';
import { TYPE } from '@turnpike/xds';
import { Cluster, ROOT, waitFor } from '../harness/cluster.js';
import { Controller } from '../harness/controller.js';
import { FakeKubelet } from '../harness/fake-kubelet.js';
import { cond, gatewayClass, ns } from '../harness/fixtures.js';
import { proxyCredentials, XDS_SERVER_NAME, type ProxyCredentials } from '../harness/xds-credentials.js';
import { adsClient, reader, resourceText, type Stream } from '../../packages/xds/test/ads-client.js';
import { TestRegistry } from '../../packages/plugins/test/support/registry.js';

type Obj = KubeObject & { spec?: any; status?: any };
const GW = 'gateway.networking.k8s.io/v1';
const LUA = 'function envoy_on_request(h) h:headers():add("x-plugin", "v1") end\n';
/** Short, so that a killed replica's report expires within the test's patience. */
const REPORT_LEASE = '6s';

/** A stand-in proxy of Gateway edge/public: an ADS stream to one replica that ACKs, holds its ACK, or NACKs. */
class StandInProxy {
  private stream?: Stream;
  readonly node: { id: string; cluster: string };
  latest?: Record<string, any>;
  held?: Record<string, any>;
  mode: 'ack' | 'hold' | 'nack';
  closed = false;

  constructor(
    id: string,
    private readonly tls: Parameters<typeof adsClient>[1],
    mode: StandInProxy['mode'] = 'ack',
  ) {
    this.node = { id, cluster: 'edge/public' };
    this.mode = mode;
  }

  /** Opens a stream to the replica at `port` (again, after the one it used died). */
  connect(port: number): this {
    const stream: Stream = adsClient(port, this.tls).StreamAggregatedResources();
    this.stream = stream;
    const next = reader(stream);
    stream.write({ node: this.node, type_url: TYPE.listener });
    void (async () => {
      while (!this.closed && this.stream === stream) {
        const r = await next(3_600_000).catch(() => undefined);
        if (!r || this.stream !== stream) continue;
        this.latest = r;
        if (this.mode === 'ack') this.answer(r);
        else if (this.mode === 'nack') this.answer(r, 'listener refused by the test');
        else this.held = r;
      }
    })();
    return this;
  }

  private answer(r: Record<string, any>, error?: string): void {
    this.stream?.write({
      node: this.node,
      type_url: r.type_url,
      version_info: error ? 'refused' : r.version_info,
      response_nonce: r.nonce,
      ...(error ? { error_detail: { message: error } } : {}),
    });
  }

  /** ACK what was held, and everything from now on. */
  release(): void {
    this.mode = 'ack';
    if (this.held) this.answer(this.held);
    this.held = undefined;
  }

  close(): void {
    this.closed = true;
    this.stream?.end();
  }
}

describe('replicas', () => {
  let cluster: Cluster;
  let kubelet: FakeKubelet;
  let reg: TestRegistry;
  let creds: ProxyCredentials;
  const replicas = new Map<string, Controller>();
  const proxies: StandInProxy[] = [];
  const tls = () => ({ ca: creds.ca, cert: creds.cert, key: creds.key, serverName: XDS_SERVER_NAME });
  const proxy = (id: string, replica: string, mode: StandInProxy['mode'] = 'ack') => {
    const p = new StandInProxy(id, tls(), mode).connect(replicas.get(replica)!.xdsPort);
    proxies.push(p);
    return p;
  };
  const startReplica = async (name: string) => {
    const c = new Controller(cluster.controllerKubeconfig, ['--replica-name', name, '--report-lease', REPORT_LEASE]);
    replicas.set(name, c);
    await c.start();
    await c.ready();
    return c;
  };
  const leaderOf = async () => {
    for (const [name, c] of replicas) if (!c.killed && (await c.metric('turnpike_leader')) === 1) return name;
    return undefined;
  };
  const gateway: Obj = {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'public', namespace: 'edge' },
    spec: {
      gatewayClassName: 'tp',
      infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'proxy' } },
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }],
    },
  };
  const route = (marker: string): Obj => ({
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name: 'uses', namespace: 'edge' },
    spec: {
      parentRefs: [{ name: 'public' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: marker } }],
          filters: [
            {
              type: 'ExtensionRef',
              extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'hello' },
            },
          ],
        },
      ],
    },
  });
  const proxyConfig: Obj = {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'ProxyConfig',
    metadata: { name: 'proxy', namespace: 'edge' },
    spec: { service: { type: 'ClusterIP' }, plugins: [{ name: 'hello' }] },
  };
  const installed = async () =>
    cond(((await cluster.get(proxyConfig)) as Obj | undefined)?.status?.plugins?.[0]?.conditions, 'Installed');
  const inSync = async () =>
    cond(((await cluster.get(gateway)) as Obj | undefined)?.status?.conditions, 'turnpike.dev/ProxiesInSync');
  const reportOf = async (replica: string) => {
    const r = await cluster.admin.request<ProxyReport>(
      'GET',
      `/apis/turnpike.dev/v1alpha1/namespaces/turnpike-system/proxyreports/${replica}`,
    );
    return r.status === 200 ? r.body : undefined;
  };
  const lists = async (replica: string, id: string) =>
    (await reportOf(replica))?.spec.gateways.some((g) => g.proxies.some((p) => p.id === id)) ?? false;

  beforeAll(async () => {
    cluster = await Cluster.start();
    await cluster.startControllerManager();
    kubelet = new FakeKubelet(cluster.admin);
    await kubelet.start();
    reg = await TestRegistry.start();
    await reg.pushImage('team/hello', 'v1', { 'plugin.lua': LUA });
    await cluster.apply(ns('edge'));
    await cluster.apply(gatewayClass('tp'));
    // replica-a first, so that it leads; replica-b follows.
    await startReplica('replica-a');
    await waitFor('replica-a leads', async () => ((await leaderOf()) === 'replica-a' ? true : undefined), 60_000);
    await startReplica('replica-b');
    await cluster.apply({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'PluginInstallation',
      metadata: { name: 'hello', namespace: 'edge' },
      spec: { image: `${reg.host}/team/hello:v1`, type: 'lua' },
    } as KubeObject);
    await cluster.apply(proxyConfig);
    await cluster.apply(gateway);
    await cluster.apply(route('/v1'));
    creds = await proxyCredentials(cluster, 'edge', 'public');
    // The proxy Deployment rolled out (the kubelet makes its Pods Ready): only the proxies are left to wait for.
    await waitFor(
      'Installed waits for the proxies only',
      async () =>
        (await installed())?.message?.includes('no proxy of Gateway edge/public is connected') ? true : undefined,
      120_000,
    );
  }, 600_000);
  afterAll(async () => {
    for (const p of proxies) p.close();
    kubelet?.stop();
    await reg?.stop();
    for (const c of replicas.values()) await c.stop();
    await cluster?.stop();
  }, 60_000);

  it('replicas: a plugin is Installed only after the proxies on every replica ACK; one on the follower holding its ACK keeps it Pending, naming it', async () => {
    const onLeader = proxy('proxy-l', 'replica-a');
    const onFollower = proxy('proxy-f', 'replica-b', 'hold');
    await waitFor('the follower sent proxy-f the plugin', async () =>
      onFollower.held && resourceText(onFollower.held).includes('turnpike.plugin/edge/hello') ? true : undefined,
    );
    const pending = await waitFor('Installed=False naming proxy-f', async () => {
      const c = await installed();
      return c?.status === 'False' && c.message?.includes('proxy-f') ? c : undefined;
    });
    expect(pending.message).toBe(
      'installed in 0 of 1 Gateway(s); waiting for the proxies of Gateway edge/public to acknowledge the configuration ' +
        'that runs it (not yet: proxy-f)',
    );
    // The leader's own proxy acknowledged: only the follower's report holds it back.
    expect(onLeader.latest).toBeDefined();
    const behind = await waitFor('ProxiesInSync=False naming proxy-f', async () => {
      const s = await inSync();
      return s?.status === 'False' ? s : undefined;
    });
    expect(behind).toMatchObject({ reason: 'Behind' });
    expect(behind.message).toBe('1 of 2 connected proxies have not acknowledged the current configuration: proxy-f');
    onFollower.release();
    await waitFor('Installed=True', async () => ((await installed())?.status === 'True' ? true : undefined));
    expect(await inSync()).toMatchObject({
      status: 'True',
      message: 'All 2 connected proxies run the current configuration',
    });
  }, 120_000);

  it("replicas: turnpike proxy-status lists every replica's proxies with the replica, read with the viewer role", async () => {
    await cluster.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'viewer-turnpike-viewer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'turnpike-viewer' },
      subjects: [{ kind: 'User', name: 'viewer', apiGroup: 'rbac.authorization.k8s.io' }],
    } as KubeObject);
    const cli = (...args: string[]) =>
      execFileSync(
        process.execPath,
        [join(ROOT, 'packages/cli/dist/main.js'), 'proxy-status', '--kubeconfig', cluster.viewerKubeconfig, ...args],
        { encoding: 'utf8' },
      );
    const rows = await waitFor('both proxies in the reports', async () => {
      const all = JSON.parse(cli('-o', 'json', '--gateway', 'edge/public')) as Record<string, unknown>[];
      return all.length === 2 ? all : undefined;
    });
    expect(rows.map((r) => [r.replica, r.gateway, r.id, r.behind])).toEqual([
      ['replica-a', 'edge/public', 'proxy-l', false],
      ['replica-b', 'edge/public', 'proxy-f', false],
    ]);
    const text = cli();
    expect(text.split('\n')[0]).toMatch(/^REPLICA\s+GATEWAY\s+ID\s+SINCE\s+SYNC\s+REJECTED$/);
    expect(text).toMatch(/replica-b\s+edge\/public\s+proxy-f\s+\S+\s+in sync\s+-/);
  }, 60_000);

  it("replicas: ProxiesInSync=False names a follower's proxy that NACKs, and ConfigRejected says what it refused", async () => {
    const refusing = proxy('proxy-nack', 'replica-b', 'nack');
    const c = await waitFor('ProxiesInSync=False naming proxy-nack', async () => {
      const s = await inSync();
      return s?.status === 'False' && s.message?.includes('proxy-nack') ? s : undefined;
    });
    expect(c.message).toBe('1 of 3 connected proxies have not acknowledged the current configuration: proxy-nack');
    const rejected = cond(((await cluster.get(gateway)) as Obj).status.conditions, 'turnpike.dev/ConfigRejected');
    expect(rejected?.message).toMatch(/^proxy proxy-nack rejected Listener version \S+: listener refused by the test/);
    refusing.close();
    await waitFor('back in sync without it', async () =>
      (await inSync())?.message === 'All 2 connected proxies run the current configuration' ? true : undefined,
    );
  }, 120_000);

  it('replicas: with every proxy on the follower, Installed and ProxiesInSync are True', async () => {
    proxies.find((p) => p.node.id === 'proxy-l')!.close();
    const c = await waitFor('one proxy, on the follower', async () => {
      const s = await inSync();
      return s?.message === 'All 1 connected proxies run the current configuration' ? s : undefined;
    });
    expect(c.status).toBe('True');
    expect(await installed()).toMatchObject({ status: 'True', reason: 'Installed' });
    expect(await lists('replica-a', 'proxy-f')).toBe(false);
    expect(await lists('replica-b', 'proxy-f')).toBe(true);
  }, 120_000);

  it('replicas: SIGKILL the follower → its report counts as gone within the lease, its proxies reconnect to the leader and statuses converge', async () => {
    const follower = replicas.get('replica-b')!;
    const moved = proxies.find((p) => p.node.id === 'proxy-f')!;
    follower.kill();
    // Like Envoy, the proxy dials the Service again and lands on the other replica.
    moved.connect(replicas.get('replica-a')!.xdsPort);
    await waitFor('replica-a reports proxy-f', async () => ((await lists('replica-a', 'proxy-f')) ? true : undefined));
    // Named by both reports until replica-b's expires (not renewed for the lease, the leader deletes it):
    // counted once all along.
    const messages = new Set<string>();
    await waitFor(
      'replica-b report gone',
      async () => {
        messages.add((await inSync())?.message ?? 'absent');
        return (await reportOf('replica-b')) ? undefined : true;
      },
      60_000,
    );
    expect([...messages]).toEqual(['All 1 connected proxies run the current configuration']);
    expect(await installed()).toMatchObject({ status: 'True', reason: 'Installed' });
    expect(await inSync()).toMatchObject({
      status: 'True',
      message: 'All 1 connected proxies run the current configuration',
    });
  }, 120_000);

  it("replicas: SIGKILL the leader → the new leader's first status writes agree with all reports", async () => {
    await startReplica('replica-c');
    const other = proxy('proxy-g', 'replica-c');
    // Both proxies counted, and proxy-g's first ACK seen (a proxy that just connected has acknowledged nothing).
    await waitFor('two proxies, the plugin installed in both', async () =>
      (await inSync())?.message === 'All 2 connected proxies run the current configuration' &&
      (await installed())?.status === 'True'
        ? true
        : undefined,
    );
    const failover = async () => {
      const moved = proxies.find((p) => p.node.id === 'proxy-f')!;
      replicas.get('replica-a')!.kill();
      moved.connect(replicas.get('replica-c')!.xdsPort);
      // While no replica leads, what only the reports know changes: proxy-g holds its ACK of a new listener.
      other.mode = 'hold';
      await cluster.apply({
        ...gateway,
        spec: {
          ...gateway.spec,
          listeners: [...gateway.spec.listeners, { name: 'http-2', port: 8081, protocol: 'HTTP' }],
        },
      });
      await waitFor('proxy-g holds the new listener', async () =>
        other.held && resourceText(other.held).includes('8081') ? true : undefined,
      );
      return waitFor(
        'the new leader writes ProxiesInSync=False naming proxy-g',
        async () => {
          const s = await inSync();
          return s?.status === 'False' && s.message?.includes('proxy-g') ? s : undefined;
        },
        90_000,
      );
    };
    // Every state the Gateway and the plugin are seen in from the kill on.
    const seen = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const [s, i] = await Promise.all([inSync(), installed()]);
        seen.add(`${s?.status}: ${s?.message} | Installed=${i?.status}/${i?.reason}: ${i?.message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    let written: Awaited<ReturnType<typeof failover>>;
    try {
      written = await failover();
    } finally {
      watching = false;
      await watch;
    }
    expect(await leaderOf()).toBe('replica-c');
    expect(written.message).toBe('1 of 2 connected proxies have not acknowledged the current configuration: proxy-g');
    // No window of false statuses: the Gateway counted its two proxies throughout, never none, and the
    // plugin was never waiting for a proxy (the new listener's port rolls the proxy Deployment, which
    // Installed rightly reports while it lasts).
    for (const s of seen)
      expect([
        'True: All 2 connected proxies run the current configuration',
        'False: 1 of 2 connected proxies have not acknowledged the current configuration: proxy-g',
      ]).toContain(s.replace(/ \| Installed=.*/, ''));
    for (const s of seen) expect(s).toMatch(/Installed=(True\/Installed|False\/RolloutInProgress):/);
  }, 180_000);
});
