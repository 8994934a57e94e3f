// An event log keeps of a Secret value only its digest under the recording process's DigestKey (HMAC-SHA256,
// a key per process): the plain sha256 of a value appears nowhere, the same value digests differently in
// two runs, and `replay --verify` still reproduces every output, across segments and a restart (each run's
// segments carry their own key), and on a log written before keys (plain sha256, no key). `diff` across the
// restart compares the certificates, not digests under two keys.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { DIGEST_KEY_KIND, digestKeyObject, type KubeObject } from '@turnpike/api';
import { snapshotFromObjects, translate } from '@turnpike/translator';
import {
  digestKeySource,
  EventLogWriter,
  FlightRecorder,
  lastRecordedSeq,
  readEventLog,
  replaySource,
  segmentFiles,
  synced,
  upsert,
  type SourceEvent,
  type WatchEvent,
} from '@turnpike/engine';
import { VirtualTimeScheduler, type Observable } from 'rxjs';
import { startController } from '../src/controller.js';
import type { EventRecorder } from '../src/console/live-log.js';
import { verifyLog } from '../src/log-state.js';
import { certificateLookup, KEYS_DIFFER_NOTE, semanticDiff } from '../src/semantic-diff.js';
import { turnpike } from './cli-helpers.js';
import {
  EXAMPLE_COM_CERT,
  EXAMPLE_COM_KEY,
  OTHER_TEST_CERT,
  OTHER_TEST_KEY,
} from '../../translator/test/tls-fixtures.js';

const GW = 'gateway.networking.k8s.io/v1';
const TOKEN = 'admin';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const objects = [
  {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'turnpike' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  },
  {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'turnpike',
      listeners: [
        { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } },
        // tls.crt with its key appended: read and digested by its certificate and the value's digest.
        {
          name: 'bundled',
          port: 443,
          protocol: 'HTTPS',
          hostname: 'b.example.com',
          tls: { certificateRefs: [{ name: 'bundled' }] },
        },
      ],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: 'cert', namespace: 'infra' },
    data: { 'tls.crt': b64(EXAMPLE_COM_CERT), 'tls.key': b64(EXAMPLE_COM_KEY) },
  },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: 'bundled', namespace: 'infra' },
    data: { 'tls.crt': b64(EXAMPLE_COM_CERT + EXAMPLE_COM_KEY), 'tls.key': b64(EXAMPLE_COM_KEY) },
  },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'opaque', namespace: 'infra' },
    data: { password: b64(TOKEN) },
  },
] as unknown as KubeObject[];

/** Every value a recorded Secret had: none may show its plain sha256. */
const VALUES = [TOKEN, EXAMPLE_COM_KEY, EXAMPLE_COM_CERT + EXAMPLE_COM_KEY];

