// A large directory's first scan is read on worker threads; what comes out must be exactly what the
// main thread reads itself: the same objects, refusals, parse errors and warnings, in the same order.
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SourceEvent } from '../src/events.js';
import { directorySource, type DirectorySourceOptions } from '../src/sources/directory.js';
import { readManifestFile } from '../src/sources/manifest-file.js';
import { manifestReadPoolAvailable, readManifestFiles } from '../src/sources/manifest-read-pool.js';

// Tests run from the TypeScript sources; a worker runs the compiled one (`pnpm run build` comes first).
const WORKER = new URL('../dist/sources/manifest-read-worker.js', import.meta.url);
const OPTIONS = { defaultNamespace: 'default', validation: 'strict' } as const;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const gateway = (name: string, port: number | string) =>
  `apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: ${name}, namespace: infra}\n` +
  `spec: {gatewayClassName: turnpike, listeners: [{name: http, port: ${port}, protocol: HTTP}]}\n`;
const route = (name: string, ns?: string) =>
  `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: ${name}${ns ? `, namespace: ${ns}` : ''}}\n` +
  `spec: {parentRefs: [{name: gw, namespace: infra}], rules: [{backendRefs: [{name: app, port: 8080}]}]}\n`;

/** Files with every kind of outcome a read can have. */
function mixedDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'turnpike-pool-'));
  dirs.push(dir);
  const files: Record<string, string> = {
    'a-gateways.yaml': [gateway('gw', 80), gateway('bad-port', 70000), gateway('gw', 81)].join('---\n'),
    'b-routes.yaml': Array.from({ length: 40 }, (_, i) => route(`r${i}`, i % 2 ? 'apps' : undefined)).join('---\n'),
    'c-broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n',
    'd-unknown.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n',
    'e-again.yaml': route('r1', 'apps') + '---\n' + route('fresh', 'apps'),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function firstScan(dir: string, parallelRead: DirectorySourceOptions['parallelRead']) {
  const events: SourceEvent[] = [];
  const said: string[] = [];
  let synced!: () => void;
  const done = new Promise<void>((resolve) => (synced = resolve));
  const sub = directorySource(dir, {
    pollMs: 3_600_000,
    parallelRead,
    now: () => '2026-01-01T00:00:00Z',
    onError: (m) => said.push(`error ${m}`),
    onWarning: (m) => said.push(`warning ${m}`),
  }).subscribe((e) => {
    if (e.type === 'synced') synced();
    else events.push(e);
  });
  const atOnce = events.length;
  await done;
  sub.unsubscribe();
  return { events, said, atOnce };
}

describe('manifest read pool', () => {
  it('the compiled worker is there to test against', () => {
    expect(manifestReadPoolAvailable(WORKER)).toBe(true);
  });

  it('reads each file as the main thread does: objects, namespaces, refusals and parse errors', async () => {
    const dir = mixedDirectory();
    const files = ['a-gateways.yaml', 'b-routes.yaml', 'c-broken.yaml', 'd-unknown.yaml'].map((f) => join(dir, f));
    const pooled = await readManifestFiles(
      files.map((file) => ({ file, size: 1 })),
      OPTIONS,
      { workers: 2, workerUrl: WORKER },
    );
    expect([...pooled.keys()].sort()).toEqual(files);
    for (const file of files) expect(pooled.get(file)).toEqual(readManifestFile(file, OPTIONS));
    expect(pooled.get(files[2]!)).toEqual({ error: expect.stringContaining('c-broken.yaml:') });
    const refused = (pooled.get(files[0]!) as { objects: { refusal?: string }[] }).objects[1]!.refusal;
    expect(refused).toContain('spec.listeners[0].port: 70000 is above the maximum 65535');
  });

  it('a directory read on workers emits the same events, problems and warnings as one read inline', async () => {
    const dir = mixedDirectory();
    const inline = await firstScan(dir, false);
    const pooled = await firstScan(dir, { minBytes: 0, workerUrl: WORKER });
    // Inline, the first scan is done before subscribe returns; on workers, it comes later.
    expect(inline.atOnce).toBe(inline.events.length);
    expect(pooled.atOnce).toBe(0);
    expect(pooled.events).toEqual(inline.events);
    expect(pooled.said).toEqual(inline.said);
    const upserts = inline.events.filter((e) => e.type === 'upsert').map((e) => `${e.namespace ?? ''}/${e.name}`);
    expect(upserts).toContain('default/r0');
    expect(upserts).toContain('apps/fresh');
    expect(upserts).not.toContain('infra/bad-port');
    expect(inline.said.join('\n')).toMatch(/c-broken\.yaml:\d+:\d+: YAML syntax error/);
    expect(inline.said.join('\n')).toMatch(/e-again\.yaml: HTTPRoute\/apps\/r1 is defined twice \(first in .*b-routes/);
  });

  it('hands over each reading as it comes in, before the last one, and the scan emits frozen objects', async () => {
    const dir = mixedDirectory();
    const files = ['a-gateways.yaml', 'b-routes.yaml', 'c-broken.yaml', 'd-unknown.yaml'].map((f) => join(dir, f));
    const seen: string[] = [];
    let settled = false;
    const reading = readManifestFiles(
      files.map((file) => ({ file, size: 1 })),
      OPTIONS,
      { workers: 1, workerUrl: WORKER, onReading: (file) => seen.push(`${file}${settled ? ' late' : ''}`) },
    ).then((r) => ((settled = true), r));
    const pooled = await reading;
    expect(seen.sort()).toEqual(files);
    for (const file of files) expect(pooled.get(file)).toEqual(readManifestFile(file, OPTIONS));
    const { events } = await firstScan(dir, { minBytes: 0, workerUrl: WORKER });
    const objects = events.flatMap((e) => (e.type === 'upsert' && e.object ? [e.object] : []));
    expect(objects.length).toBeGreaterThan(40);
    // What the store holds is frozen deep down; the parts a scan shares with the reading already are.
    for (const o of objects) expect(Object.isFrozen(o.spec)).toBe(true);
  });

  it('a worker that dies leaves its files to the main thread: every file is still read', async () => {
    const dir = mixedDirectory();
    const dying = join(dir, 'dying-worker.mjs');
    writeFileSync(dying, 'process.exit(3);\n');
    const files = ['a-gateways.yaml', 'b-routes.yaml', 'c-broken.yaml'].map((f) => join(dir, f));
    const read = await readManifestFiles(
      files.map((file) => ({ file, size: 1 })),
      OPTIONS,
      { workers: 2, workerUrl: pathToFileURL(dying) },
    );
    for (const file of files) expect(read.get(file)).toEqual(readManifestFile(file, OPTIONS));
    // With no main thread reading beside them, what dead workers left is read all the same.
    // (One worker holds two files at a time: the others are still queued when it dies.)
    const more = ['a-gateways.yaml', 'b-routes.yaml', 'c-broken.yaml', 'd-unknown.yaml'].map((f) => join(dir, f));
    const alone = await readManifestFiles(
      more.map((file) => ({ file, size: 1 })),
      OPTIONS,
      { workers: 1, workerUrl: pathToFileURL(dying), mainThread: false },
    );
    for (const file of more) expect(alone.get(file)).toEqual(readManifestFile(file, OPTIONS));
  });
});
