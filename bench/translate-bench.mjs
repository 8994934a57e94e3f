#!/usr/bin/env node
// Benchmarks of the whole per-change path `turnpike run` takes: store apply → translate → output
// hash → Envoy resources and encoding (snapshot cache) → status diff. Per size: the first (full)
// translation, heap after it, loading the cluster's manifests from YAML files, and per kind of
// change the median and p90 of 20+ single-object changes.
//   node --expose-gc bench/translate-bench.mjs [--sizes 1000,10000,30000] [--changes 20] [--json]
// BENCH_VALIDATION=ignore loads the YAML without the API server's schema checks (default: strict).
// --json prints one JSON object on the last line: {"sizes":[{routes, gateways, objects, full_ms,
// heap_mib, load_ms, change_ms: {KIND: {median, p90}}}]}.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyEvents, EMPTY_SNAPSHOT, loadManifests } from '../packages/engine/dist/index.js';
import * as engine from '../packages/engine/dist/index.js';
import { Translator } from '../packages/translator/dist/index.js';
import { SnapshotCache, XdsSnapshotBuilder } from '../packages/xds/dist/index.js';
import {
  syntheticCluster,
  syntheticGateway,
  syntheticGrant,
  syntheticNamespace,
  syntheticRoute,
  syntheticService,
  syntheticSlice,
  tlsSecret,
} from './synthetic-cluster.mjs';

const require = createRequire(new URL('../packages/engine/package.json', import.meta.url));
const YAML = require('yaml');
const stringify = require('safe-stable-stringify');

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const json = args.includes('--json');
const sizes = opt('--sizes', '1000,10000,30000').split(',').map(Number);
const perKind = Number(opt('--changes', '20'));
const log = (s) => {
  if (!json) process.stderr.write(`${s}\n`);
};

let seq = 0;
const event = (o) => ({
  seq: ++seq,
  at: '2026-01-01T00:00:00.000Z',
  source: 'bench',
  type: 'upsert',
  kind: o.kind,
  namespace: o.metadata.namespace,
  name: o.metadata.name,
  object: o,
});
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const round = (x) => Math.round(x * 100) / 100;
const gc = () => globalThis.gc?.();

/** What `turnpike run` does with each translation, on this build (or on one from before the incremental engine). */
class Pipeline {
  constructor() {
    this.snapshot = EMPTY_SNAPSHOT;
    this.translator = new Translator();
    this.incremental = typeof this.translator.translateWithChanges === 'function';
    this.hasher = this.incremental ? new engine.OutputHasher() : undefined;
    this.builder = new XdsSnapshotBuilder();
    this.cache = new SnapshotCache();
    this.printed = new Map();
  }

  step(objects) {
    this.snapshot = applyEvents(this.snapshot, objects.map(event)).snapshot;
    const snapshot = this.snapshot;
    const lookup = (kind, ns, name) => snapshot.get(kind)?.get(ns)?.get(name);
    if (this.incremental) {
      const { result, changes } = this.translator.translateWithChanges(snapshot);
      this.hash = this.hasher.update(result, changes);
      this.cache.update(this.builder.update(result.xdsIR, changes, lookup));
      for (const key of changes.statuses) this.diffStatus(key, result.statuses.get(key));
      return result;
    }
    const result = this.translator.translate(snapshot);
    this.hash = engine.outputHash(result);
    this.cache.setAll(this.builder.build(result.xdsIR.gateways, lookup));
    for (const [key, status] of Object.entries(result.statuses)) this.diffStatus(key, status);
    return result;
  }

  diffStatus(key, status) {
    const c = stringify(status ?? null);
    if (this.printed.get(key) === c) return;
    if (status === undefined) this.printed.delete(key);
    else this.printed.set(key, c);
  }
}

/** Writes the cluster as YAML, one file per namespace, as a user's manifest directory would be. */
function writeManifests(objects) {
  const dir = mkdtempSync(join(tmpdir(), 'turnpike-bench-'));
  const byNs = new Map();
  for (const o of objects) {
    const ns = o.metadata.namespace ?? '_cluster';
    if (!byNs.has(ns)) byNs.set(ns, []);
    byNs.get(ns).push(o);
  }
  let bytes = 0;
  for (const [ns, list] of byNs) {
    mkdirSync(join(dir, ns), { recursive: true });
    const text = list.map((o) => YAML.stringify(o)).join('---\n');
    bytes += text.length;
    writeFileSync(join(dir, ns, 'manifests.yaml'), text);
  }
  return { dir, bytes };
}

const KINDS = ['HTTPRoute', 'EndpointSlice', 'Service', 'Gateway', 'Secret', 'ReferenceGrant', 'Namespace'];

