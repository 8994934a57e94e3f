// The log tools on a flight recording: each segment replays and verifies alone, bisect finds a change
// in the middle one of three, a moment is rebuilt from the nearest checkpoint and equals the state a
// whole-log walk gives, and a recorder whose disk is full never stops the controller.
import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { objectKey, type KubeObject } from '@turnpike/api';
import {
  EventLogWriter,
  FlightRecorder,
  readEventLog,
  remove,
  replaySource,
  segmentFiles,
  synced,
  upsert,
  type EngineOutput,
  type RecorderFs,
  type SourceEvent,
  type WatchEvent,
} from '@turnpike/engine';
import { Subject, VirtualTimeScheduler } from 'rxjs';
import { startController } from '../src/controller.js';
import { stateAt, verifyLog } from '../src/log-state.js';
import { bisectLog } from '../src/commands/bisect.js';
import { LogCheckpoints } from '../src/log-checkpoints.js';
import { ConsoleData } from '../src/console/console-data.js';
import { turnpike } from './cli-helpers.js';

const GW = 'gateway.networking.k8s.io/v1';
const objects = {
  gatewayClass: {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'turnpike' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  },
  gateway: {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'turnpike',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
    },
  },
  service: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'app' },
    spec: { ports: [{ port: 8080, protocol: 'TCP' }] },
  },
  route: {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name: 'web', namespace: 'app' },
    spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] },
  },
} as unknown as Record<string, KubeObject>;