const filler = (i: number): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${i % 5}`, namespace: 'app' },
    data: { n: String(i), pad: 'p'.repeat(300) },
  }) as unknown as KubeObject;

/** The objects listed, then fillers and a Secret rotation 200 ms apart, numbered after `firstSeq`. */
function history(firstSeq: number, startMs: number): WatchEvent[] {
  const src: SourceEvent[] = [...objects.map((o) => upsert('dir', o)), synced('dir')];
  for (let i = 0; i < 20; i++) src.push(upsert('dir', filler(i)));
  const rotated = { ...objects[4]!, data: { password: b64(`${TOKEN}-2`) } } as KubeObject;
  src.push(upsert('dir', rotated));
  for (let i = 20; i < 40; i++) src.push(upsert('dir', filler(i)));
  // After the DigestKey, which the controller's own source makes event firstSeq + 1.
  return src.map((e, i) => ({ ...e, seq: firstSeq + 2 + i, at: new Date(startMs + (i + 1) * 200).toISOString() }));
}

/** Runs a controller over the history on virtual time into `recorder`; `keySource`: its DigestKey, if any. */
async function run(recorder: EventRecorder, firstSeq: number, keySource?: Observable<SourceEvent>): Promise<void> {
  const startMs = Date.parse('2026-12-06T14:00:00Z') + firstSeq * 60_000;
  const scheduler = new VirtualTimeScheduler();
  const controller = startController({
    sources: [...(keySource ? [keySource] : []), replaySource(history(firstSeq, startMs), scheduler, startMs)],
    sourceNames: ['dir'],
    sinks: [],
    quietMs: 100,
    maxDelayMs: 500,
    scheduler,
    firstSeq,
    recorder: {
      event: (e) => recorder.event(e),
      // Read at once: on virtual time every hash would otherwise settle after the last event.
      output: (seq, hash) => recorder.output(seq, typeof hash === 'string' ? hash : hash.read()),
      close: () => recorder.close(),
    },
    onError: (where, e) => {
      throw new Error(`${where}: ${e.message}`);
    },
  });
  scheduler.flush();
  await controller.stop();
}

const fileText = (f: string) => (f.endsWith('.gz') ? gunzipSync(readFileSync(f)).toString() : readFileSync(f, 'utf8'));

/** The log's text with every base64 value decoded beside it (redacted markers are base64 in `data`). */
function readable(text: string): string {
  const decoded = [...text.matchAll(/"([A-Za-z0-9+/]{16,}={0,2})"/g)].map((m) =>
    Buffer.from(m[1]!, 'base64').toString(),
  );
  return `${text}\n${decoded.join('\n')}`;
}

/** The markers the log keeps of the opaque Secret's password, in order. */
function passwordMarkers(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.includes('"name":"opaque"'))
    .map((l) =>
      Buffer.from(
        (JSON.parse(l) as { object: { data: { password: string } } }).object.data.password,
        'base64',
      ).toString(),
    );
}

describe('event log digests under a per-run key', () => {
  it('security: no plain sha256 of a value in a recording; two runs digest the same value differently; verify passes across segments and the restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-keyed-'));
    const header = { quietMs: 100, maxDelayMs: 500 };
    const first = new FlightRecorder({ dir, header, segmentBytes: 3_000, compress: true });
    await run(first, 0, digestKeySource(randomBytes(32)));
    await first.idle();
    // A restarted controller: a new run, a new key, numbering on from the last event recorded.
    const firstSeq = lastRecordedSeq(dir);
    const second = new FlightRecorder({ dir, header, segmentBytes: 3_000, compress: true, firstSeq });
    await run(second, firstSeq, digestKeySource(randomBytes(32)));
    await second.idle();

    const files = segmentFiles(dir);
    const runs = new Map<string, string[]>();
    for (const f of files) {
      const text = fileText(f);
      const runId = (JSON.parse(text.split('\n', 1)[0]!) as { run: string }).run;
      runs.set(runId, [...(runs.get(runId) ?? []), text]);
      // Each segment carries the key its values were digested under (its checkpoint, or its first event).
      expect(text).toContain(`"kind":"${DIGEST_KEY_KIND}"`);
      const seen = readable(text);
      for (const v of VALUES) expect(seen).not.toContain(sha256(v));
      expect(seen).not.toContain('PRIVATE KEY');
    }
    expect(runs.size).toBe(2);
    expect(files.length).toBeGreaterThanOrEqual(4);
    const [a, b] = [...runs.values()].map((texts) => passwordMarkers(texts.join('\n'))[0]!);
    expect(a).toMatch(/^turnpike-redacted:hmac-sha256=[0-9a-f]{64}$/);
    expect(b).toMatch(/^turnpike-redacted:hmac-sha256=[0-9a-f]{64}$/);
    expect(a).not.toBe(b);

    const log = readEventLog(dir);
    expect(log.checkpoints!.filter((c) => c.gap).map((c) => c.gap!.reason)).toEqual(['restart']);
    const verified = verifyLog(log);
    expect(verified.divergence).toBeUndefined();
    expect(verified.checked).toBeGreaterThanOrEqual(4);

    // The same objects at the end of each run: `diff` sees no change, though the digests are under two keys.
    const lastOf = (run: string) => Math.max(...log.segments!.filter((g) => g.run === run).map((g) => g.lastSeq ?? 0));
    const [runA, runB] = [...new Set(log.segments!.map((g) => g.run))];
    const diff = turnpike('diff', `${dir}@${lastOf(runA!)}`, `${dir}@${lastOf(runB!)}`);
    expect([diff.code, diff.stdout]).toEqual([0, `no differences\nnote: ${KEYS_DIFFER_NOTE}\n`]);
  });

  it('a log written before keys (plain sha256 markers, no DigestKey) still verifies', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tp-keyless-')), 'events.ndjson');
    await run(new EventLogWriter(file, { createdAt: '2026-12-06T14:00:00.000Z', quietMs: 100, maxDelayMs: 500 }), 0);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(DIGEST_KEY_KIND);
    // The marker such logs hold, spelled out as the recorder wrote it before keys.
    expect(passwordMarkers(text)[0]).toBe(`turnpike-redacted:sha256=${sha256(TOKEN)}`);
    const verified = verifyLog(readEventLog(file));
    expect(verified.divergence).toBeUndefined();
    expect(verified.checked).toBeGreaterThanOrEqual(2);
  });

  it('diff under two keys: a certificate replaced is still told, by its certificate; the same content is no change', () => {
    const at = (crt: string, key: string, digestKey: Buffer) => {
      const secret = { ...objects[2]!, data: { 'tls.crt': b64(crt), 'tls.key': b64(key) } } as KubeObject;
      const all = [...objects.slice(0, 2), secret, digestKeyObject(digestKey)];
      return { result: translate(snapshotFromObjects(all)), certificates: certificateLookup(all) };
    };
    const diff = (a: ReturnType<typeof at>, b: ReturnType<typeof at>) =>
      semanticDiff(a.result, b.result, { before: a.certificates, after: b.certificates, keysDiffer: true });
    const before = at(EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, randomBytes(32));
    expect(diff(before, at(EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, randomBytes(32))).same).toBe(true);
    const replaced = diff(before, at(OTHER_TEST_CERT, OTHER_TEST_KEY, randomBytes(32)));
    expect(replaced.xds.flatMap((g) => g.certificates.map((c) => [c.secret, c.change]))).toEqual([
      ['infra/cert', 'changed'],
    ]);
  });
});
