// The debugging tools on a live cluster: `analyze`, `explain` and `diff` with --kubeconfig, run as a
// user bound only to the ClusterRole turnpike-viewer (deploy/viewer-rbac.yaml), on the objects the
// controller under test serves.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { ROOT, waitFor } from '../harness/cluster.js';
import { cond, gateway, gatewayClass, httpRoute, ns, service } from '../harness/fixtures.js';
import { clusterWithController } from '../harness/setup.js';

type Obj = KubeObject & { spec?: any; status?: any };

const withHost = (route: KubeObject, host: string): KubeObject => ({
  ...route,
  spec: { ...(route.spec as object), hostnames: [host] },
});
const shop = withHost(
  httpRoute('edge', 'shop', [{ name: 'web', namespace: 'edge' }], [{ name: 'store', port: 8080 }]),
  'shop.example.com',
);
const blog = withHost(
  httpRoute('edge', 'blog', [{ name: 'web', namespace: 'edge' }], [{ name: 'gone', port: 8080 }]),
  'blog.example.com',
);
// A ready endpoint for the Service shop uses: a live cluster's analysis reports backends without any.
const storeEndpoints: KubeObject = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'store-1', namespace: 'edge', labels: { 'kubernetes.io/service-name': 'store' } },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true } }],
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
} as KubeObject;

function cli(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'packages/cli/dist/main.js'), ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('live cluster', () => {
  const env = clusterWithController(async (c) => {
    await c.apply(ns('edge'));
    await c.apply(ns('other'));
    await c.apply(gatewayClass('tp'));
    await c.apply(gateway('edge', 'web', 'tp'));
    await c.apply(service('edge', 'store'));
    await c.apply(storeEndpoints);
    await c.apply(shop);
    await c.apply(blog);
    // The viewer user gets the read-only ClusterRole, and nothing else.
    await c.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'viewer-turnpike-viewer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'turnpike-viewer' },
      subjects: [{ kind: 'User', name: 'viewer', apiGroup: 'rbac.authorization.k8s.io' }],
    } as KubeObject);
  });
  let kubeconfig: string;
  beforeAll(async () => {
    kubeconfig = env.cluster.viewerKubeconfig;
    // The controller has written the routes' status.
    for (const route of [shop, blog])
      await waitFor(`${route.metadata.name} status`, async () => {
        const r = (await env.cluster.get(route)) as Obj | undefined;
        return r?.status?.parents?.length ? true : undefined;
      });
  }, 60_000);

  it('live cluster: analyze --kubeconfig reports the route whose backend is missing, -n narrows it, and kubectl turnpike reads $KUBECONFIG', () => {
    const r = cli('analyze', '--kubeconfig', kubeconfig);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'HTTPRoute/edge/blog parent edge/web: ResolvedRefs=False (BackendNotFound): spec.rules[0].backendRefs[0]: Service edge/gone not found',
    );
    expect(r.stdout).not.toContain('HTTPRoute/edge/shop');
    const other = cli('analyze', '--kubeconfig', kubeconfig, '-n', 'other');
    expect([other.code, other.stdout]).toEqual([0, expect.stringMatching(/^0 problem\(s\)/m)]);
    // As a kubectl plugin: no flag but $KUBECONFIG, as kubectl itself reads it.
    const dir = mkdtempSync(join(tmpdir(), 'turnpike-plugin-'));
    symlinkSync(join(ROOT, 'packages/cli/dist/main.js'), join(dir, 'kubectl-turnpike'));
    const plugin = spawnSync(process.execPath, [join(dir, 'kubectl-turnpike'), 'analyze', '-A', '-o', 'wide'], {
      encoding: 'utf8',
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    expect(plugin.stdout).toContain('HTTPRoute/edge/blog parent edge/web: ResolvedRefs=False (BackendNotFound)');
  });

  it("live cluster: explain --kubeconfig agrees with the controller's written status", async () => {
    const e = JSON.parse(cli('explain', 'httproutes/edge/blog', '--kubeconfig', kubeconfig, '-o', 'json').stdout) as {
      status: { parents: { conditions: { type: string; status: string; reason: string }[] }[] };
      lines: string[];
    };
    const live = (await env.cluster.get(blog)) as Obj;
    const written = live.status.parents.find(
      (p: { controllerName: string }) => p.controllerName === 'turnpike.dev/gateway-controller',
    );
    const brief = (list: { type: string; status: string; reason: string }[]) =>
      list.map((c) => `${c.type}=${c.status}/${c.reason}`).sort();
    expect(brief(e.status.parents[0]!.conditions)).toEqual(brief(written.conditions));
    expect(cond(written.conditions, 'ResolvedRefs')?.status).toBe('False');
    expect(e.lines.join('\n')).toContain('Service edge/gone not found');
  });

  it('live cluster: diff --kubeconfig with no files says no change; with one route edited it names exactly that route', () => {
    const same = cli('diff', '--kubeconfig', kubeconfig);
    expect([same.code, same.stdout]).toEqual([0, 'no differences\n']);
    const dir = mkdtempSync(join(tmpdir(), 'turnpike-live-diff-'));
    // The edit points shop at the missing Service: its status and its routes change, nothing else.
    writeFileSync(
      join(dir, 'shop.yaml'),
      JSON.stringify({
        ...shop,
        spec: { ...(shop.spec as object), rules: [{ backendRefs: [{ name: 'gone', port: 8080 }] }] },
      }),
    );
    const changed = cli('diff', '--kubeconfig', kubeconfig, '-f', dir, '-o', 'json');
    expect(changed.stderr).toBe('');
    expect(changed.code).toBe(1);
    const d = JSON.parse(changed.stdout) as {
      objects: { object: string }[];
      xds: { gateway: string; routes: { added: string[]; removed: string[]; changed: string[] } }[];
    };
    expect(d.objects.map((o) => o.object)).toEqual(['HTTPRoute/edge/shop']);
    expect(d.xds.map((g) => g.gateway)).toEqual(['edge/web']);
    const routes = [...d.xds[0]!.routes.added, ...d.xds[0]!.routes.removed, ...d.xds[0]!.routes.changed];
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) expect(r).toMatch(/ httproute\/edge\/shop\//);
  });

  it('live cluster: without the viewer role, one line names the role to bind; an unknown context is named', async () => {
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'viewer-turnpike-viewer' },
    } as KubeObject;
    await env.cluster.delete(binding);
    const r = await waitFor('the binding to be gone from the authorizer', async () => {
      const x = cli('analyze', '--kubeconfig', kubeconfig);
      return x.code === 2 ? x : undefined;
    });
    expect(r.stderr.trim()).toMatch(
      /^turnpike: cannot list gatewayclasses: .*\(bind the ClusterRole turnpike-viewer\)$/,
    );
    const unknown = cli('analyze', '--kubeconfig', kubeconfig, '--context', 'nope');
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining('no context "nope"')]);
  });
});
