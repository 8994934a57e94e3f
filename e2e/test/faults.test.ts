// Faults: the API server restarts under the controller; two replicas elect one writer; the
// leader dies and the other takes over.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, waitFor } from '../harness/cluster.js';
import { Controller } from '../harness/controller.js';
import { cond, gateway, gatewayClass, httpRoute, ns, ourParents, service } from '../harness/fixtures.js';

describe('faults', () => {
  let cluster: Cluster;
  const controllers: Controller[] = [];
  beforeAll(async () => {
    cluster = await Cluster.start();
    for (const n of ['infra', 'apps']) await cluster.apply(ns(n));
    await cluster.apply(gatewayClass('tp'));
    await cluster.apply(gateway('infra', 'gw', 'tp'));
    await cluster.apply(service('apps', 'web'));
  }, 240_000);
  afterAll(async () => {
    for (const c of controllers) await c.stop();
    await cluster?.stop();
  }, 30_000);

  const resolved = async (name: string) =>
    cond(ourParents(await cluster.get(httpRoute('apps', name, [], [])))[0]?.conditions, 'ResolvedRefs')?.status;

  it('two replicas: exactly one writes; killing it hands over within 20 s', async () => {
    const a = new Controller(cluster.controllerKubeconfig);
    const b = new Controller(cluster.controllerKubeconfig);
    controllers.push(a, b);
    await a.start();
    await b.start();
    await Promise.all([a.ready(), b.ready()]);
    await waitFor(
      'a leader',
      async () => ((await a.metric('turnpike_leader')) + (await b.metric('turnpike_leader')) === 1 ? true : undefined),
      30_000,
    );
    await cluster.apply(httpRoute('apps', 'one', [{ name: 'gw', namespace: 'infra' }], [{ name: 'web', port: 8080 }]));
    await waitFor('status of route one', async () => ((await resolved('one')) === 'True' ? true : undefined));
    await new Promise((r) => setTimeout(r, 1000));
    const writes = [await a.metric('turnpike_status_writes_total'), await b.metric('turnpike_status_writes_total')];
    const leader = (await a.metric('turnpike_leader')) === 1 ? a : b;
    const follower = leader === a ? b : a;
    expect(writes.filter((w) => w > 0)).toHaveLength(1);
    expect(await follower.metric('turnpike_status_writes_total')).toBe(0);

    leader.kill();
    const t0 = Date.now();
    await cluster.apply(
      httpRoute('apps', 'two', [{ name: 'gw', namespace: 'infra' }], [{ name: 'missing', port: 8080 }]),
    );
    await waitFor(
      'status of route two from the new leader',
      async () => ((await resolved('two')) === 'False' ? true : undefined),
      30_000,
      250,
    );
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(await follower.metric('turnpike_leader')).toBe(1);
  }, 120_000);

  it('etcd compacted while the controller could not watch: 410 → relist, and the change made meanwhile is not lost', async () => {
    const c = controllers.find((x) => !x.killed) ?? controllers[controllers.length - 1]!;
    const logBefore = c.out.length;
    c.pause();
    try {
      await cluster.restartApiserver(500); // every watch is cut while the controller sleeps
      await cluster.apply(
        httpRoute('apps', 'during-outage', [{ name: 'gw', namespace: 'infra' }], [{ name: 'web', port: 8080 }]),
      );
      await cluster.compactEtcd();
    } finally {
      c.resume();
    }
    await waitFor(
      'status of the route created meanwhile',
      async () => ((await resolved('during-outage')) === 'True' ? true : undefined),
      60_000,
      250,
    );
    expect(c.out.slice(logBefore)).toMatch(/410 Gone\): relisting/);
  }, 120_000);

  it('kube-apiserver killed and restarted: the controller recovers and converges', async () => {
    await cluster.restartApiserver(2000);
    await cluster.apply(
      httpRoute('apps', 'after-restart', [{ name: 'gw', namespace: 'infra' }], [{ name: 'web', port: 8080 }]),
    );
    await waitFor(
      'status after the restart',
      async () => ((await resolved('after-restart')) === 'True' ? true : undefined),
      60_000,
      250,
    );
    expect(await resolved('after-restart')).toBe('True');
  }, 120_000);
});
