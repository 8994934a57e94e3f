import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { EventLogWriter, LogFormatError } from '../src/event-log.js';
import { parseEventLog } from '../src/event-log-reader.js';

describe('event log', () => {
  it('writes a header, events and output lines that parse back', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tp-log-')), 'events.ndjson');
    const w = new EventLogWriter(path, { createdAt: '2026-01-01T00:00:00Z', quietMs: 100, maxDelayMs: 500 });
    w.event({
      seq: 1,
      at: '2026-01-01T00:00:00.000Z',
      source: 'dir',
      type: 'upsert',
      kind: 'Service',
      namespace: 'a',
      name: 's',
      object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'a' } },
    });
    w.event({ seq: 2, at: '2026-01-01T00:00:00.001Z', source: 'dir', type: 'synced', kind: '*' });
    w.output(2, 'abc');
    w.close();
    const text = readFileSync(path, 'utf8');
    expect(JSON.parse(text.split('\n')[0]!)).toMatchObject({ format: 'turnpike.events', version: 1 });
    const log = parseEventLog(text);
    expect(log.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(log.outputs).toEqual([{ type: 'output', seq: 2, hash: 'abc' }]);
  });
  it('an output whose hash comes later is written once it comes, after the events meanwhile, in order', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tp-log-')), 'events.ndjson');
    const w = new EventLogWriter(path, { createdAt: '2026-01-01T00:00:00Z', quietMs: 100, maxDelayMs: 500 });
    const synced = (seq: number) => ({ seq, at: '2026-01-01T00:00:00.000Z', source: 'dir', type: 'synced', kind: '*' });
    const lines = () =>
      readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => JSON.parse(l) as { seq: number; hash?: string })
        .map((l) => (l.hash !== undefined ? `output ${l.seq} ${l.hash}` : `event ${l.seq}`));
    let reads = 0;
    let settle1: (h: string) => void = () => undefined;
    w.event(synced(1) as never);
    w.output(1, { read: () => `read${++reads}`, settled: new Promise((resolve) => (settle1 = resolve)) });
    w.event(synced(2) as never);
    w.output(2, 'given');
    w.event(synced(3) as never);
    // A hash never worked out before close is read then.
    w.output(3, { read: () => `read${++reads}`, settled: new Promise<string>(() => undefined) });
    await Promise.resolve();
    // The line for output 2 waits for the one before it.
    expect(lines()).toEqual(['event 1', 'event 2', 'event 3']);
    settle1('h1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines()).toEqual(['event 1', 'event 2', 'event 3', 'output 1 h1', 'output 2 given']);
    expect(reads).toBe(0);
    w.event(synced(4) as never);
    w.close();
    expect(reads).toBe(1);
    expect(lines()).toEqual([
      'event 1',
      'event 2',
      'event 3',
      'output 1 h1',
      'output 2 given',
      'event 4',
      'output 3 read1',
    ]);
    expect(parseEventLog(readFileSync(path, 'utf8')).outputs.map((o) => o.hash)).toEqual(['h1', 'given', 'read1']);
  });

  it('tolerates a torn last line (a crash mid-write) but not a torn line in the middle', () => {
    const head = '{"format":"turnpike.events","version":1,"createdAt":"x","quietMs":100,"maxDelayMs":500}';
    const ev = '{"seq":1,"at":"2026-01-01T00:00:00.000Z","source":"d","type":"synced","kind":"*"}';
    expect(parseEventLog(`${head}\n${ev}\n{"seq":2,"at`).events).toHaveLength(1);
    expect(() => parseEventLog(`${head}\n{"seq":2,"at\n${ev}\n`, 'x.log')).toThrow(/x.log:2: not a JSON line/);
  });
  it('rejects event numbers that go back (lines reordered or spliced from another log), naming the line', () => {
    const head = '{"format":"turnpike.events","version":1,"createdAt":"x","quietMs":100,"maxDelayMs":500}';
    const ev = (seq: number) =>
      `{"seq":${seq},"at":"2026-01-01T00:00:00.000Z","source":"d","type":"synced","kind":"*"}`;
    expect(() => parseEventLog(`${head}\n${ev(1)}\n${ev(3)}\n${ev(2)}\n`, 'x.log')).toThrow(
      'x.log:4: event 2 comes after event 3; event numbers must increase',
    );
    expect(() => parseEventLog(`${head}\n${ev(1)}\n${ev(1)}\n`, 'x.log')).toThrow(
      /x.log:3: event 1 comes after event 1/,
    );
    expect(parseEventLog(`${head}\n${ev(1)}\n${ev(5)}\n`).events.map((e) => e.seq)).toEqual([1, 5]);
  });
  it('rejects other formats and versions', () => {
    expect(() => parseEventLog('{"format":"other"}\n')).toThrow(LogFormatError);
    expect(() => parseEventLog('{"format":"turnpike.events","version":3}\n')).toThrow(/version 3 is not supported/);
    expect(() => parseEventLog('{"format":"turnpike.events","version":2}\n')).toThrow(/needs run and segment/);
  });
});