const filler = (i: number): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${i % 5}`, namespace: 'app' },
    data: { n: String(i), pad: 'p'.repeat(300) },
  }) as unknown as KubeObject;

/** A history: set-up, 30 fillers, the Service deleted, 30 fillers, the Service back, 30 fillers; 200 ms apart. */
function history(): WatchEvent[] {
  const src: SourceEvent[] = [
    upsert('dir', objects.gatewayClass!),
    upsert('dir', objects.gateway!),
    upsert('dir', objects.service!),
    upsert('dir', objects.route!),
    synced('dir'),
  ];
  for (let i = 0; i < 30; i++) src.push(upsert('dir', filler(i)));
  src.push(remove('dir', 'Service', 'app', 'web'));
  for (let i = 30; i < 60; i++) src.push(upsert('dir', filler(i)));
  src.push(upsert('dir', objects.service!));
  for (let i = 60; i < 90; i++) src.push(upsert('dir', filler(i)));
  const start = Date.parse('2026-12-06T14:00:00Z');
  return src.map((e, i) => ({ ...e, seq: i + 1, at: new Date(start + i * 200).toISOString() }));
}

const ROUTE_KEY = objectKey('HTTPRoute', 'app', 'web');

/** Runs the history through the controller on virtual time, into a flight recorder and a version-1 log. */
async function record(segmentBytes: number): Promise<{ dir: string; v1: string; deleteSeq: number }> {
  const events = history();
  const dir = mkdtempSync(join(tmpdir(), 'tp-flight-'));
  const v1 = join(dir, '..', `${dir.split('/').pop()}-v1.ndjson`);
  const scheduler = new VirtualTimeScheduler();
  const start = Date.parse(events[0]!.at);
  const header = { quietMs: 100, maxDelayMs: 500 };
  const recorder = new FlightRecorder({
    dir,
    header,
    segmentBytes,
    compress: true,
    now: () => start + scheduler.now(),
  });
  const writer = new EventLogWriter(v1, { createdAt: events[0]!.at, ...header });
  const controller = startController({
    sources: [replaySource(events, scheduler, start)],
    sourceNames: ['dir'],
    sinks: [],
    quietMs: 100,
    maxDelayMs: 500,
    scheduler,
    recorder: {
      event: (e) => (recorder.event(e), writer.event(e)),
      // Read at once: on virtual time every hash would otherwise settle after the last event, into the last segment.
      output: (seq, hash) => {
        const h = typeof hash === 'string' ? hash : hash.read();
        recorder.output(seq, h);
        writer.output(seq, h);
      },
      close: () => (recorder.close(), writer.close()),
    },
    onError: (where, e) => {
      throw new Error(`${where}: ${e.message}`);
    },
  });
  scheduler.flush();
  await controller.stop();
  await recorder.idle();
  return { dir, v1, deleteSeq: events.find((e) => e.type === 'delete')!.seq };
}

describe('flight recording: the log tools on segments', () => {
  it('each segment replays alone, and replay --verify passes on it', async () => {
    const { dir, deleteSeq } = await record(4_000);
    const files = segmentFiles(dir);
    expect(files.length).toBeGreaterThanOrEqual(3);
    let checked = 0;
    for (const f of files) {
      const r = verifyLog(readEventLog(f));
      expect(r.divergence).toBeUndefined();
      checked += r.checked;
    }
    expect(checked).toBeGreaterThan(0);
    // The built CLI on the segment where the Service went (not the first): gzipped, from its checkpoint.
    const middle = files.find((f) => {
      const s = readEventLog(f).segments![0]!;
      return s.firstSeq! <= deleteSeq && deleteSeq <= s.lastSeq!;
    })!;
    expect(middle).not.toBe(files[0]);
    const cli = turnpike('replay', middle, '--verify');
    expect(cli.stderr).toMatch(/verified [1-9]\d* output\(s\) .*: identical/);
    expect(cli.code).toBe(0);
  });

  it('bisect over three segments finds the change in the middle one', async () => {
    const { dir, deleteSeq } = await record(6_000);
    const log = readEventLog(dir);
    expect(log.segments!.length).toBeGreaterThanOrEqual(3);
    const holding = log.segments!.findIndex((s) => s.firstSeq! <= deleteSeq && deleteSeq <= s.lastSeq!);
    expect(holding).toBeGreaterThan(0);
    expect(holding).toBeLessThan(log.segments!.length - 1);
    const r = bisectLog(log, ROUTE_KEY, 'ResolvedRefs', 'False');
    expect(r.found?.event.seq).toBe(deleteSeq);
    expect(r.found?.after[0]?.reason).toBe('BackendNotFound');
    // Searched from a time inside the middle segment, it starts at its checkpoint and still finds it.
    const since = log.events.find((e) => e.seq === log.segments![holding]!.firstSeq)!.seq;
    expect(bisectLog(log, ROUTE_KEY, 'ResolvedRefs', 'False', { since }).found?.event.seq).toBe(deleteSeq);
  });

  it('a moment is rebuilt from the nearest checkpoint and equals the whole-log walk', async () => {
    const { dir, v1, deleteSeq } = await record(4_000);
    const segmented = readEventLog(dir);
    const whole = readEventLog(v1);
    expect(whole.header.version).toBe(1);
    for (const seq of [5, deleteSeq, deleteSeq + 10, segmented.events.at(-1)!.seq])
      expect(stateAt(segmented, seq).hash).toBe(stateAt(whole, seq).hash);
    // The console's index of states agrees at every event.
    const cps = new LogCheckpoints(segmented, 7);
    const ref = new LogCheckpoints(whole, 7);
    const offset = whole.events.findIndex((e) => e.seq === segmented.events[0]!.seq);
    for (let i = 0; i < segmented.events.length; i += 5) expect(cps.after(i)).toEqual(ref.after(i + offset));
  });

  it('a pruned start and a paused stretch show as gaps; the tools start again from the checkpoint after each', async () => {
    const { dir, deleteSeq } = await record(4_000);
    const files = segmentFiles(dir);
    // Remove the first segment and one in the middle (as retention and a failed write would).
    const middle = files.findIndex((f) => {
      const s = readEventLog(f).segments![0]!;
      return s.firstSeq! > deleteSeq + 5;
    });
    fs.rmSync(files[0]!);
    fs.rmSync(files[middle]!);
    const log = readEventLog(dir);
    const gaps = log.checkpoints!.filter((c) => c.gap).map((c) => c.gap!.reason);
    expect(gaps).toEqual(['before-log', 'pruned']);
    expect(verifyLog(log).divergence).toBeUndefined();
    const end = log.events.at(-1)!.seq;
    expect(stateAt(log, end).result.statuses.get(ROUTE_KEY)).toBeDefined();
    // The console's timeline: the gaps listed (with the checkpoint to jump to), shaded and bounded.
    const data = new ConsoleData(() => log);
    const summary = data.summary();
    expect(summary.gaps!.map((g) => g.reason)).toEqual(['before-log', 'pruned']);
    const pruned = summary.gaps![1]!;
    expect(pruned.from! < pruned.to).toBe(true);
    expect(log.checkpoints!.some((c) => c.seq === pruned.seq && c.gap?.reason === 'pruned')).toBe(true);
    const density = data.density(60);
    expect(density.gaps.some((g) => g === 1)).toBe(true);
    expect(density.boundaries.filter((b) => b === 1).length).toBeGreaterThan(0);
    expect(summary.segments!.length).toBe(log.segments!.length);
  });

  it('a full disk: the controller goes on translating and its sinks (the status writer) get every change', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-flight-full-'));
    const full: RecorderFs = {
      openSync: (p, f, m) => fs.openSync(p, f, m),
      closeSync: (fd) => fs.closeSync(fd),
      writeSync: () => {
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      },
    };
    const warnings: string[] = [];
    const recorder = new FlightRecorder({
      dir,
      header: { quietMs: 5, maxDelayMs: 20 },
      fs: full,
      log: (_l, m) => warnings.push(m),
    });
    const input = new Subject<SourceEvent>();
    const seen: EngineOutput[] = [];
    const controller = startController({
      sources: [input],
      sourceNames: ['dir'],
      sinks: [{ name: 'statuses', accept: (out) => void seen.push(out) }],
      quietMs: 5,
      maxDelayMs: 20,
      recorder,
      onError: (where, e) => {
        throw new Error(`${where}: ${e.message}`);
      },
    });
    try {
      for (const o of Object.values(objects)) input.next(upsert('dir', o));
      input.next(synced('dir'));
      const accepted = () => seen.at(-1)?.result.statuses.get(ROUTE_KEY);
      await waitFor(() => accepted() !== undefined);
      input.next(remove('dir', 'Service', 'app', 'web'));
      await waitFor(() => JSON.stringify(accepted()).includes('BackendNotFound'));
      expect(recorder.stats.recording).toBe(false);
      expect(recorder.stats.writeFailures).toBeGreaterThanOrEqual(1);
      expect(warnings.join('\n')).toMatch(/ENOSPC/);
    } finally {
      await controller.stop();
    }
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}
