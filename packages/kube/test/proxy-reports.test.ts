// A replica's ProxyReport: written when it changes, coalesced (at most one write per interval), renewed,
// retried when a write fails, deleted on stop; and read back as live only while it is renewed.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import { proxyReportObject, type ProxyReport, type ReportedGateway } from '@turnpike/api';
import type { SourceEvent } from '@turnpike/engine';
import { ProxyReportLiveness, ProxyReportPublisher } from '../src/index.js';
import { kubeClientFor } from './kube-client-for.js';

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Request {
  method: string;
  url: string;
  at: number;
  body?: ProxyReport;
}

/** An API server that records every request to the reports and answers `status()` (200 by default). */
async function reportServer(
  status: () => number = () => 200,
): Promise<{ server: Server; requests: Request[]; port: number }> {
  const requests: Request[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      requests.push({
        method: req.method!,
        url: req.url!,
        at: Date.now(),
        ...(text ? { body: JSON.parse(text) } : {}),
      });
      const code = status();
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(code === 200 ? text || '{}' : JSON.stringify({ kind: 'Status', code, message: 'refused by the test' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, requests, port: (server.address() as { port: number }).port };
}

const gateway = (name: string, connected: number): ReportedGateway => ({
  namespace: 'infra',
  name,
  connected,
  proxies: Array.from({ length: connected }, (_, i) => ({
    id: `${name}-${i}`,
    connectedAt: '2026-12-05T10:00:00.000Z',
  })),
});

describe('ProxyReportPublisher', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0)) await c();
  });

  it('coalesces a burst of changes into at most one write per interval, the last one holding the final content', async () => {
    const { server, requests, port } = await reportServer();
    const client = kubeClientFor(port);
    const p = new ProxyReportPublisher({ client, namespace: 'turnpike-system', replica: 'a', minIntervalMs: 250 });
    cleanup.push(
      () => client.close(),
      () => void server.close(),
    );
    p.start();
    await until(() => requests.length === 1);
    expect(requests[0]).toMatchObject({
      method: 'PATCH',
      url: '/apis/turnpike.dev/v1alpha1/namespaces/turnpike-system/proxyreports/a?fieldManager=turnpike-proxy-report&force=true',
    });
    expect(requests[0]!.body!.spec).toMatchObject({ replica: 'a', leaseDurationSeconds: 15, gateways: [] });
    // 200 changes over ~1 s: a proxy connecting every 5 ms.
    const began = Date.now();
    for (let i = 1; i <= 200; i++) {
      p.set('infra/gw', gateway('gw', i));
      await new Promise((r) => setTimeout(r, 5));
    }
    const spent = Date.now() - began;
    await until(() => requests.at(-1)?.body?.spec.gateways[0]?.connected === 200);
    const writes = requests.slice(1);
    // One per 250 ms at most (the first may follow the initial write by less than that: never closer).
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(spent / 250) + 2);
    for (let i = 1; i < requests.length; i++) expect(requests[i]!.at - requests[i - 1]!.at).toBeGreaterThanOrEqual(240);
    // Nothing changed since: nothing more is written.
    const settled = requests.length;
    p.set('infra/gw', gateway('gw', 200));
    await new Promise((r) => setTimeout(r, 400));
    expect(requests.length).toBe(settled);
    await p.stop();
    expect(requests.at(-1)).toMatchObject({
      method: 'DELETE',
      url: '/apis/turnpike.dev/v1alpha1/namespaces/turnpike-system/proxyreports/a',
    });
  });

  it('renews the report every third of its lease, and retries a failed write until one succeeds', async () => {
    let refuse = 2;
    const { server, requests, port } = await reportServer(() => (refuse-- > 0 ? 500 : 200));
    const client = kubeClientFor(port);
    const p = new ProxyReportPublisher({
      client,
      namespace: 'ns',
      replica: 'b',
      leaseDurationMs: 1500,
      minIntervalMs: 50,
    });
    cleanup.push(async () => {
      await p.stop();
      client.close();
      server.close();
    });
    p.set('infra/gw', gateway('gw', 1));
    p.start();
    // Two refused, then written: the content it was given all along.
    await until(() => p.stats.writes === 1);
    expect(p.stats.failures).toBe(2);
    expect(requests[2]!.body!.spec.gateways).toEqual([gateway('gw', 1)]);
    // Renewed with no change: a newer renewTime, the same Gateways.
    await until(() => p.stats.writes === 3);
    const renewals = requests.slice(2).map((r) => r.body!.spec);
    expect(new Set(renewals.map((s) => s.renewTime)).size).toBe(3);
    for (const s of renewals) expect(s.gateways).toEqual([gateway('gw', 1)]);
  });
});

