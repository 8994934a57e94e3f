// The flight recorder in a cluster: the controller records (as deploy/ runs it, into a directory of
// its own), a user bound only to the ClusterRole turnpike-debugger (deploy/debugger-rbac.yaml) takes a
// capture through the real API server's port-forward to the controller's loopback debug endpoint while
// the controller goes on, and the capture's console shows the moment a route broke. Without the role,
// one line names it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { objectKey, type KubeObject } from '@turnpike/api';
import { readEventLog, segmentFiles } from '@turnpike/engine';
import { ConsoleData } from '../../packages/cli/src/console/console-data.js';
import { Cluster, loadYaml, ROOT, waitFor } from '../harness/cluster.js';
import { Controller } from '../harness/controller.js';
import { FakeKubelet } from '../harness/fake-kubelet.js';
import { cond, gateway, gatewayClass, httpRoute, ns, service } from '../harness/fixtures.js';

type Obj = KubeObject & { status?: any };

const NS = 'turnpike-system';
const REPLICA = 'turnpike-7d9f-abcde';
const route = httpRoute('shop', 'cart', [{ name: 'web', namespace: 'shop' }], [{ name: 'cart', port: 8080 }]);
const ROUTE_KEY = objectKey('HTTPRoute', 'shop', 'cart');

function cli(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'packages/cli/dist/main.js'), ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const resolvedRefs = async (c: Cluster): Promise<string | undefined> => {
  const r = (await c.get(route)) as Obj | undefined;
  return cond(r?.status?.parents?.[0]?.conditions, 'ResolvedRefs')?.status;
};

/**
 * The recorder's flags as deploy/controller.yaml runs the controller (its directory replaced by one
 * of the test's), after checking that the Deployment mounts a size-limited emptyDir there.
 */
function deployedRecorderFlags(dir: string): string[] {
  const deployment = loadYaml(join(ROOT, 'deploy/controller.yaml')).find((o) => o.kind === 'Deployment') as Obj & {
    spec: { template: { spec: { containers: any[]; volumes?: any[] } } };
  };
  const container = deployment.spec.template.spec.containers[0];
  const args: string[] = container.args;
  const mountPath = args[args.indexOf('--record-dir') + 1];
  const mount = container.volumeMounts?.find((m: { mountPath: string }) => m.mountPath === mountPath);
  const volume = deployment.spec.template.spec.volumes?.find((v: { name: string }) => v.name === mount?.name);
  if (!mountPath || !volume?.emptyDir?.sizeLimit)
    throw new Error('deploy/controller.yaml does not record into a sized emptyDir');
  const flags: string[] = [];
  args.forEach((a, i) => {
    if (a.startsWith('--record-')) flags.push(a, a === '--record-dir' ? dir : args[i + 1]!);
  });
  return flags;
}

