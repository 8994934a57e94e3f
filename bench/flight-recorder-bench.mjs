#!/usr/bin/env node
// The flight recorder's costs, in process, on the synthetic cluster (bench/synthetic-cluster.mjs):
//   record      CPU the recorder spends per EndpointSlice update (upsert of a 3-endpoint slice of a
//               10k-route store), and so its share of a core at --rate updates per second; bytes per
//               hour at that rate, written and after gzip
//   checkpoint  the checkpoint of a 10k- and a 100k-route store: objects, bytes, time from rotation to
//               its last object, and the longest the event loop was held by one slice meanwhile
//   capture     a capture of about --capture-mib MiB served over loopback HTTP by the controller's own
//               endpoint code (writeCapture) and written to a file, as `turnpike capture` does
//   replay      a moment late in one hour of recording at --rate: the state from the nearest
//               checkpoint (storeAt) and its translation, at 10k routes
//   pnpm bench:recorder [--rate 500] [--capture-mib 256] [--skip-100k]
import { copyFileSync, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { FlightRecorder, readEventLog, segmentFiles, upsert, writeCapture } from '../packages/engine/dist/index.js';
import { storeAt } from '../packages/cli/dist/log-state.js';
import { Translator } from '../packages/translator/dist/index.js';
import { syntheticCluster, syntheticSlice } from './synthetic-cluster.mjs';

const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const rate = Number(opt('--rate', '500'));
const captureMib = Number(opt('--capture-mib', '256'));
const MiB = 1024 * 1024;
const log = (s) => process.stdout.write(`${s}\n`);
const header = { quietMs: 100, maxDelayMs: 500, source: 'bench' };

let seq = 0;
let clock = Date.parse('2026-12-06T12:00:00Z');
const stamp = (e) => ({ ...e, seq: ++seq, at: new Date(clock).toISOString() });
const idle = () => new Promise((r) => setImmediate(r));

function load(recorder, objects) {
  for (const o of objects) recorder.event(stamp(upsert('kube', o)));
}

/** A checkpoint of `routes` routes: rotation forced by age, then slices until it is written. */
async function checkpoint(routes) {
  const dir = mkdtempSync(join(tmpdir(), 'tp-rec-bench-'));
  const objects = syntheticCluster(routes);
  const r = new FlightRecorder({ dir, header, compress: false, segmentAgeMs: 3_600_000, now: () => clock });
  load(r, objects);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  clock += 3_600_001;
  const started = performance.now();
  loop.enable();
  // The rotation starts at the next event; events keep arriving while the checkpoint is written.
  const teams = Math.max(1, Math.round(routes / 50));
  let during = 0;
  r.event(stamp(upsert('kube', syntheticSlice(0, 'v1', teams, 4))));
  while (r.stats.lastCheckpointObjects === 0) {
    r.event(stamp(upsert('kube', syntheticSlice(during++ % routes, 'v2', teams, 4))));
    await idle();
  }
  const ms = performance.now() - started;
  loop.disable();
  r.close();
  await r.idle();
  const file = segmentFiles(dir).at(-1);
  const result = {
    routes,
    objects: r.stats.lastCheckpointObjects,
    mib: +(r.stats.lastCheckpointBytes / MiB).toFixed(1),
    gzipMib: +(gzipSync(readFileSync(file)).length / MiB).toFixed(1),
    ms: Math.round(ms),
    eventsMeanwhile: during,
    maxLoopBlockMs: +(loop.max / 1e6).toFixed(1),
  };
  rmSync(dir, { recursive: true, force: true });
  return result;
}

/** CPU per EndpointSlice update recorded, and bytes per hour at `rate`. */
async function recordCost(routes, seconds) {
  const dir = mkdtempSync(join(tmpdir(), 'tp-rec-bench-'));
  const teams = Math.max(1, Math.round(routes / 50));
  const r = new FlightRecorder({ dir, header, now: () => clock });
  load(r, syntheticCluster(routes));
  await r.idle();
  const bytesBefore = r.stats.bytesWritten;
  const n = rate * seconds;
  const updates = Array.from({ length: n }, (_, i) => {
    const s = syntheticSlice(i % routes, i % 2 ? 'v1' : 'v2', teams, 3);
    s.endpoints[0].addresses[0] = `10.200.${(i >> 8) & 255}.${i & 255}`;
    return s;
  });
  let used = { user: 0, system: 0 };
  for (let i = 0; i < n; i++) {
    const cpu = process.cpuUsage();
    clock += 1000 / rate;
    r.event(stamp(upsert('kube', updates[i])));
    r.output(seq, 'f'.repeat(64));
    const d = process.cpuUsage(cpu);
    used = { user: used.user + d.user, system: used.system + d.system };
    // As a controller's event loop turns between updates (a checkpoint writes a slice per turn; counted too).
    if (i % 20 === 0) {
      const t = process.cpuUsage();
      await idle();
      const d2 = process.cpuUsage(t);
      used = { user: used.user + d2.user, system: used.system + d2.system };
    }
  }
  r.close();
  await r.idle();
  const written = r.stats.bytesWritten - bytesBefore;
  const files = segmentFiles(dir);
  const stored = files.reduce((s, f) => s + statSync(f).size, 0);
  rmSync(dir, { recursive: true, force: true });
  const cpuUs = (used.user + used.system) / n;
  return {
    usPerUpdate: +cpuUs.toFixed(1),
    corePctAtRate: +((cpuUs * rate) / 1e4).toFixed(2),
    mibPerHour: Math.round(((written / seconds) * 3600) / MiB),
    gzipMibPerHour: Math.round((((stored / (written + bytesBefore)) * written) / seconds / MiB) * 3600),
  };
}

/** One hour at `rate` (10k routes), rotated at 32 MiB (the default): the state at a moment late in it, from its checkpoint. */
async function replayCost(routes) {
  const dir = mkdtempSync(join(tmpdir(), 'tp-rec-bench-'));
  const teams = Math.max(1, Math.round(routes / 50));
  const r = new FlightRecorder({ dir, header, segmentBytes: 32 * MiB, retainBytes: 8 * 1024 * MiB, now: () => clock });
  load(r, syntheticCluster(routes));
  const n = rate * 3600;
  for (let i = 0; i < n; i++) {
    clock += 1000 / rate;
    const s = syntheticSlice(i % routes, i % 2 ? 'v1' : 'v2', teams, 3);
    s.endpoints[0].addresses[0] = `10.200.${(i >> 8) & 255}.${i & 255}`;
    r.event(stamp(upsert('kube', s)));
    // As a controller's event loop turns between updates: a checkpoint writes a slice per turn.
    if (i % 20 === 0) await idle();
  }
  r.close();
  await r.idle();
  const files = segmentFiles(dir);
  // The moment: three quarters into the last segment.
  const last = files.at(-1);
  let started = performance.now();
  const segment = readEventLog(last);
  const moment = segment.events[Math.floor(segment.events.length * 0.75)].seq;
  const readMs = performance.now() - started;
  started = performance.now();
  const { snapshot } = storeAt(segment, moment);
  const storeMs = performance.now() - started;
  started = performance.now();
  new Translator().translate(snapshot);
  const translateMs = performance.now() - started;
  const total = files.reduce((s, f) => s + statSync(f).size, 0);
  const result = {
    segments: files.length,
    storedMib: Math.round(total / MiB),
    readSegmentMs: Math.round(readMs),
    storeFromCheckpointMs: Math.round(storeMs),
    translateMs: Math.round(translateMs),
    totalMs: Math.round(readMs + storeMs + translateMs),
  };
  return { result, dir };
}

/**
 * A capture of about `mib` MiB over loopback HTTP, written to a file: the hour's segments, copied
 * under later names until the directory holds that much (the transfer, not the content, is measured),
 * and a plain 64 MiB segment as the open one, gzipped on the fly as the endpoint does.
 */
async function captureCost(dir, mib) {
  const files = segmentFiles(dir);
  let total = files.reduce((s, f) => s + statSync(f).size, 0);
  const open = files.at(-1);
  for (let copy = 0; total < (mib - 64) * MiB; copy++)
    for (const f of files.filter((x) => x.endsWith('.gz'))) {
      const to = f.replace(
        /-(\d{6})\.ndjson\.gz$/,
        (_, n) => `-${String(Number(n) + 1000 * (copy + 1)).padStart(6, '0')}.ndjson.gz`,
      );
      copyFileSync(f, to);
      total += statSync(f).size;
    }
  // The open segment: plain text, as written.
  const plain = open.replace(/\.gz$/, '').replace(/-(\d{6})\.ndjson$/, '-999999.ndjson');
  const text = gunzipSync(readFileSync(open));
  const parts = [];
  for (let size = 0; size < 64 * MiB; size += text.length) parts.push(text);
  writeFileSync(plain, Buffer.concat(parts));
  const stored = segmentFiles(dir).reduce((s, f) => s + statSync(f).size, 0);
  const server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/gzip' });
    void writeCapture(dir, 0, res).then(() => res.end());
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const out = join(mkdtempSync(join(tmpdir(), 'tp-cap-')), 'capture.tpk');
  const started = performance.now();
  await new Promise((resolve, reject) =>
    get({ host: '127.0.0.1', port: server.address().port, path: '/' }, (res) =>
      pipeline(res, createWriteStream(out)).then(resolve, reject),
    ).on('error', reject),
  );
  const ms = performance.now() - started;
  server.close();
  const bytes = statSync(out).size;
  rmSync(out);
  return {
    storedMib: Math.round(stored / MiB),
    mib: Math.round(bytes / MiB),
    ms: Math.round(ms),
    mibPerS: Math.round(bytes / MiB / (ms / 1000)),
  };
}

log(`flight recorder bench: ${rate} EndpointSlice updates/s`);
const cost = await recordCost(10_000, 60);
log(
  `record (10k routes): ${cost.usPerUpdate} µs CPU per update = ${cost.corePctAtRate}% of a core at ${rate}/s; ` +
    `${cost.mibPerHour} MiB/h written, ${cost.gzipMibPerHour} MiB/h stored (gzip)`,
);
for (const routes of args.includes('--skip-100k') ? [10_000] : [10_000, 100_000]) {
  const c = await checkpoint(routes);
  log(
    `checkpoint ${routes} routes: ${c.objects} objects, ${c.mib} MiB (${c.gzipMib} MiB gzip), written in ${c.ms} ms ` +
      `in slices, ${c.eventsMeanwhile} events taken meanwhile, longest event-loop block ${c.maxLoopBlockMs} ms`,
  );
}
const { result: replay, dir } = await replayCost(10_000);
log(
  `replay (10k routes, 1 h at ${rate}/s: ${replay.segments} segments, ${replay.storedMib} MiB stored): a moment late in ` +
    `the hour in ${replay.totalMs} ms (read its segment ${replay.readSegmentMs} ms, store from the checkpoint ` +
    `${replay.storeFromCheckpointMs} ms, translate ${replay.translateMs} ms)`,
);
const cap = await captureCost(dir, captureMib);
log(
  `capture: ${cap.storedMib} MiB of segments (the last a plain 64 MiB open one) → ${cap.mib} MiB file ` +
    `in ${cap.ms} ms (${cap.mibPerS} MiB/s) over loopback HTTP`,
);
rmSync(dir, { recursive: true, force: true });
