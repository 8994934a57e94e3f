// The Helm chart against the real API server, with real Helm (built from Go modules): install with
// server-side apply, then the controller with the installed Deployment's arguments (as its pod would
// run them; no kubelet runs containers here) serves a Gateway; upgrade with a changed value rolls the
// controller without losing a status; uninstall leaves nothing behind but the CRDs.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { parseAllDocuments } from 'yaml';
import { Cluster, ROOT, waitFor } from '../harness/cluster.js';
import { Controller } from '../harness/controller.js';
import { cond, gateway, gatewayClass, ns } from '../harness/fixtures.js';
import { proxyObjectsOf } from '../harness/proxies.js';

type Obj = KubeObject & { spec?: any; status?: any };
const CHART = join(ROOT, 'deploy/helm/turnpike');
// The arguments that say where to listen stay the harness's (loopback, free ports).
const LISTEN_FLAGS = new Set(['--xds-address', '--health-address', '--plugin-address', '--in-cluster']);

describe('helm', () => {
  let cluster: Cluster;
  let controller: Controller | undefined;
  let helmPath: string;
  const helm = (...args: string[]) => {
    const r = spawnSync(helmPath, [...args, '--kubeconfig', cluster.adminKubeconfig], { encoding: 'utf8' });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  /** The controller as the installed Deployment runs it. */
  const startInstalled = async () => {
    const dep = (await cluster.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'turnpike', namespace: 'turnpike-system' },
    })) as Obj;
    const args: string[] = dep.spec.template.spec.containers[0].args;
    const kept: string[] = [];
    for (let i = 1; i < args.length; i++) {
      // The flight recorder writes into the Pod's volume: here, a directory of the test's.
      if (args[i] === '--record-dir') {
        kept.push('--record-dir', mkdtempSync(join(tmpdir(), 'tp-helm-recorder-')));
        i++;
        continue;
      }
      if (LISTEN_FLAGS.has(args[i]!)) {
        if (args[i] !== '--in-cluster') i++;
        continue;
      }
      kept.push(args[i]!);
    }
    controller = new Controller(cluster.controllerKubeconfig, kept);
    await controller.start();
    await controller.ready();
    return { dep, args };
  };
  const web = gateway('edge', 'web', 'tp');

  beforeAll(async () => {
    helmPath =
      process.env.TURNPIKE_HELM ??
      execFileSync('bash', [join(ROOT, 'e2e/scripts/build-helm.sh')], { encoding: 'utf8' }).trim();
    cluster = await Cluster.start({ deployRbac: false });
  }, 900_000);
  afterAll(async () => {
    await controller?.stop();
    await cluster?.stop();
  }, 30_000);

  it('helm: install with server-side apply, and the controller it describes serves a Gateway', async () => {
    const r = helm('install', 'turnpike', CHART, '-n', 'turnpike-system', '--server-side=true');
    expect([r.code, r.code === 0 ? '' : r.stderr]).toEqual([0, '']);
    const { args } = await startInstalled();
    expect(args[args.indexOf('--proxy-placement') + 1]).toBe('controller-namespace');
    await cluster.apply(ns('edge'));
    await cluster.apply(gatewayClass('tp'));
    await cluster.apply(web);
    // Settled: programmed, and its addresses judged once the proxies' Service is seen (AddressesAssigned), so
    // the upgrade below compares a whole status, not one caught halfway.
    await waitFor('Gateway Programmed', async () => {
      const g = (await cluster.get(web)) as Obj | undefined;
      return cond(g?.status?.conditions, 'Programmed')?.status === 'True' &&
        cond(g?.status?.conditions, 'AddressesAssigned')
        ? true
        : undefined;
    });
    // Its proxy objects, written under the chart's RBAC (a missing permission would fail the apply).
    await waitFor('proxy Deployment', async () =>
      (await cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: proxyObjectsOf('edge', 'web') }))
        ? true
        : undefined,
    );
    expect(controller!.out).not.toMatch(/forbidden/i);
  }, 180_000);

  it('helm: upgrade with a changed value rolls the controller without losing a status', async () => {
    const before = (await cluster.get(web)) as Obj;
    const r = helm(
      'upgrade',
      'turnpike',
      CHART,
      '-n',
      'turnpike-system',
      '--server-side=true',
      '--set',
      'logLevel=debug',
    );
    expect([r.code, r.code === 0 ? '' : r.stderr]).toEqual([0, '']);
    await controller!.stop();
    const { dep, args } = await startInstalled();
    expect(args[args.indexOf('--log-level') + 1]).toBe('debug');
    expect(dep.metadata.generation).toBeGreaterThan(1);
    // The status stays as it was: the new controller writes the same conditions.
    const brief = (g: Obj) => g.status.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`);
    const after = await waitFor('status after the roll', async () => {
      const g = (await cluster.get(web)) as Obj | undefined;
      return g?.status?.conditions ? g : undefined;
    });
    expect(brief(after)).toEqual(brief(before));
  }, 180_000);

  it('helm: uninstall leaves nothing behind but the CRDs', async () => {
    // The controller prunes its proxy objects when the Gateway goes; then it stops and the chart goes.
    await cluster.delete(web);
    await waitFor('proxy objects pruned', async () =>
      (await cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: proxyObjectsOf('edge', 'web') }))
        ? undefined
        : true,
    );
    await controller!.stop();
    controller = undefined;
    const manifest = helm('get', 'manifest', 'turnpike', '-n', 'turnpike-system');
    expect(manifest.code).toBe(0);
    // Every object the release holds (from Helm's own record of it) is gone after uninstall.
    const installed = parseAllDocuments(manifest.stdout)
      .map((d) => d.toJS() as KubeObject | null)
      .filter((o): o is KubeObject => !!o?.kind);
    expect(installed.map((o) => o.kind)).toEqual(expect.arrayContaining(['Deployment', 'ClusterRole', 'Role']));
    expect(helm('uninstall', 'turnpike', '-n', 'turnpike-system').code).toBe(0);
    for (const o of installed)
      expect([`${o.kind}/${o.metadata.name}`, await cluster.get(o)]).toEqual([
        `${o.kind}/${o.metadata.name}`,
        undefined,
      ]);
    // The CRDs stay (Helm never deletes what crds/ installed), as docs say.
    const crd = await cluster.admin.request(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/proxyconfigs.turnpike.dev',
    );
    expect(crd.status).toBe(200);
  }, 180_000);

  it('helm: refuses a namespace without the restricted Pod Security Standard; once labelled, installs, and a privileged pod is refused there', async () => {
    await cluster.apply(ns('tenant-infra'));
    const refused = helm('install', 'turnpike', CHART, '-n', 'tenant-infra', '--server-side=true');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(
      /namespace tenant-infra does not enforce the restricted Pod Security Standard.*kubectl label namespace tenant-infra pod-security.kubernetes.io\/enforce=restricted.*namespace.requireRestricted=false/,
    );
    // Nothing of it was created.
    expect(
      await cluster.get({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'turnpike', namespace: 'tenant-infra' },
      }),
    ).toBeUndefined();

    await cluster.apply(
      ns('tenant-infra', {
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'latest',
      }),
    );
    const installed = helm('install', 'turnpike', CHART, '-n', 'tenant-infra', '--server-side=true');
    expect([installed.code, installed.code === 0 ? '' : installed.stderr]).toEqual([0, '']);
    // What the controller's identity could otherwise create there: a privileged hostPath pod, refused.
    const privileged = await cluster.admin.request('POST', '/api/v1/namespaces/tenant-infra/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'escape' },
      spec: {
        containers: [{ name: 'x', image: 'busybox', securityContext: { privileged: true } }],
        volumes: [{ name: 'host', hostPath: { path: '/' } }],
      },
    });
    expect(privileged.status).toBe(403);
    expect((privileged.body as { message?: string }).message).toMatch(
      /violates PodSecurity "restricted:latest".*hostPath/,
    );
    expect(helm('uninstall', 'turnpike', '-n', 'tenant-infra').code).toBe(0);
  }, 180_000);
});
