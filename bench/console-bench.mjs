#!/usr/bin/env node
// The console on a large log: a synthetic cluster (R routes) created, then edited event after event
// (route hostnames, endpoint churn) up to E events in all. Prints what each console request costs:
// opening the log (checkpoints), the statuses at a moment not seen before and at one just seen, an
// object's detail, its history (with the translations it took), and a diff.
//   node bench/console-bench.mjs [--routes 1000] [--events 100000]
import { ConsoleData } from '../packages/cli/dist/console/console-data.js';
import { syntheticCluster } from './synthetic-cluster.mjs';

const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const routes = Number(opt('--routes', '1000'));
const total = Number(opt('--events', '100000'));

const events = [];
const start = Date.UTC(2026, 0, 1);
const push = (e) =>
  events.push({
    seq: events.length + 1,
    at: new Date(start + events.length * 100).toISOString(),
    source: 'kube',
    ...e,
  });
const objects = syntheticCluster(routes);
for (const o of objects)
  push({
    type: 'upsert',
    kind: o.kind,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    name: o.metadata.name,
    object: o,
  });
push({ type: 'synced', kind: '*' });
const editable = objects.filter((o) => o.kind === 'HTTPRoute' || o.kind === 'EndpointSlice');
for (let i = 0; events.length < total; i++) {
  const o = structuredClone(editable[(i * 7919) % editable.length]);
  if (o.kind === 'HTTPRoute') o.spec.hostnames = [`v${i}.${o.spec.hostnames?.[0] ?? 'example.com'}`];
  else o.endpoints = [{ addresses: [`10.9.${(i >> 8) & 255}.${i & 255}`], conditions: { ready: i % 5 !== 0 } }];
  push({ type: 'upsert', kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name, object: o });
}
const log = {
  header: {
    format: 'turnpike.events',
    version: 1,
    createdAt: new Date(start).toISOString(),
    quietMs: 100,
    maxDelayMs: 1000,
  },
  events,
  outputs: [],
};

const time = async (label, f) => {
  const t0 = performance.now();
  const r = await f();
  console.log(`${label.padEnd(44)} ${(performance.now() - t0).toFixed(0).padStart(7)} ms`);
  return r;
};
console.log(`${objects.length} objects, ${events.length} events`);
const data = new ConsoleData(() => log);
await time('open (checkpoints every 1000 events)', () => data.summary());
const route = objects.find((o) => o.kind === 'HTTPRoute');
const key = `HTTPRoute/${route.metadata.namespace}/${route.metadata.name}`;
await time('statuses at the last event (first translation)', () => data.objects(events.length, { limit: 100 }));
await time('statuses at event 60 000 (not seen before)', () => data.objects(60_000, { limit: 100 }));
await time('statuses at event 60 001', () => data.objects(60_001, { limit: 100 }));
await time('statuses at event 60 000 again (kept)', () => data.objects(60_000, { limit: 100 }));
await time('one object: conditions, explain, xDS', () => data.object(key, 60_000));
const h = await time('one object over the whole log (history)', () => data.history(key));
console.log(`${''.padEnd(44)} ${h.probes} translations, ${h.changes.length} changes`);
await time('diff of two moments 30 000 events apart', () => data.diff(50_000, 80_000));
await time('events page', () => data.events(70_000, 50));
