// Reflector recovery against a local HTTP server that plays an API server and misbehaves on
// demand: a connection cut mid-stream, a watch that hangs, 410 Gone, a burst of 500s.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import { slimPod } from '@turnpike/api';
import type { SourceEvent } from '@turnpike/engine';
import { Reflector, resourceInfo } from '../src/index.js';
import { kubeClientFor } from './kube-client-for.js';

interface Fake {
  server: Server;
  port: number;
  lists: number;
  watches: number;
  handler: (req: IncomingMessage, res: ServerResponse, url: URL) => void;
}

async function fakeApi(handler: Fake['handler']): Promise<Fake> {
  const f = { lists: 0, watches: 0, handler } as Fake;
  f.server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch')) f.watches++;
    else f.lists++;
    f.handler(req, res, url);
  });
  await new Promise<void>((r) => f.server.listen(0, '127.0.0.1', () => r()));
  f.port = (f.server.address() as { port: number }).port;
  return f;
}

const svc = (name: string, rv: string) => ({ metadata: { name, namespace: 'a', resourceVersion: rv }, spec: {} });
const list = (res: ServerResponse, rv: string, items: unknown[]) =>
  res
    .writeHead(200, { 'Content-Type': 'application/json' })
    .end(JSON.stringify({ metadata: { resourceVersion: rv }, items }));

