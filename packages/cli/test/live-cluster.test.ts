// listLiveObjects (analyze, explain, diff with --kubeconfig) against a fake API server: ClusterTrustBundle
// at the first version served, in the v1 form, and the ServedAPI fact the controller's source would
// give, so a live analysis reaches the controller's verdicts (GEP-5075: InvalidKind when not served).
// No Secret and no ConfigMap is ever asked for but the controller's record, found where it runs.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { KubeClient } from '@turnpike/kube';
import { controllerNamespaces, listLiveObjects, readReferenceRecord } from '../src/live-cluster.js';

async function fakeApi(
  served: string[],
  paths: string[] = [],
  answer?: (path: string) => [number, unknown] | undefined,
): Promise<{ server: Server; client: KubeClient }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    paths.push(url.pathname);
    const special = answer?.(url.pathname);
    if (special)
      return res.writeHead(special[0], { 'Content-Type': 'application/json' }).end(JSON.stringify(special[1]));
    const version = /^\/apis\/certificates\.k8s\.io\/(\w+)\/clustertrustbundles$/.exec(url.pathname)?.[1];
    if (version && !served.includes(version)) return res.writeHead(404).end('{"kind":"Status","code":404}');
    const items = version
      ? [{ apiVersion: `certificates.k8s.io/${version}`, kind: 'ClusterTrustBundle', metadata: { name: 'roots' } }]
      : [];
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ metadata: {}, items }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const path = join(mkdtempSync(join(tmpdir(), 'tp-live-')), 'kubeconfig');
  const port = (server.address() as { port: number }).port;
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'c',
      clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    }),
  );
  return { server, client: KubeClient.fromKubeconfig(path) };
}

describe('live cluster listing: ClusterTrustBundle', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });
  const listed = async (served: string[]) => {
    const { server, client } = await fakeApi(served);
    cleanup.push(() => {
      client.close();
      server.close();
    });
    const objects = await listLiveObjects(client);
    return {
      fact: objects.find((o) => o.kind === 'ServedAPI'),
      bundles: objects.filter((o) => o.kind === 'ClusterTrustBundle'),
    };
  };

  it('v1 served: its objects, and the fact that says so', async () => {
    const { fact, bundles } = await listed(['v1', 'v1beta1']);
    expect(fact).toMatchObject({
      metadata: { name: 'clustertrustbundles.certificates.k8s.io' },
      status: { served: true, version: 'v1' },
    });
    expect(bundles.map((b) => b.apiVersion)).toEqual(['certificates.k8s.io/v1']);
  });

  it('only v1beta1 served: listed there, stored in the v1 form', async () => {
    const { fact, bundles } = await listed(['v1beta1']);
    expect(fact?.status).toEqual({ served: true, version: 'v1beta1' });
    expect(bundles.map((b) => b.apiVersion)).toEqual(['certificates.k8s.io/v1']);
  });

  it('neither served: no objects, and the fact that the API is not served', async () => {
    const { fact, bundles } = await listed([]);
    expect(fact?.status).toEqual({ served: false });
    expect(bundles).toEqual([]);
  });
});

describe('live cluster listing: Secrets and ConfigMaps', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });
  const api = async (answer?: (path: string) => [number, unknown] | undefined) => {
    const paths: string[] = [];
    const { server, client } = await fakeApi(['v1'], paths, answer);
    cleanup.push(() => {
      client.close();
      server.close();
    });
    return { client, paths };
  };

  it('lists every kind the controller reads but Secrets and ConfigMaps', async () => {
    const { client, paths } = await api();
    await listLiveObjects(client);
    expect(paths).toContain('/apis/gateway.networking.k8s.io/v1/gateways');
    expect(paths.filter((p) => /\/(secrets|configmaps)\b/.test(p))).toEqual([]);
  });

  it("reads the record in the controller's namespace (where its ProxyReports are), and says why there is none", async () => {
    const report = {
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ProxyReport',
      metadata: { name: 'r', namespace: 'tp' },
    };
    expect(controllerNamespaces([report])).toEqual(['tp']);
    expect(controllerNamespaces([])).toEqual(['turnpike-system']);
    const record = { updated: '2026-12-05T10:00:00.000Z', references: [] };
    const { client, paths } = await api((p) =>
      p === '/api/v1/namespaces/tp/configmaps/turnpike-references'
        ? [200, { metadata: { name: 'turnpike-references' }, data: { 'references.json': JSON.stringify(record) } }]
        : p === '/api/v1/namespaces/locked/configmaps/turnpike-references'
          ? [403, { kind: 'Status', code: 403, message: 'forbidden' }]
          : p.endsWith('/turnpike-references')
            ? [404, { kind: 'Status', code: 404 }]
            : undefined,
    );
    expect(await readReferenceRecord(client, ['tp'])).toEqual({ source: 'tp/turnpike-references', record });
    expect(paths).toEqual(['/api/v1/namespaces/tp/configmaps/turnpike-references']);
    expect((await readReferenceRecord(client, ['locked'])).missing).toMatch(
      /^reading ConfigMap locked\/turnpike-references is refused \(bind the ClusterRole turnpike-viewer/,
    );
    expect((await readReferenceRecord(client, ['gone'])).missing).toMatch(
      /^the controller has published no record \(no ConfigMap gone\/turnpike-references/,
    );
  });
});
