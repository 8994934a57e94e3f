import * as fs from 'node:fs';
import { mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { FlightRecorder, type RecorderFs } from '../src/flight-recorder/segment-recorder.js';
import { lastRecordedSeq, readEventLog, segmentFiles } from '../src/event-log-reader.js';
import type { WatchEvent } from '../src/events.js';

const header = { quietMs: 100, maxDelayMs: 500 };
const dir = () => mkdtempSync(join(tmpdir(), 'tp-rec-'));

function svc(name: string, extra = ''): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'a', annotations: { pad: extra } },
  } as KubeObject;
}

let clock = Date.parse('2026-12-06T10:00:00Z');
const at = () => new Date(clock).toISOString();
function upsert(seq: number, o: KubeObject): WatchEvent {
  return {
    seq,
    at: at(),
    source: 'kube',
    type: 'upsert',
    kind: o.kind,
    namespace: 'a',
    name: o.metadata.name,
    object: o,
  };
}
function del(seq: number, name: string): WatchEvent {
  return { seq, at: at(), source: 'kube', type: 'delete', kind: 'Service', namespace: 'a', name };
}

describe('flight recorder', () => {
  it('rotates by size: every segment starts with a checkpoint of the store, and the segments join back', async () => {
    const d = dir();
    const r = new FlightRecorder({ dir: d, header, segmentBytes: 2_000, compress: false, now: () => clock });
    for (let i = 1; i <= 40; i++) r.event(upsert(i, svc(`s${i % 7}`, 'x'.repeat(100))));
    r.event(del(41, 's3'));
    r.close();
    await r.idle();
    const files = segmentFiles(d);
    expect(files.length).toBeGreaterThan(3);
    const log = readEventLog(d);
    expect(log.events.map((e) => e.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    expect(log.checkpoints!.filter((c) => c.gap)).toEqual([]);
    // Each segment alone holds the store as it was: its checkpoint plus its events.
    for (const f of files) {
      const one = readEventLog(f);
      const cp = one.checkpoints![0]!;
      const names = new Set(cp.objects.map((o) => o.metadata.name));
      const expected = new Set<string>();
      for (const e of log.events.filter((e) => e.seq <= cp.seq)) {
        if (e.type === 'delete') expected.delete(e.name!);
        else expected.add(e.name!);
      }
      expect(names).toEqual(expected);
      expect(one.segments![0]!.closed).toBe(true);
    }
  });

  it('rotates by age, and an idle controller closes its segment when it is due', async () => {
    const d = dir();
    const r = new FlightRecorder({ dir: d, header, segmentAgeMs: 60_000, compress: false, now: () => clock });
    r.event(upsert(1, svc('a')));
    clock += 30_000;
    r.event(upsert(2, svc('b')));
    expect(segmentFiles(d)).toHaveLength(1);
    clock += 31_000;
    r.event(upsert(3, svc('c')));
    expect(segmentFiles(d)).toHaveLength(2);
    const second = readEventLog(segmentFiles(d)[1]!);
    expect(second.checkpoints![0]!.seq).toBe(3);
    expect(second.checkpoints![0]!.objects.map((o) => o.metadata.name).sort()).toEqual(['a', 'b', 'c']);
    r.close();
    await r.idle();
  });

  it('gzips closed segments and keeps the total under the byte budget, oldest first', async () => {
    const d = dir();
    const r = new FlightRecorder({
      dir: d,
      header,
      segmentBytes: 4_000,
      retainBytes: 6_000,
      now: () => clock,
    });
    // Incompressible padding, so each closed segment still weighs about its size.
    const noise = (i: number) =>
      Buffer.from(Array.from({ length: 600 }, (_, k) => (i * 7919 + k * 104729) % 251)).toString('base64');
    for (let i = 1; i <= 80; i++) r.event(upsert(i, svc(`s${i % 3}`, noise(i))));
    await r.idle();
    const files = segmentFiles(d);
    const closed = files.slice(0, -1).reduce((n, f) => n + statSync(f).size, 0);
    expect(r.stats.segmentsPruned).toBeGreaterThan(0);
    expect(closed).toBeLessThanOrEqual(6_000);
    expect(files.slice(0, -1).every((f) => f.endsWith('.gz'))).toBe(true);
    // What is left still reads: it starts at a checkpoint that says the time before it is pruned.
    r.event(upsert(81, svc('s1')));
    const log = readEventLog(d);
    expect(log.checkpoints![0]!.gap?.reason).toBe('before-log');
    expect(log.events.at(-1)!.seq).toBe(81);
    r.close();
    await r.idle();
  });

  it('removes closed segments older than the age budget', async () => {
    const d = dir();
    const r = new FlightRecorder({ dir: d, header, segmentBytes: 500, retainAgeMs: 3_600_000, now: () => clock });
    for (let i = 1; i <= 10; i++) r.event(upsert(i, svc(`s${i}`, 'y'.repeat(300))));
    await r.idle();
    const before = segmentFiles(d);
    const old = before[0]!;
    utimesSync(old, new Date(clock - 7_200_000), new Date(clock - 7_200_000));
    clock += 1;
    r.event(upsert(11, svc('z', 'y'.repeat(600))));
    await r.idle();
    expect(segmentFiles(d)).not.toContain(old);
    r.close();
    await r.idle();
  });

  it('reads a closed segment whose last line is torn, and refuses one torn in the middle', () => {
    const d = dir();
    const r = new FlightRecorder({ dir: d, header, compress: false, now: () => clock });
    r.event(upsert(1, svc('a')));
    r.event(upsert(2, svc('b')));
    r.close();
    const file = segmentFiles(d)[0]!;
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, `${text}{"seq":3,"at":"2026`);
    expect(readEventLog(file).events.map((e) => e.seq)).toEqual([1, 2]);
    const lines = text.trimEnd().split('\n');
    lines.splice(3, 0, '{"seq":2,"at');
    writeFileSync(file, `${lines.join('\n')}\n`);
    expect(() => readEventLog(file)).toThrow(/:4: not a JSON line/);
  });

  it('a full disk pauses recording with a warning, frees the oldest segment, and resumes with a checkpoint', async () => {
    const d = dir();
    let full = false;
    const failing: RecorderFs = {
      openSync: (p, f, m) => fs.openSync(p, f, m),
      closeSync: (fd) => fs.closeSync(fd),
      writeSync: (fd, text) => {
        if (full) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
        return fs.writeSync(fd, text);
      },
    };
    const warnings: string[] = [];
    const r = new FlightRecorder({
      dir: d,
      header,
      segmentBytes: 600,
      compress: false,
      now: () => clock,
      fs: failing,
      log: (_l, m) => warnings.push(m),
    });
    for (let i = 1; i <= 6; i++) r.event(upsert(i, svc(`s${i}`, 'z'.repeat(200))));
    await r.idle();
    const segmentsBefore = segmentFiles(d).length;
    full = true;
    expect(() => r.event(upsert(7, svc('s7')))).not.toThrow();
    expect(r.stats.recording).toBe(false);
    expect(r.stats.writeFailures).toBe(1);
    expect(warnings.join('\n')).toMatch(/ENOSPC.*recording paused/);
    await r.idle();
    expect(r.stats.segmentsPruned).toBeGreaterThanOrEqual(1);
    expect(segmentFiles(d).length).toBeLessThan(segmentsBefore + 1);
    // While paused, events are not written but the store keeps up.
    full = false;
    r.event(del(8, 's1'));
    expect(r.stats.recording).toBe(false);
    clock += 6_000;
    r.event(upsert(9, svc('s9')));
    expect(r.stats.recording).toBe(true);
    r.close();
    await r.idle();
    const log = readEventLog(d);
    const resumed = log.checkpoints!.at(-1)!;
    expect(resumed.gap?.reason).toBe('paused');
    expect(resumed.seq).toBe(8);
    expect(resumed.objects.map((o) => o.metadata.name).sort()).toEqual(['s2', 's3', 's4', 's5', 's6', 's7']);
    expect(log.events.at(-1)!.seq).toBe(9);
  });

  it('writes a large checkpoint in slices between events, which wait and follow it in order', async () => {
    const d = dir();
    const r = new FlightRecorder({
      dir: d,
      header,
      segmentBytes: 1_000_000,
      checkpointSliceBytes: 2_000,
      compress: false,
      now: () => clock,
    });
    for (let i = 1; i <= 300; i++) r.event(upsert(i, svc(`s${i}`, 'q'.repeat(50))));
    r.close();
    await r.idle();
    const d2 = dir();
    const r2 = new FlightRecorder({
      dir: d2,
      header,
      segmentBytes: 30_000,
      checkpointSliceBytes: 2_000,
      compress: false,
      now: () => clock,
    });
    for (let i = 1; i <= 300; i++) r2.event(upsert(i, svc(`s${i}`, 'q'.repeat(50))));
    // The rotation's checkpoint is not all written at once: events arrive while it is.
    expect(r2.stats.recording).toBe(true);
    await new Promise<void>((resolve) => {
      const check = () => (r2.stats.lastCheckpointObjects > 0 ? resolve() : setImmediate(check));
      check();
    });
    r2.event(upsert(301, svc('last')));
    r2.close();
    await r2.idle();
    const log = readEventLog(d2);
    expect(log.events.map((e) => e.seq)).toEqual(Array.from({ length: 301 }, (_, i) => i + 1));
    expect(log.checkpoints!.filter((c) => c.gap)).toEqual([]);
  });

  it('keeps a Secret in a checkpoint without its private values', async () => {
    const d = dir();
    const r = new FlightRecorder({ dir: d, header, segmentBytes: 100, compress: false, now: () => clock });
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: 'a' },
      data: { password: Buffer.from('hunter2-very-secret').toString('base64') },
    } as unknown as KubeObject;
    r.event(upsert(1, secret));
    r.event(upsert(2, svc('b', 'x'.repeat(200))));
    r.close();
    await r.idle();
    const files = segmentFiles(d);
    const second = readEventLog(files.at(-1)!);
    const kept = second.checkpoints![0]!.objects.find((o) => o.kind === 'Secret')!;
    expect(kept).toBeDefined();
    const raw = files.map((f) => readFileSync(f, 'utf8')).join('');
    expect(raw).not.toContain(Buffer.from('hunter2-very-secret').toString('base64'));
    expect(raw).not.toContain('hunter2');
  });

  it('a restarted controller finds the last number recorded, and its segments join after a restart gap', async () => {
    const d = dir();
    const r = new FlightRecorder({ dir: d, header, now: () => clock });
    r.event(upsert(1, svc('a')));
    r.event(upsert(2, svc('b')));
    // A crash: the open segment is never closed.
    expect(lastRecordedSeq(d)).toBe(2);
    clock += 1_000;
    const r2 = new FlightRecorder({ dir: d, header, firstSeq: lastRecordedSeq(d), now: () => clock });
    await r2.idle();
    // The segment the crashed run left open is compressed now.
    expect(readdirSync(d).filter((f) => f.endsWith('.ndjson.gz'))).toHaveLength(1);
    expect(gunzipSync(readFileSync(segmentFiles(d)[0]!)).toString()).toContain('"seq":2');
    r2.event(upsert(3, svc('a')));
    r2.close();
    await r2.idle();
    const log = readEventLog(d);
    expect(log.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(log.checkpoints![1]!.gap).toMatchObject({ reason: 'restart', afterSeq: 2 });
    expect(log.segments!.map((s) => s.closed)).toEqual([false, true]);
  });
});
