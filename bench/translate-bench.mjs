#!/usr/bin/env node
// Translation benchmarks: full translation, re-translation after one route changes (the
// engine's path: immer store, memoised translator), and heap used, at 100 / 1 000 / 10 000
// routes. Table on stdout; --json for machines; --sizes 100,1000 to choose.
import { applyEvents, EMPTY_SNAPSHOT } from '../packages/engine/dist/index.js';
import { Translator } from '../packages/translator/dist/index.js';
import { syntheticCluster, syntheticRoute } from './synthetic-cluster.mjs';

const args = process.argv.slice(2);
const json = args.includes('--json');
const sizesArg = args.indexOf('--sizes');
const sizes = sizesArg >= 0 ? args[sizesArg + 1].split(',').map(Number) : [100, 1000, 10000];

let seq = 0;
const event = (o) => ({ seq: ++seq, at: '2026-01-01T00:00:00.000Z', source: 'bench', type: 'upsert', kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name, object: o });
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const gc = () => globalThis.gc?.();

const results = [];
for (const routes of sizes) {
  const gateways = Math.max(1, Math.round(routes / 100));
  const objects = syntheticCluster(routes, gateways);
  const snapshot = applyEvents(EMPTY_SNAPSHOT, objects.map(event)).snapshot;
  const teams = Math.max(1, Math.round(routes / 50));

  const full = [];
  for (let i = 0; i < (routes >= 10000 ? 3 : 5); i++) {
    gc();
    const t0 = process.hrtime.bigint();
    new Translator().translate(snapshot);
    full.push(ms(t0));
  }

  const translator = new Translator();
  const first = translator.translate(snapshot);
  let current = snapshot;
  const incremental = [];
  for (let i = 0; i < 20; i++) {
    const r = (i * 7919) % routes;
    const changed = syntheticRoute(r, gateways, teams, i + 1);
    const t0 = process.hrtime.bigint();
    current = applyEvents(current, [event(changed)]).snapshot;
    translator.translate(current);
    incremental.push(ms(t0));
  }
  gc();
  const heapMiB = process.memoryUsage().heapUsed / 1048576;
  const gatewaysOut = Object.keys(first.xdsIR.gateways).length;
  results.push({ routes, gateways: gatewaysOut, objects: objects.length, fullMs: median(full), oneChangeMs: median(incremental), oneChangeP90Ms: [...incremental].sort((a, b) => a - b)[Math.floor(incremental.length * 0.9)], heapMiB });
}

if (json) {
  process.stdout.write(`${JSON.stringify({ node: process.version, results }, null, 2)}\n`);
} else {
  const row = (c) => c.map((x, i) => String(x).padStart(i ? 14 : 8)).join('');
  console.log(row(['routes', 'gateways', 'objects', 'full (ms)', '1 change (ms)', 'p90 (ms)', 'heap (MiB)']));
  for (const r of results) console.log(row([r.routes, r.gateways, r.objects, r.fullMs.toFixed(1), r.oneChangeMs.toFixed(2), r.oneChangeP90Ms.toFixed(2), r.heapMiB.toFixed(0)]));
}
