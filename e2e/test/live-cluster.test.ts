// The debugging tools on a live cluster: `analyze`, `explain` and `diff` with --kubeconfig, run as a
// user bound only to the ClusterRole turnpike-viewer (deploy/viewer-rbac.yaml), on the objects the
// controller under test serves. The viewer reads no Secret and no ConfigMap: HTTPS listeners and a
// BackendTLSPolicy's CA bundle are judged by the record the controller publishes.
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject, ReferenceRecord } from '@turnpike/api';
import { KubeClient } from '@turnpike/kube';
import { ROOT, waitFor } from '../harness/cluster.js';
import { cond, gateway, gatewayClass, httpRoute, ns, service } from '../harness/fixtures.js';
import { clusterWithController } from '../harness/setup.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_TEST_KEY } from '../../packages/translator/test/tls-fixtures.js';

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

// A Gateway whose HTTPS listeners name two certificate Secrets, one whose key is another certificate's;
// a route through it to a Service whose BackendTLSPolicy trusts a CA bundle in a ConfigMap.
const tlsSecret = (name: string, key: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'edge' },
  type: 'kubernetes.io/tls',
  data: { 'tls.crt': Buffer.from(EXAMPLE_COM_CERT).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
});
const https = (name: string, port: number, secret: string) => ({
  name,
  port,
  protocol: 'HTTPS',
  hostname: `${name}.example.com`,
  tls: { mode: 'Terminate', certificateRefs: [{ name: secret }] },
});
const secure = gateway('edge', 'secure', 'tp', {
  listeners: [https('shop', 443, 'web-cert'), https('blog', 8443, 'mismatched')],
});
const vault = withHost(
  httpRoute(
    'edge',
    'vault',
    [{ name: 'secure', namespace: 'edge', sectionName: 'shop' }],
    [{ name: 'vault', port: 8080 }],
  ),
  'shop.example.com',
);
const vaultCA: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'vault-ca', namespace: 'edge' },
  data: { 'ca.crt': EXAMPLE_COM_CERT },
};
const vaultTLS: KubeObject = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'BackendTLSPolicy',
  metadata: { name: 'vault-tls', namespace: 'edge' },
  spec: {
    targetRefs: [{ group: '', kind: 'Service', name: 'vault' }],
    validation: {
      hostname: 'vault.example.com',
      caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'vault-ca' }],
    },
  },
} as KubeObject;
const vaultEndpoints: KubeObject = {
  ...storeEndpoints,
  metadata: { name: 'vault-1', namespace: 'edge', labels: { 'kubernetes.io/service-name': 'vault' } },
};

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
    for (const o of [tlsSecret('web-cert', EXAMPLE_COM_KEY), tlsSecret('mismatched', OTHER_TEST_KEY), secure])
      await c.apply(o);
    for (const o of [service('edge', 'vault'), vaultEndpoints, vaultCA, vaultTLS, vault]) await c.apply(o);
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
  /** The API server's answer to a GET as the viewer. */
  const viewerStatus = async (path: string): Promise<number> => {
    const viewer = KubeClient.fromKubeconfig(kubeconfig);
    try {
      return (await viewer.request('GET', path)).status;
    } finally {
      viewer.close();
    }
  };
  beforeAll(async () => {
    kubeconfig = env.cluster.viewerKubeconfig;
    // The controller has written the routes' status.
    for (const route of [shop, blog, vault])
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

  it("security: the viewer reads no Secret (GET, LIST and WATCH refused, the CA's included) nor any ConfigMap but the record; analyze, explain and diff judge the HTTPS listeners and the CA bundle by the record, agree with the controller and say what they could not read", async () => {
    for (const path of [
      '/api/v1/secrets',
      '/api/v1/secrets?watch=1&timeoutSeconds=1',
      '/api/v1/namespaces/edge/secrets',
      '/api/v1/namespaces/edge/secrets/web-cert',
      '/api/v1/namespaces/turnpike-system/secrets',
      '/api/v1/namespaces/turnpike-system/secrets/turnpike-xds-ca',
      '/api/v1/namespaces/kube-system/secrets',
      '/api/v1/configmaps',
      '/api/v1/namespaces/edge/configmaps/vault-ca',
      '/api/v1/namespaces/turnpike-system/configmaps',
    ])
      expect([path, await viewerStatus(path)]).toEqual([path, 403]);
    // The controller has judged the listeners and recorded both Secrets and the CA bundle.
    const written = await waitFor('the Gateway status and the record', async () => {
      const gw = (await env.cluster.get(secure)) as Obj | undefined;
      const cm = (await env.cluster.get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'turnpike-references', namespace: 'turnpike-system' },
      })) as (KubeObject & { data?: Record<string, string> }) | undefined;
      const record = cm?.data?.['references.json']
        ? (JSON.parse(cm.data['references.json']) as ReferenceRecord)
        : undefined;
      const names = record?.references.map((r) => `${r.kind}/${r.name}`).sort();
      return gw?.status?.listeners?.length === 2 &&
        names?.join() === 'ConfigMap/vault-ca,Secret/mismatched,Secret/web-cert'
        ? gw
        : undefined;
    });
    // The one ConfigMap it may read.
    expect(await viewerStatus('/api/v1/namespaces/turnpike-system/configmaps/turnpike-references')).toBe(200);
    const writtenBlog = written.status.listeners.find((l: { name: string }) => l.name === 'blog');
    expect(cond(writtenBlog.conditions, 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'InvalidCertificateRef',
      message:
        'spec.listeners[1].tls.certificateRefs[0]: Secret edge/mismatched: data["tls.key"] does not belong to the ' +
        'certificate in data["tls.crt"]',
    });

    // analyze: the controller's verdict on each listener, and one line on what it did not read.
    const analyzed = cli('analyze', '--kubeconfig', kubeconfig);
    expect(analyzed.stderr).toBe('');
    expect(analyzed.stdout).toContain(
      `Gateway/edge/secure listener blog: ResolvedRefs=False (InvalidCertificateRef): ${cond(writtenBlog.conditions, 'ResolvedRefs')!.message}`,
    );
    expect(analyzed.stdout).not.toContain('Gateway/edge/secure listener shop');
    expect(analyzed.stdout).not.toContain('BackendTLSPolicy/edge/vault-tls');
    expect(analyzed.stdout).toMatch(
      /^note: the live tools read no Secret and no ConfigMap: 3 referenced object\(s\) judged as the controller last saw them \(ConfigMap turnpike-system\/turnpike-references, updated \S+\)$/m,
    );

    // explain: every listener condition as the controller wrote it, and the certificate as it last saw it.
    const e = JSON.parse(cli('explain', 'gateways/edge/secure', '--kubeconfig', kubeconfig, '-o', 'json').stdout) as {
      status: {
        listeners: { name: string; conditions: { type: string; status: string; reason: string; message: string }[] }[];
      };
      lines: string[];
    };
    const brief = (
      ls: { name: string; conditions: { type: string; status: string; reason: string; message: string }[] }[],
    ) => ls.flatMap((l) => l.conditions.map((c) => `${l.name} ${c.type}=${c.status}/${c.reason}: ${c.message}`)).sort();
    expect(brief(e.status.listeners)).toEqual(brief(written.status.listeners));
    const fingerprint = new X509Certificate(EXAMPLE_COM_CERT).fingerprint256;
    const lines = e.lines.join('\n');
    expect(lines).toMatch(
      new RegExp(
        `certificate of Secret edge/web-cert: as the controller last saw it \\(turnpike-system/turnpike-references, \\S+\\): ` +
          `SHA-256 fingerprint ${fingerprint}; DNS names \\*\\.example\\.com, example\\.com; valid \\S+ to \\S+; key matches`,
      ),
    );
    expect(lines).toContain('certificate of Secret edge/mismatched: as the controller last saw it');
    expect(lines).toContain('key does not match; not usable: data["tls.key"] does not belong');
    const policy = JSON.parse(
      cli('explain', 'backendtlspolicies/edge/vault-tls', '--kubeconfig', kubeconfig, '-o', 'json').stdout,
    ) as {
      status: { ancestors: { conditions: { type: string; status: string; reason: string }[] }[] };
      lines: string[];
    };
    const livePolicy = (await env.cluster.get(vaultTLS)) as Obj;
    const conds = (list: { type: string; status: string; reason: string }[]) =>
      list.map((c) => `${c.type}=${c.status}/${c.reason}`).sort();
    expect(conds(policy.status.ancestors[0]!.conditions)).toEqual(conds(livePolicy.status.ancestors[0].conditions));
    expect(policy.lines.join('\n')).toMatch(
      /CA bundle of ConfigMap edge\/vault-ca: as the controller last saw it .*: 1 certificate\(s\), sha256 [0-9a-f]{64}/,
    );

    // diff: nothing changes by itself; a listener moved to the other recorded Secret is judged by the record;
    // one moved to a Secret the record does not have is said to be the controller's to judge.
    expect(cli('diff', '--kubeconfig', kubeconfig)).toMatchObject({ code: 0, stdout: 'no differences\n', stderr: '' });
    const dir = mkdtempSync(join(tmpdir(), 'turnpike-live-tls-'));
    const moved = (secret: string) => {
      writeFileSync(
        join(dir, 'secure.yaml'),
        JSON.stringify({
          ...secure,
          spec: {
            ...(secure.spec as object),
            listeners: [https('shop', 443, secret), https('blog', 8443, 'mismatched')],
          },
        }),
      );
      const r = cli('diff', '--kubeconfig', kubeconfig, '-f', dir, '-o', 'json');
      return {
        ...r,
        diff: JSON.parse(r.stdout) as {
          objects: { object: string; conditions: { where: string; type: string; new?: string }[] }[];
        },
      };
    };
    const toMismatched = moved('mismatched');
    expect([toMismatched.code, toMismatched.stderr]).toEqual([1, '']);
    expect(toMismatched.diff.objects.find((o) => o.object === 'Gateway/edge/secure')!.conditions).toContainEqual(
      expect.objectContaining({ where: 'listener shop', type: 'ResolvedRefs', new: 'False/InvalidCertificateRef' }),
    );
    const toUnknown = moved('elsewhere');
    expect(toUnknown.code).toBe(1);
    expect(toUnknown.stderr).toBe(
      "turnpike: note: Secret edge/elsewhere: not readable here (the live tools read no Secret or ConfigMap), not in the controller's record: the controller judges it\n",
    );
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