/** How many times each object was changed, so that every change really changes it (flip, flop, …). */
const flips = new Map();
function flip(key) {
  const n = (flips.get(key) ?? 0) + 1;
  flips.set(key, n);
  return n;
}

/** The i-th change of a kind: one object, each change a real one (a version it does not have now). */
function change(kind, i, routes, gateways, teams) {
  const r = (i * 7919) % routes;
  const g = (i * 31) % gateways;
  const t = (((i * 13) % Math.ceil(teams / 5)) * 5) % teams; // a team with a grant
  switch (kind) {
    case 'HTTPRoute':
      return syntheticRoute(r, gateways, teams, flip(`route ${r}`));
    case 'EndpointSlice':
      return syntheticSlice(r, 'v1', teams, flip(`slice ${r}`) % 2 === 1 ? 4 : 3); // one pod more, then back
    case 'Service':
      return syntheticService(r, 'v1', teams, flip(`service ${r}`)); // an unused port added, then removed
    case 'Gateway':
      return syntheticGateway(g, flip(`gateway ${g}`) % 2); // a listener added, then removed
    case 'Secret':
      return tlsSecret(g, flip(`secret ${g}`)); // the certificate rotated
    case 'ReferenceGrant':
      return syntheticGrant(t, teams, flip(`grant ${t}`)); // a from entry added, then removed
    case 'Namespace':
      return syntheticNamespace((i * 17) % teams, flip(`namespace ${(i * 17) % teams}`)); // a label changed
    default:
      throw new Error(kind);
  }
}

const results = [];
for (const routes of sizes) {
  const gateways = Math.max(1, Math.round(routes / 100));
  const teams = Math.max(1, Math.round(routes / 50));
  const objects = syntheticCluster(routes, gateways);
  log(`${routes} routes: ${objects.length} objects`);

  const { dir, bytes } = writeManifests(objects);
  gc();
  let t0 = process.hrtime.bigint();
  const loaded = loadManifests([dir], { validation: process.env.BENCH_VALIDATION ?? 'strict' }).objects.length;
  const loadMs = ms(t0);
  rmSync(dir, { recursive: true, force: true });
  if (loaded !== objects.length) throw new Error(`loaded ${loaded} of ${objects.length} objects`);
  log(`  load ${(bytes / 1048576).toFixed(1)} MB of YAML: ${loadMs.toFixed(0)} ms`);

  gc();
  const pipeline = new Pipeline();
  t0 = process.hrtime.bigint();
  const first = pipeline.step(objects);
  const fullMs = ms(t0);
  gc();
  const heapMiB = process.memoryUsage().heapUsed / 1048576;
  log(`  first translation (whole path): ${fullMs.toFixed(0)} ms, heap ${heapMiB.toFixed(0)} MiB`);
  const gatewaysOut = first.xdsIR.gateways.size ?? Object.keys(first.xdsIR.gateways).length;

  const changeMs = {};
  for (const kind of KINDS) {
    const times = [];
    pipeline.step([change(kind, perKind, routes, gateways, teams)]); // warm-up, not timed
    for (let i = 0; i < perKind; i++) {
      const o = change(kind, i, routes, gateways, teams);
      const t = process.hrtime.bigint();
      pipeline.step([o]);
      times.push(ms(t));
    }
    changeMs[kind] = { median: round(quantile(times, 0.5)), p90: round(quantile(times, 0.9)) };
    log(`  ${kind.padEnd(15)} median ${changeMs[kind].median} ms, p90 ${changeMs[kind].p90} ms`);
  }
  results.push({
    routes,
    gateways: gatewaysOut,
    objects: objects.length,
    yaml_mib: round(bytes / 1048576),
    full_ms: round(fullMs),
    heap_mib: round(heapMiB),
    load_ms: round(loadMs),
    change_ms: changeMs,
  });
}

if (json) process.stdout.write(`${JSON.stringify({ node: process.version, sizes: results })}\n`);
else {
  const cols = ['routes', 'objects', 'full', 'heap', 'load', ...KINDS];
  console.log(cols.map((c) => c.padStart(c.length > 8 ? c.length + 1 : 9)).join(''));
  for (const r of results) {
    const row = [
      r.routes,
      r.objects,
      r.full_ms.toFixed(0),
      r.heap_mib.toFixed(0),
      r.load_ms.toFixed(0),
      ...KINDS.map((k) => r.change_ms[k].median.toFixed(1)),
    ];
    console.log(row.map((v, i) => String(v).padStart(cols[i].length > 8 ? cols[i].length + 1 : 9)).join(''));
  }
  console.log('(times in ms, medians of single-object changes; heap in MiB after the first translation)');
}