function reflector(
  port: number,
  events: SourceEvent[],
  extra: Partial<ConstructorParameters<typeof Reflector>[0]> = {},
) {
  let synced = 0;
  const r = new Reflector({
    client: kubeClientFor(port),
    resource: resourceInfo('Service')!,
    source: 'kube',
    emit: (e) => events.push(e),
    onSynced: () => synced++,
    backoffMs: [20, 100],
    random: () => 0.5,
    ...extra,
  });
  return { r, synced: () => synced };
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('reflector recovery', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });
  /** Starts the reflector; after the test, stops it and its fake API server. */
  const running = (r: Reflector, f: Fake) => {
    cleanup.push(() => {
      r.stop();
      f.server.closeAllConnections();
      f.server.close();
    });
    r.start();
  };

  it('a connection cut mid-stream: reconnects from the last resourceVersion without relisting', async () => {
    const rvs: string[] = [];
    const f = await fakeApi((_req, res, url) => {
      if (!url.searchParams.get('watch')) return list(res, '10', [svc('a', '10')]);
      rvs.push(url.searchParams.get('resourceVersion')!);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (rvs.length === 1) {
        res.write(`${JSON.stringify({ type: 'ADDED', object: svc('b', '11') })}\n`);
        setTimeout(() => res.socket?.destroy(), 50); // cut without ending the chunked stream
      }
    });
    const events: SourceEvent[] = [];
    const { r } = reflector(f.port, events);
    cleanup.push(() => {
      r.stop();
      f.server.close();
    });
    r.start();
    await until(() => rvs.length >= 2);
    expect(rvs).toEqual(['10', '11']);
    expect(f.lists).toBe(1);
    expect(events.filter((e) => e.type === 'upsert').map((e) => e.name)).toEqual(['a', 'b']);
  });

  it("emits objects in the store's form: typed, managedFields dropped, frozen", async () => {
    const withFields = { ...svc('a', '1'), metadata: { ...svc('a', '1').metadata, managedFields: [{ manager: 'x' }] } };
    const f = await fakeApi((_req, res, url) => {
      if (!url.searchParams.get('watch')) return list(res, '1', [withFields]);
      res.writeHead(200).flushHeaders();
    });
    const events: SourceEvent[] = [];
    const { r, synced } = reflector(f.port, events);
    running(r, f);
    await until(() => synced() === 1);
    const object = events[0]!.object!;
    expect(object).toEqual({ apiVersion: 'v1', kind: 'Service', metadata: svc('a', '1').metadata, spec: {} });
    expect(Object.isFrozen(object) && Object.isFrozen(object.metadata)).toBe(true);
  });

  it('Pods are cut down before they are emitted (slimPod), and an update that changes nothing kept is dropped', async () => {
    const pod = (rv: string, ready: string, extra: Record<string, unknown> = {}) => ({
      metadata: {
        name: 'p',
        namespace: 'a',
        uid: 'u1',
        resourceVersion: rv,
        labels: { app: 'x' },
        annotations: { n: rv },
      },
      spec: { containers: [{ name: 'c', image: 'i' }] },
      status: {
        phase: 'Running',
        podIP: '10.0.0.1',
        podIPs: [{ ip: '10.0.0.1' }],
        conditions: [
          { type: 'PodScheduled', status: 'True', lastProbeTime: rv },
          { type: 'Ready', status: ready },
        ],
        containerStatuses: [{ name: 'c', restartCount: Number(rv) }],
        ...extra,
      },
    });
    const f = await fakeApi((_req, res, url) => {
      if (!url.searchParams.get('watch')) return list(res, '1', [pod('1', 'False')]);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (url.searchParams.get('resourceVersion') !== '1') return;
      // A probe rewrites the status (other fields only), then the Pod turns Ready.
      res.write(`${JSON.stringify({ type: 'MODIFIED', object: pod('2', 'False') })}\n`);
      res.write(`${JSON.stringify({ type: 'MODIFIED', object: pod('3', 'True') })}\n`);
    });
    const events: SourceEvent[] = [];
    const { r } = reflector(f.port, events, { resource: resourceInfo('Pod')!, slim: slimPod });
    running(r, f);
    await until(() => events.filter((e) => e.type === 'upsert').length >= 2);
    const upserts = events.filter((e) => e.type === 'upsert');
    expect(upserts).toHaveLength(2);
    expect(upserts[1]!.object).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'a', uid: 'u1', labels: { app: 'x' } },
      status: { phase: 'Running', podIPs: [{ ip: '10.0.0.1' }], conditions: [{ type: 'Ready', status: 'True' }] },
    });
    expect(upserts[0]!.object!.status).toMatchObject({ conditions: [{ type: 'Ready', status: 'False' }] });
  });

  it('a watch that hangs silently is aborted by the watchdog and re-established', async () => {
    const f = await fakeApi((_req, res, url) => {
      if (!url.searchParams.get('watch')) return list(res, '5', []);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders(); // then nothing, ever
    });
    const events: SourceEvent[] = [];
    const { r } = reflector(f.port, events, { watchdogMs: 150 });
    running(r, f);
    await until(() => f.watches >= 3);
    expect(r.stats.errors).toBeGreaterThanOrEqual(2);
  });

  it('410 Gone relists and emits the difference: deletes for what vanished, upserts for what changed', async () => {
    let phase = 0;
    const listedAt: (string | null)[] = [];
    const f = await fakeApi((_req, res, url) => {
      if (!url.searchParams.get('watch')) {
        listedAt.push(url.searchParams.get('resourceVersion'));
        phase++;
        return phase === 1
          ? list(res, '10', [svc('keep', '10'), svc('gone', '10')])
          : list(res, '30', [svc('keep', '25'), svc('new', '26')]);
      }
      if (phase === 1)
        return res
          .writeHead(410, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired' }));
      res.writeHead(200).flushHeaders();
    });
    const events: SourceEvent[] = [];
    const { r, synced } = reflector(f.port, events);
    running(r, f);
    await until(() => f.lists === 2 && events.length >= 5);
    expect(events.map((e) => `${e.type}:${e.name}`)).toEqual([
      'upsert:keep',
      'upsert:gone',
      'upsert:keep',
      'upsert:new',
      'delete:gone',
    ]);
    expect(synced()).toBe(1);
    expect(r.stats.relists).toBe(1);
    // The first list from the watch cache; the relist from etcd, never older than what was emitted.
    expect(listedAt).toEqual(['0', null]);
  });

  it('a relist cut mid-response deletes nothing it had not reached, and the retry finishes the job', async () => {
    let lists = 0;
    const f = await fakeApi((_req, res, url) => {
      if (!url.searchParams.get('watch')) {
        lists++;
        if (lists === 1) return list(res, '10', [svc('a', '10'), svc('b', '10'), svc('c', '10')]);
        const body = JSON.stringify({ metadata: { resourceVersion: '30' }, items: [svc('a', '20'), svc('c', '10')] });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        if (lists === 2) {
          // Everything up to the middle of c: a is complete, c is not; the list never ends.
          res.write(body.slice(0, body.indexOf('"c"') + 3));
          setTimeout(() => res.socket?.destroy(), 50);
          return;
        }
        return res.end(body);
      }
      if (f.watches === 1)
        return res
          .writeHead(410, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired' }));
      res.writeHead(200).flushHeaders();
    });
    const events: SourceEvent[] = [];
    const { r } = reflector(f.port, events);
    running(r, f);
    await until(() => lists === 3 && events.some((e) => e.type === 'delete'));
    // The cut list gave a's new version; b (gone) and c (unchanged, not reached) were left alone until a
    // whole list said which objects remain.
    expect(events.map((e) => `${e.type}:${e.name}`)).toEqual([
      'upsert:a',
      'upsert:b',
      'upsert:c',
      'upsert:a',
      'delete:b',
    ]);
    expect(r.stats.errors).toBe(1);
  });

  it('an ERROR event with code 410 inside the stream also relists', async () => {
    const f = await fakeApi((_req, res, url) => {
      if (!url.searchParams.get('watch')) return list(res, '1', []);
      if (f.watches === 1) {
        res.writeHead(200);
        res.end(
          `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } })}\n`,
        );
        return;
      }
      res.writeHead(200).flushHeaders();
    });
    const { r } = reflector(f.port, []);
    running(r, f);
    await until(() => f.lists >= 2);
    expect(r.stats.relists).toBe(1);
  });

  it('a burst of 500s on list backs off, then syncs; nothing is emitted twice', async () => {
    let failures = 3;
    const times: number[] = [];
    const f = await fakeApi((_req, res, url) => {
      if (!url.searchParams.get('watch')) {
        times.push(Date.now());
        if (failures-- > 0) return res.writeHead(500).end('{"message":"etcd leader changed"}');
        return list(res, '3', [svc('a', '3')]);
      }
      res.writeHead(200).flushHeaders();
    });
    const events: SourceEvent[] = [];
    const { r, synced } = reflector(f.port, events);
    running(r, f);
    await until(() => synced() === 1);
    expect(f.lists).toBe(4);
    // Waits grow: 20, 40, 80 ms (× jitter 1.0 here).
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps[1]!).toBeGreaterThanOrEqual(gaps[0]!);
    expect(gaps[2]!).toBeGreaterThanOrEqual(60);
    expect(events.map((e) => e.name)).toEqual(['a']);
  });

  it('a kind the API server does not serve (404) is reported once, counted as synced, and picked up later', async () => {
    let served = false;
    const f = await fakeApi((_req, res, url) => {
      if (!served) return res.writeHead(404).end('{"message":"the server could not find the requested resource"}');
      if (!url.searchParams.get('watch')) return list(res, '1', [svc('late', '1')]);
      res.writeHead(200).flushHeaders();
    });
    const logs: string[] = [];
    const events: SourceEvent[] = [];
    const { r, synced } = reflector(f.port, events, { missingRetryMs: 100, log: (_l, m) => logs.push(m) });
    running(r, f);
    await until(() => synced() === 1);
    await new Promise((res) => setTimeout(res, 250));
    expect(logs.filter((m) => m.includes('not served')).length).toBe(1);
    served = true;
    await until(() => events.length === 1);
    expect(events[0]!.name).toBe('late');
  });
});