describe('flight recorder', () => {
  let cluster: Cluster;
  let kubelet: FakeKubelet;
  let controller: Controller;
  const recordDir = mkdtempSync(join(tmpdir(), 'tp-e2e-recorder-'));

  beforeAll(async () => {
    cluster = await Cluster.start();
    kubelet = new FakeKubelet(cluster.admin);
    await kubelet.start();
    // The controller's Pod, as the Deployment would make it: capture finds it by the leader Lease's holder.
    await cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: REPLICA, namespace: NS, labels: { 'app.kubernetes.io/name': 'turnpike' } },
      // As restricted as deploy/controller.yaml's: the namespace enforces the restricted Pod Security profile.
      spec: {
        securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          {
            name: 'turnpike',
            image: 'turnpike:e2e',
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      },
    } as KubeObject);
    await cluster.apply(ns('shop'));
    await cluster.apply(gatewayClass('tp'));
    await cluster.apply(gateway('shop', 'web', 'tp'));
    await cluster.apply(service('shop', 'cart'));
    await cluster.apply(route);
    // As deploy/ runs it, with small segments so that a few minutes make several.
    controller = new Controller(cluster.controllerKubeconfig, [
      ...deployedRecorderFlags(recordDir),
      '--replica-name',
      REPLICA,
      '--record-segment-bytes',
      '20k',
    ]);
    await controller.start();
    await controller.ready();
    await waitFor('route resolved', async () => ((await resolvedRefs(cluster)) === 'True' ? true : undefined));
  }, 600_000);

  afterAll(async () => {
    await controller?.stop();
    kubelet?.stop();
    await cluster?.stop();
  }, 60_000);

  it('flight recorder: the controller records as deploy/ runs it (segments with checkpoints in its emptyDir)', () => {
    const files = segmentFiles(recordDir);
    expect(files.length).toBeGreaterThan(0);
    const log = readEventLog(recordDir);
    expect(log.header.version).toBe(2);
    expect(log.events.some((e) => e.kind === 'HTTPRoute' && e.name === 'cart')).toBe(true);
  });

  it('flight recorder: a user bound only to turnpike-debugger captures the recording while the controller runs; its console shows the moment the route broke', async () => {
    // The route breaks: its Service is deleted.
    await cluster.delete(service('shop', 'cart'));
    await waitFor('route broken', async () => ((await resolvedRefs(cluster)) === 'False' ? true : undefined));

    const debuggerConfig = await cluster.serviceAccountKubeconfig(NS, 'debugger');
    await cluster.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'debugger-turnpike-debugger', namespace: NS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'turnpike-debugger' },
      subjects: [{ kind: 'ServiceAccount', name: 'debugger', namespace: NS }],
    } as KubeObject);
    const out = join(mkdtempSync(join(tmpdir(), 'tp-e2e-capture-')), 'incident.tpk');
    const capture = () =>
      cli(
        'capture',
        '--kubeconfig',
        debuggerConfig,
        '--since',
        '30m',
        '-o',
        out,
        '--port',
        String(controller.debugPort),
      );
    // The RoleBinding takes effect as the API server's authorizer sees it.
    const r = await waitFor('capture allowed', async () => {
      const attempt = capture();
      return attempt.code === 0 ? attempt : undefined;
    });
    expect(r.stderr).toContain(`captured ${NS}/${REPLICA} into ${out}`);

    const log = readEventLog(out);
    expect(log.header.version).toBe(2);
    const deleted = log.events.find((e) => e.type === 'delete' && e.kind === 'Service' && e.name === 'cart');
    expect(deleted).toBeDefined();
    // The console over the capture: the route's conditions over time, the break at the delete.
    const data = new ConsoleData(() => log);
    const history = await data.history(ROUTE_KEY);
    const broke = history.changes.find((c) => c.after.some((a) => a.includes('ResolvedRefs=False/BackendNotFound')));
    expect(broke).toBeDefined();
    expect(broke!.seq).toBeGreaterThanOrEqual(deleted!.seq);
    expect(broke!.event).toMatch(/delete Service shop\/cart|HTTPRoute/);
    // The same capture verifies: every translation it holds replays to the hash recorded.
    const verify = cli('replay', out, '--verify');
    expect(verify.stderr).toMatch(/verified [1-9]\d* output\(s\).*identical/);
    expect(verify.code).toBe(0);

    // The controller went on: the Service back, the route resolved again, and recorded after the capture.
    await cluster.apply(service('shop', 'cart'));
    await waitFor('route resolved again', async () => ((await resolvedRefs(cluster)) === 'True' ? true : undefined));
    const later = readEventLog(recordDir);
    expect(later.events.at(-1)!.seq).toBeGreaterThan(log.events.at(-1)!.seq);
  });

  it('flight recorder: without the debugger role, capture says which role to bind', async () => {
    const nobody = await cluster.serviceAccountKubeconfig(NS, 'nobody');
    const r = cli('capture', '--kubeconfig', nobody, '--port', String(controller.debugPort));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/turnpike-debugger/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
