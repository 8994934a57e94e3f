// The kube source against a fake API server that serves every kind but, on demand, ClusterTrustBundle:
// it says in the stream whether (and at which version) that API is served, once per change, before
// the source reports synced (ServedAPI, which the translator reads: GEP-5075).
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { SourceEvent } from '@turnpike/engine';
import { kubeSource } from '../src/index.js';
import { kubeClientFor } from './kube-client-for.js';

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('kube source: ServedAPI for ClusterTrustBundle', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });

  it('says the API is not served, then which version serves it once it is, each change once', async () => {
    let served: string[] = [];
    let ctbLists = 0;
    const server: Server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const version = /^\/apis\/certificates\.k8s\.io\/(\w+)\/clustertrustbundles$/.exec(url.pathname)?.[1];
      if (version && !url.searchParams.get('watch')) ctbLists++;
      if (version && !served.includes(version)) return res.writeHead(404).end('{"kind":"Status","code":404}');
      if (url.searchParams.get('watch')) return res.writeHead(200).flushHeaders();
      const items = version
        ? [{ metadata: { name: 'roots', resourceVersion: '3' }, spec: { trustBundle: 'PEM' } }]
        : [];
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ metadata: { resourceVersion: '3' }, items }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const events: SourceEvent[] = [];
    const sub = kubeSource({
      client: kubeClientFor((server.address() as { port: number }).port),
      missingRetryMs: 50,
      backoffMs: [20, 100],
    }).subscribe((e) => events.push(e));
    cleanup.push(() => {
      sub.unsubscribe();
      server.closeAllConnections();
      server.close();
    });
    const servedEvents = () => events.filter((e) => e.kind === 'ServedAPI');
    await until(() => events.some((e) => e.type === 'synced' && e.kind === '*') && ctbLists >= 6);
    // Looked for three times at both versions, said once, and before the source is synced.
    expect(servedEvents().map((e) => e.object!.status)).toEqual([{ served: false }]);
    expect(servedEvents()[0]).toMatchObject({
      source: 'kube',
      type: 'upsert',
      name: 'clustertrustbundles.certificates.k8s.io',
    });
    expect(events.indexOf(servedEvents()[0]!)).toBeLessThan(
      events.findIndex((e) => e.type === 'synced' && e.kind === '*'),
    );
    served = ['v1beta1'];
    await until(() => events.some((e) => e.type === 'upsert' && e.kind === 'ClusterTrustBundle'));
    expect(servedEvents().map((e) => e.object!.status)).toEqual([
      { served: false },
      { served: true, version: 'v1beta1' },
    ]);
    // Said before the object it brings, which is stored in the v1 form.
    const bundle = events.find((e) => e.type === 'upsert' && e.kind === 'ClusterTrustBundle')!;
    expect(events.indexOf(servedEvents()[1]!)).toBeLessThan(events.indexOf(bundle));
    expect(bundle.object!.apiVersion).toBe('certificates.k8s.io/v1');
  });

  it('Pods the controller may not list (RBAC of an older release) count as synced with none, so it still starts', async () => {
    let podLists = 0;
    const server: Server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/api/v1/pods') {
        podLists++;
        return res.writeHead(403).end('{"kind":"Status","code":403}');
      }
      if (url.searchParams.get('watch')) return res.writeHead(200).flushHeaders();
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ metadata: { resourceVersion: '3' }, items: [] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const events: SourceEvent[] = [];
    const sub = kubeSource({
      client: kubeClientFor((server.address() as { port: number }).port),
      missingRetryMs: 50,
      backoffMs: [20, 100],
    }).subscribe((e) => events.push(e));
    cleanup.push(() => {
      sub.unsubscribe();
      server.closeAllConnections();
      server.close();
    });
    await until(() => events.some((e) => e.type === 'synced' && e.kind === '*'));
    expect(events.some((e) => e.type === 'synced' && e.kind === 'Pod')).toBe(true);
    // Looked for again later.
    await until(() => podLists >= 2);
  });
});