describe('ProxyReportLiveness', () => {
  const report = (name: string, renewTime: string, gateways: ReportedGateway[] = [gateway('gw', 1)]) =>
    proxyReportObject('turnpike-system', name, gateways, renewTime, 2);
  const upsert = (o: ProxyReport): SourceEvent => ({
    source: 'kube',
    type: 'upsert',
    kind: 'ProxyReport',
    namespace: 'turnpike-system',
    name: o.metadata.name,
    object: o,
  });

  it('passes on a change of Gateways, not a renewal; removes a report not renewed for its lease', async () => {
    const out: SourceEvent[] = [];
    const expired: string[] = [];
    let now = Date.parse('2026-12-05T10:00:00.000Z');
    const l = new ProxyReportLiveness({
      emit: (e) => out.push(e),
      onExpired: (_ns, n) => expired.push(n),
      now: () => now,
    });
    l.accept(upsert(report('a', '2026-12-05T10:00:00.000Z')));
    expect(out.map((e) => e.type)).toEqual(['upsert']);
    // Renewed: the engine hears nothing.
    now += 1000;
    l.accept(upsert(report('a', '2026-12-05T10:00:01.000Z')));
    expect(out).toHaveLength(1);
    // A Gateway's entry changed: passed on.
    l.accept(upsert(report('a', '2026-12-05T10:00:01.000Z', [gateway('gw', 2)])));
    expect(out).toHaveLength(2);
    expect(l.live()).toEqual(['turnpike-system/a']);
    // Not renewed for 2 s by our clock (the timer looks again): removed, and the leader told.
    now += 2000;
    await until(() => out.length === 3, 5000);
    expect(out[2]).toMatchObject({ type: 'delete', kind: 'ProxyReport', name: 'a' });
    expect(expired).toEqual(['a']);
    expect(l.live()).toEqual([]);
    // Renewed again (the replica was only paused): live again, with its Gateways.
    l.accept(upsert(report('a', '2026-12-05T10:00:09.000Z', [gateway('gw', 2)])));
    expect(out[3]).toMatchObject({ type: 'upsert', name: 'a' });
    l.stop();
  });

  it("judges expiry by its own clock, not the writer's, except a report first seen long dead", () => {
    const out: SourceEvent[] = [];
    const expired: string[] = [];
    const now = Date.parse('2026-12-05T12:00:00.000Z');
    const l = new ProxyReportLiveness({
      emit: (e) => out.push(e),
      onExpired: (_ns, n) => expired.push(n),
      now: () => now,
    });
    // A writer whose clock is 1 s behind ours, within the lease: live.
    l.accept(upsert(report('skewed', '2026-12-05T11:59:59.000Z')));
    // A report listed after a restart whose replica stopped renewing an hour ago: gone at once.
    l.accept(upsert(report('dead', '2026-12-05T11:00:00.000Z')));
    expect(out.map((e) => e.name)).toEqual(['skewed']);
    expect(expired).toEqual(['dead']);
    // Deleted: the engine forgets it; a delete of one never passed on says nothing.
    l.accept({ source: 'kube', type: 'delete', kind: 'ProxyReport', namespace: 'turnpike-system', name: 'skewed' });
    l.accept({ source: 'kube', type: 'delete', kind: 'ProxyReport', namespace: 'turnpike-system', name: 'dead' });
    expect(out.map((e) => `${e.type} ${e.name}`)).toEqual(['upsert skewed', 'delete skewed']);
    l.stop();
  });
});