// ClusterTrustBundle: certificates.k8s.io/v1 since Kubernetes 1.37, v1beta1 (off by default) before, and
// clusters that serve neither. The reflector lists the first version served and says which (onServed).
describe('a kind with fallback versions (ClusterTrustBundle)', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });
  const ctb = (name: string, rv: string, apiVersion?: string) => ({
    ...(apiVersion ? { apiVersion, kind: 'ClusterTrustBundle' } : {}),
    metadata: { name, resourceVersion: rv },
    spec: { trustBundle: 'PEM' },
  });
  const notFound = (res: ServerResponse) =>
    res.writeHead(404).end('{"kind":"Status","code":404,"message":"the server could not find the requested resource"}');
  /** A fake API that serves ClusterTrustBundles at the versions `served()` names now. */
  async function start(served: () => string[], items: (version: string) => unknown[]) {
    const paths: string[] = [];
    const f = await fakeApi((req, res, url) => {
      paths.push(`${url.searchParams.get('watch') ? 'watch' : 'list'} ${url.pathname}`);
      const version = /^\/apis\/certificates\.k8s\.io\/(v1\w*)\/clustertrustbundles$/.exec(url.pathname)?.[1];
      if (!version || !served().includes(version)) return notFound(res);
      if (!url.searchParams.get('watch')) return list(res, '7', items(version));
      res.writeHead(200).flushHeaders();
    });
    const events: SourceEvent[] = [];
    const told: (string | undefined)[] = [];
    let synced = 0;
    const r = new Reflector({
      client: kubeClientFor(f.port),
      resource: resourceInfo('ClusterTrustBundle')!,
      source: 'kube',
      emit: (e) => events.push(e),
      onSynced: () => synced++,
      // Said in the stream, so the order against the objects is visible.
      onServed: (v) => {
        told.push(v);
        events.push({ source: 'kube', type: 'synced', kind: `served:${v ?? 'none'}` });
      },
      backoffMs: [20, 100],
      missingRetryMs: 50,
      random: () => 0.5,
    });
    cleanup.push(() => {
      r.stop();
      f.server.closeAllConnections();
      f.server.close();
    });
    r.start();
    return { r, f, paths, events, told, synced: () => synced };
  }

  it('v1 served: listed and watched at v1, told before its objects', async () => {
    const s = await start(
      () => ['v1', 'v1beta1'],
      () => [ctb('roots', '7')],
    );
    await until(() => s.f.watches >= 1);
    expect(s.paths.slice(0, 2)).toEqual([
      'list /apis/certificates.k8s.io/v1/clustertrustbundles',
      'watch /apis/certificates.k8s.io/v1/clustertrustbundles',
    ]);
    expect(s.events.map((e) => `${e.type}:${e.kind}`)).toEqual(['synced:served:v1', 'upsert:ClusterTrustBundle']);
  });

  it('v1 not served: falls back to v1beta1, and stores the objects in the v1 form', async () => {
    const s = await start(
      () => ['v1beta1'],
      () => [ctb('roots', '7', 'certificates.k8s.io/v1beta1')],
    );
    await until(() => s.f.watches >= 1);
    expect(s.paths.slice(0, 3)).toEqual([
      'list /apis/certificates.k8s.io/v1/clustertrustbundles',
      'list /apis/certificates.k8s.io/v1beta1/clustertrustbundles',
      'watch /apis/certificates.k8s.io/v1beta1/clustertrustbundles',
    ]);
    expect(s.told).toEqual(['v1beta1']);
    expect(s.synced()).toBe(1);
    expect(s.events[1]!.object).toMatchObject({ apiVersion: 'certificates.k8s.io/v1', kind: 'ClusterTrustBundle' });
  });

  it('neither served: told so, counted as synced, looked for again, and told when it is served', async () => {
    let versions: string[] = [];
    const s = await start(
      () => versions,
      () => [ctb('roots', '7')],
    );
    await until(() => s.synced() === 1 && s.f.lists >= 4);
    expect(s.told[0]).toBeUndefined();
    expect(s.events.filter((e) => e.type === 'upsert')).toEqual([]);
    versions = ['v1'];
    await until(() => s.events.some((e) => e.type === 'upsert'));
    // The source dedups: the reflector says it at each attempt, v1 before the object it brings.
    expect(new Set(s.told)).toEqual(new Set([undefined, 'v1']));
    expect(s.events.filter((e) => e.kind !== 'served:none').map((e) => `${e.type}:${e.kind}`)).toEqual([
      'synced:served:v1',
      'upsert:ClusterTrustBundle',
    ]);
  });

  it('a watch the server stops serving (404) relists, at the version served now', async () => {
    let versions = ['v1'];
    const s = await start(
      () => versions,
      () => [ctb('roots', '7')],
    );
    await until(() => s.f.watches >= 1);
    versions = ['v1beta1'];
    s.f.server.closeAllConnections(); // the watch breaks; resuming it at v1 gets 404
    await until(() => s.told.includes('v1beta1') && s.paths.at(-1)!.startsWith('watch'));
    expect(s.paths).toContain('list /apis/certificates.k8s.io/v1beta1/clustertrustbundles');
    expect(s.paths.at(-1)).toBe('watch /apis/certificates.k8s.io/v1beta1/clustertrustbundles');
    // The object, unchanged (same resourceVersion), is not emitted again.
    expect(s.events.filter((e) => e.type === 'upsert').length).toBe(1);
  });
});
