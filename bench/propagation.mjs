#!/usr/bin/env node
// From the API server to every proxy: a real kube-apiserver and etcd (the e2e harness, compiled on the
// fly), the controller as a process with --kubeconfig, and P ADS clients (delta and state of the world,
// alternating) spread over G Gateways, each ACKing every response as Envoy does. Measures:
//   cold start   controller start → every client has every route of its Gateway
//   idle         one HTTPRoute update (time of the API server's answer) → the last client of its
//                Gateway has it; p50 / p99 over --updates updates, one at a time
//   churn        the same updates while a background writer changes --churn objects per second
//                (routes, EndpointSlices, Services); then whether every background write reached
//                every client of its Gateway (`lost`: those that did not within 30 s)
//   endpoints    --endpoint-rate EndpointSlice updates per second for --endpoint-seconds: write →
//                every client of the one Gateway that serves that cluster has the new address (EDS);
//                p99, the rate reached, and the controller's CPU meanwhile
//   fan-out      more clients, up to --fanout in all: one change to a Gateway → all its clients have
//                it, and one change to a Service every Gateway uses → all clients have it; the memory
//                per stream from bench/stream-memory.mjs (a process of its own, after a full GC)
// Heap and RSS come from the controller's /metrics (prom-client's process metrics).
// xDS is served in plaintext here (the bench measures propagation, not TLS handshakes).
//   pnpm bench:propagation [--routes 1000] [--gateways 100] [--proxies 200] [--updates 50] [--churn 50]
//                          [--endpoint-rate 500] [--endpoint-seconds 60] [--fanout 1000] [--json]
//                          [--cli OTHER/packages/cli/dist/main.js]
//   --cold-starts N [--compare OTHER/packages/cli/dist/main.js]: only cold starts, N of each build,
//   alternating on the same cluster (a before/after that spreads the machine's noise over both).
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const routes = Number(opt('--routes', '1000'));
const gateways = Number(opt('--gateways', '100'));
const proxies = Number(opt('--proxies', '200'));
const updates = Number(opt('--updates', '50'));
const churnPerSecond = Number(opt('--churn', '50'));
const endpointRate = Number(opt('--endpoint-rate', '500'));
const endpointSeconds = Number(opt('--endpoint-seconds', '60'));
const fanout = Number(opt('--fanout', '1000'));
const json = args.includes('--json');
// --cold-starts N: only N cold starts (each against --compare's build too, if given), on one cluster.
const coldStarts = Number(opt('--cold-starts', '0'));
const compare = opt('--compare', undefined);
// Another build's CLI as the controller (the before of a before/after table), e.g. a worktree's.
if (args.includes('--cli')) process.env.TURNPIKE_CLI = opt('--cli', '');
const log = (s) => {
  if (!json) process.stderr.write(`${s}\n`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The harness is TypeScript: compile it next to e2e/node_modules, which resolves its imports.
const out = join(ROOT, 'e2e/.work/bench');
const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
const build = spawnSync(
  process.execPath,
  [
    tsc,
    '--outDir',
    out,
    '--rootDir',
    ROOT,
    '--module',
    'nodenext',
    '--target',
    'es2022',
    '--skipLibCheck',
    '--moduleResolution',
    'nodenext',
    join(ROOT, 'e2e/harness/cluster.ts'),
    join(ROOT, 'e2e/harness/controller.ts'),
  ],
  { encoding: 'utf8' },
);
if (build.status !== 0) throw new Error(`compiling the harness failed:\n${build.stdout}${build.stderr}`);
process.env.TURNPIKE_ROOT = ROOT;
const { Cluster } = await import(join(out, 'e2e/harness/cluster.js'));
const { Controller } = await import(join(out, 'e2e/harness/controller.js'));

const { Ads, grpc } = await import('./ads-client.mjs');
const RDS = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
const EDS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const TYPES = [RDS, EDS, CDS];
const GW = 'gateway.networking.k8s.io/v1';

const pct = (list, p) => {
  const s = [...list].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]) : null;
};

/** One proxy: RDS, EDS and CDS of its Gateway (all names), every response ACKed; `held` is what it holds now. */
function proxyClient(port, gateway, delta, id) {
  // A connection per proxy, as real proxies have (grpc-js would share one, and the server allows
  // 100 streams per connection).
  const client = new Ads(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'bench.proxy': id });
  const held = new Map();
  const waiters = new Set();
  const node = { id: `bench-${id}`, cluster: gateway };
  const notify = () => {
    for (const w of [...waiters])
      if (w.check()) {
        waiters.delete(w);
        w.resolve(performance.now());
      }
  };
  if (delta) {
    const stream = client.DeltaAggregatedResources();
    stream.on('data', (r) => {
      for (const res of r.resources ?? []) held.set(`${r.type_url} ${res.name}`, res.resource.value.toString('latin1'));
      for (const name of r.removed_resources ?? []) held.delete(`${r.type_url} ${name}`);
      stream.write({ type_url: r.type_url, response_nonce: r.nonce });
      notify();
    });
    stream.on('error', () => undefined);
    for (const type of TYPES)
      stream.write({ ...(type === RDS ? { node } : {}), type_url: type, resource_names_subscribe: ['*'] });
    return { name: `${gateway} (delta)`, held, waiters, close: () => (stream.end(), client.close()) };
  }
  const stream = client.StreamAggregatedResources();
  stream.on('data', (r) => {
    for (const key of [...held.keys()]) if (key.startsWith(`${r.type_url} `)) held.delete(key);
    (r.resources ?? []).forEach((res, i) => held.set(`${r.type_url} ${i}`, res.value.toString('latin1')));
    stream.write({
      node,
      type_url: r.type_url,
      resource_names: ['*'],
      version_info: r.version_info,
      response_nonce: r.nonce,
    });
    notify();
  });
  stream.on('error', () => undefined);
  for (const type of TYPES) stream.write({ node, type_url: type, resource_names: ['*'] });
  return { name: `${gateway} (sotw)`, held, waiters, close: () => (stream.end(), client.close()) };
}

/** The client holds `marker` somewhere, or `marker` is a predicate on the client. */
const has = (c, marker) =>
  typeof marker === 'function' ? marker(c) : [...c.held.values()].some((t) => t.includes(marker));
const until = (c, marker, timeoutMs = 60_000) =>
  has(c, marker)
    ? Promise.resolve(performance.now())
    : new Promise((resolve, reject) => {
        const w = { check: () => has(c, marker), resolve };
        c.waiters.add(w);
        setTimeout(() => {
          if (!c.waiters.delete(w)) return;
          reject(new Error(`${c.name}: ${marker} not seen in ${timeoutMs} ms (holds ${c.held.size} resources)`));
        }, timeoutMs).unref();
      });

/**
 * The client holds the cluster of Service `app` with HTTP/2: Cluster field 14, http2_protocol_options,
 * set empty is the bytes 0x72 0x00 (a zero byte is never a tag, nor in the names here).
 */
const speaksH2 = (c) =>
  [...c.held].some(
    ([key, text]) =>
      key.startsWith(CDS) &&
      (text.includes('bench/app/8080/h2') || (text.includes('bench/app/8080') && text.includes('r\x00'))),
  );

/** The newest endpoint-churn write (its sequence number) a client holds for the cluster of `ep-<g>`. */
function endpointSeen(c, g) {
  let best = -1;
  for (const [key, text] of c.held) {
    if (!key.startsWith(EDS) || !text.includes(`bench/ep-${g}/8080`)) continue;
    for (const m of text.matchAll(/10\.(1[0-9]{2})\.([0-9]{1,3})\.([0-9]{1,3})/g))
      best = Math.max(best, ((Number(m[1]) - 100) << 16) | (Number(m[2]) << 8) | Number(m[3]));
  }
  return best;
}

// Every route sends to the Service `app`, which every Gateway uses; the first route of each Gateway
// also to `ep-<g>`, a Service only that Gateway serves (the endpoint churn writes its EndpointSlice).
const route = (r, marker = `/r${r}`) => ({
  apiVersion: GW,
  kind: 'HTTPRoute',
  metadata: { name: `route-${r}`, namespace: 'bench' },
  spec: {
    parentRefs: [{ name: `gw-${r % gateways}`, namespace: 'bench' }],
    hostnames: [`r${r}.example.com`],
    rules: [
      { matches: [{ path: { type: 'PathPrefix', value: marker } }], backendRefs: [{ name: 'app', port: 8080 }] },
      ...(r < gateways
        ? [
            {
              matches: [{ path: { type: 'PathPrefix', value: `/ep${r}` } }],
              backendRefs: [{ name: `ep-${r}`, port: 8080 }],
            },
          ]
        : []),
    ],
  },
});
/** An address no other write used: the marker a client looks for in EDS. */
const addressOf = (i) => `10.${100 + ((i >> 16) & 127)}.${(i >> 8) & 255}.${i & 255}`;
const slice = (g, i) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: `ep-${g}-1`, namespace: 'bench', labels: { 'kubernetes.io/service-name': `ep-${g}` } },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: [{ addresses: [addressOf(i)], conditions: { ready: true } }],
});
/** The controller's process metrics (prom-client), by name. */
async function processMetrics(ctl) {
  const text = await (await fetch(`http://127.0.0.1:${ctl.healthPort}/metrics`)).text();
  const value = (name) => Number(new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN);
  return {
    cpuSeconds: value('turnpike_process_process_cpu_seconds_total'),
    rssBytes: value('turnpike_process_process_resident_memory_bytes'),
    heapBytes: value('turnpike_process_nodejs_heap_size_used_bytes'),
    externalBytes: value('turnpike_process_nodejs_external_memory_bytes'),
  };
}
/** turnpike_config_latency_seconds (first event of a change → a proxy's ACK), summed over Gateways: le → count. */
async function configLatencyBuckets(ctl) {
  const text = await (await fetch(`http://127.0.0.1:${ctl.healthPort}/metrics`)).text();
  const out = new Map();
  for (const m of text.matchAll(/^turnpike_config_latency_seconds_bucket\{le="([^"]+)"[^}]*\} ([0-9.e+]+)$/gm))
    out.set(m[1], (out.get(m[1]) ?? 0) + Number(m[2]));
  return out;
}
/** The upper bound (ms) of the bucket holding quantile q of the ACKs between two readings. */
function bucketQuantile(before, after, q) {
  const les = [...after.keys()].filter((le) => le !== '+Inf').sort((a, b) => Number(a) - Number(b));
  const total = (after.get('+Inf') ?? 0) - (before.get('+Inf') ?? 0);
  for (const le of les) if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= q * total) return Number(le) * 1000;
  return Infinity;
}

const cluster = await Cluster.start();
const clients = [];
let controller;
try {
  const admin = cluster.admin;
  const plural = { Service: 'services', Gateway: 'gateways', HTTPRoute: 'httproutes', EndpointSlice: 'endpointslices' };
  const create = (o) =>
    admin.must(
      'POST',
      `${o.apiVersion === 'v1' ? '/api/v1' : `/apis/${o.apiVersion}`}/namespaces/${o.metadata.namespace}/${plural[o.kind]}`,
      o,
    );
  await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
  await cluster.apply({
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'bench' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  });
  await create({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'app', namespace: 'bench' },
    spec: { ports: [{ name: 'http', port: 8080 }] },
  });
  for (let g = 0; g < gateways; g++) {
    await create({
      apiVersion: GW,
      kind: 'Gateway',
      metadata: { name: `gw-${g}`, namespace: 'bench' },
      spec: { gatewayClassName: 'bench', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    });
    await create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `ep-${g}`, namespace: 'bench' },
      spec: { ports: [{ name: 'http', port: 8080 }] },
    });
    await create(slice(g, g));
  }
  const t0 = performance.now();
  for (let r = 0; r < routes; r += 20)
    await Promise.all(Array.from({ length: Math.min(20, routes - r) }, (_, i) => create(route(r + i))));
  log(`${routes} routes, ${gateways} Gateways written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  /** The last route of Gateway `g`, by hostname: measured updates change its path, background writes keep this. */
  const lastRouteOf = (g) => {
    let r = g;
    while (r + gateways < routes) r += gateways;
    return `r${r}.example.com`;
  };
  // Cold start: the controller starts with everything in place.
  const coldStart = async () => {
    controller = new Controller(cluster.controllerKubeconfig, [
      '--xds-plaintext',
      '--quiet-ms',
      '100',
      '--max-delay-ms',
      '500',
    ]);
    const started = performance.now();
    await controller.start();
    for (let p = 0; p < proxies; p++)
      clients.push(proxyClient(controller.xdsPort, `bench/gw-${p % gateways}`, p % 2 === 0, p));
    // Every client has the last route of its Gateway.
    await Promise.all(clients.map((c, p) => until(c, lastRouteOf(p % gateways))));
    const ms = Math.round(performance.now() - started);
    const metrics = await processMetrics(controller);
    return { ms, heapMib: Math.round(metrics.heapBytes / 2 ** 20), rssMib: Math.round(metrics.rssBytes / 2 ** 20) };
  };
  if (coldStarts > 0) {
    // Only cold starts, on the same cluster, alternating this build and --compare's: a before/after
    // with the machine's noise spread over both.
    const builds = [
      { name: 'this', cli: process.env.TURNPIKE_CLI },
      ...(compare ? [{ name: 'compare', cli: compare }] : []),
    ];
    const runs = Object.fromEntries(builds.map((b) => [b.name, []]));
    for (let i = 0; i < coldStarts; i++) {
      for (const b of builds) {
        if (b.cli) process.env.TURNPIKE_CLI = b.cli;
        else delete process.env.TURNPIKE_CLI;
        const run = await coldStart();
        log(`cold start ${i + 1} (${b.name}): ${run.ms} ms, heap ${run.heapMib} MiB`);
        runs[b.name].push(run);
        for (const c of clients.splice(0)) c.close();
        await controller.stop();
      }
    }
    const summary = Object.fromEntries(
      Object.entries(runs).map(([name, list]) => [
        name,
        {
          cold_start_ms: list.map((r) => r.ms),
          median_ms: pct(
            list.map((r) => r.ms),
            50,
          ),
          heap_mib: list.map((r) => r.heapMib),
        },
      ]),
    );
    if (json) process.stdout.write(`${JSON.stringify({ routes, gateways, proxies, cold_starts: summary })}\n`);
    else log(JSON.stringify(summary));
    process.exitCode = 0;
  } else {
    const cold = await coldStart();
    const coldStartMs = cold.ms;
    const heapMib = cold.heapMib;
    log(
      `cold start: controller start → all ${proxies} clients have their routes in ${coldStartMs} ms ` +
        `(heap ${heapMib} MiB, RSS ${cold.rssMib} MiB)`,
    );

    /** One route update; ms from the API server's answer to the last client of its Gateway having it. */
    const updateOnce = async (r, i) => {
      const marker = `/u${i}-${Date.now()}`;
      const g = r % gateways;
      const mine = clients.filter((_, p) => p % gateways === g);
      // A merge patch: no resourceVersion to race with the controller's status writes.
      await admin.must(
        'PATCH',
        `/apis/${GW}/namespaces/bench/httproutes/route-${r}`,
        // Its rules only: a background write's hostname stays, so that `lost` can look for it.
        { spec: { rules: route(r, marker).spec.rules } },
        'application/merge-patch+json',
      );
      const written = performance.now();
      const seen = await Promise.all(mine.map((c) => until(c, marker)));
      return Math.max(...seen) - written;
    };
    // An idle cluster: after a cold start the controller writes statuses and hears from the proxies for
    // a few seconds (each a translation); the idle updates start once a second went by without one.
    const translations = async () =>
      Number(
        /^turnpike_translations_total ([0-9.e+]+)/m.exec(
          await (await fetch(`http://127.0.0.1:${controller.healthPort}/metrics`)).text(),
        )?.[1] ?? NaN,
      );
    const settleStart = performance.now();
    for (let last = await translations(), quietSince = performance.now(); performance.now() - quietSince < 1000;) {
      if (performance.now() - settleStart > 30_000) break;
      await sleep(100);
      const now = await translations();
      if (now !== last) [last, quietSince] = [now, performance.now()];
    }
    log(`settled ${Math.round(performance.now() - settleStart)} ms after the cold start`);
    const idle = [];
    for (let i = 0; i < updates; i++) {
      idle.push(await updateOnce((i * 7919) % routes, i));
      await sleep(150);
    }
    log(`idle: route update → every client of its Gateway: p50 ${pct(idle, 50)} ms, p99 ${pct(idle, 99)} ms`);

    const churn = [];
    let stop = false;
    let churned = 0;
    // The last background write of each kind and object, and the Gateway whose clients must see it.
    const lastWrite = new Map();
    // --churn 0: no background writer (a pause of 1000/0 ms would be none at all: a flood).
    const writer = (async () => {
      let i = 0;
      while (!stop && churnPerSecond > 0) {
        i++;
        const which = i % 5;
        if (which < 3) {
          // A route (3 in 5): a hostname its Gateway's RDS carries.
          const r = (i * 104729) % routes;
          await admin.must(
            'PATCH',
            `/apis/${GW}/namespaces/bench/httproutes/route-${r}`,
            { spec: { hostnames: [`r${r}.example.com`, `c${i}.example.com`] } },
            'application/merge-patch+json',
          );
          lastWrite.set(`route-${r}`, { gateway: r % gateways, marker: `c${i}.example.com` });
        } else if (which === 3) {
          // An EndpointSlice: an address in its Gateway's EDS.
          const g = (i * 7919) % gateways;
          await admin.must(
            'PUT',
            `/apis/discovery.k8s.io/v1/namespaces/bench/endpointslices/ep-${g}-1`,
            slice(g, 1_000_000 + i),
          );
          lastWrite.set(`slice-${g}`, { gateway: g, marker: addressOf(1_000_000 + i) });
        } else {
          // A Service: an annotation (nothing a proxy sees; the controller still has to look).
          const g = (i * 31) % gateways;
          await admin.must(
            'PATCH',
            `/api/v1/namespaces/bench/services/ep-${g}`,
            { metadata: { annotations: { 'bench/churn': String(i) } } },
            'application/merge-patch+json',
          );
        }
        churned++;
        await sleep(1000 / churnPerSecond);
      }
    })();
    for (let i = 0; i < updates; i++) {
      churn.push(await updateOnce((i * 15485863) % routes, updates + i));
      await sleep(150);
    }
    stop = true;
    await writer;
    // Lost: a background write whose effect some client of its Gateway never got.
    let lost = 0;
    await Promise.all(
      [...lastWrite.values()].map(async ({ gateway, marker }) => {
        const mine = clients.filter((_, p) => p % gateways === gateway);
        const got = await Promise.all(
          mine.map((c) =>
            until(c, marker, 30_000).then(
              () => true,
              () => false,
            ),
          ),
        );
        if (got.includes(false)) lost++;
      }),
    );
    log(
      `churn (${churnPerSecond}/s background writes, ${churned} in all): p50 ${pct(churn, 50)} ms, p99 ${pct(churn, 99)} ms; ` +
        `${lost} of ${lastWrite.size} last writes lost`,
    );

    // Endpoint churn at the rate asked, one write in flight per slice (two would race at the API server);
    // a write's lag ends when every client of its Gateway holds it or a later write of the same slice.
    const lags = [];
    const pendingLags = [];
    let endpointWrites = 0;
    const cpuBefore = await processMetrics(controller);
    const acksBefore = await configLatencyBuckets(controller);
    // The bench's own event loop: a late client is not a late controller.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const benchCpuBefore = process.cpuUsage();
    const endpointStart = performance.now();
    const endAt = endpointStart + endpointSeconds * 1000;
    const inFlight = new Set();
    const sliceBusy = new Map();
    for (let i = 0; performance.now() < endAt; i++) {
      const g = (i * 7919) % gateways;
      const n = 2_000_000 + i;
      const write = (sliceBusy.get(g) ?? Promise.resolve())
        .then(() =>
          admin.must('PUT', `/apis/discovery.k8s.io/v1/namespaces/bench/endpointslices/ep-${g}-1`, slice(g, n)),
        )
        .then(() => {
          const written = performance.now();
          const mine = clients.filter((_, p) => p % gateways === g);
          pendingLags.push(
            Promise.all(mine.map((c) => until(c, (x) => endpointSeen(x, g) >= n, 30_000))).then(
              (seen) => lags.push(Math.max(...seen) - written),
              () => lags.push(30_000),
            ),
          );
          endpointWrites++;
        });
      sliceBusy.set(g, write);
      inFlight.add(write);
      write.finally(() => inFlight.delete(write));
      if (inFlight.size >= endpointRate) await Promise.race(inFlight);
      const due = endpointStart + ((i + 1) * 1000) / endpointRate;
      if (due > performance.now()) await sleep(due - performance.now());
    }
    await Promise.all(inFlight);
    const endpointElapsed = (performance.now() - endpointStart) / 1000;
    await Promise.all(pendingLags);
    const cpuAfter = await processMetrics(controller);
    const endpointCpu =
      endpointWrites > 0 ? Math.round(((cpuAfter.cpuSeconds - cpuBefore.cpuSeconds) / endpointElapsed) * 100) : null;
    loopDelay.disable();
    // The controller's share: from the watch event it got to the proxies' ACK.
    const acksAfter = await configLatencyBuckets(controller);
    log(
      `  (controller: watch event → ACK p50 ≤ ${bucketQuantile(acksBefore, acksAfter, 0.5)} ms, ` +
        `p99 ≤ ${bucketQuantile(acksBefore, acksAfter, 0.99)} ms)`,
    );
    const benchCpu = process.cpuUsage(benchCpuBefore);
    log(
      `  (the bench itself meanwhile: ${Math.round((benchCpu.user + benchCpu.system) / 1e4 / endpointElapsed)}% of a core, ` +
        `event loop delay p99 ${Math.round(loopDelay.percentile(99) / 1e6)} ms)`,
    );
    log(
      `endpoints: ${endpointWrites} EndpointSlice writes in ${endpointElapsed.toFixed(1)} s ` +
        `(${Math.round(endpointWrites / endpointElapsed)}/s of ${endpointRate}/s asked): lag p50 ${pct(lags, 50)} ms, ` +
        `p99 ${pct(lags, 99)} ms; controller CPU ${endpointCpu}% of a core`,
    );

    // Fan-out: more clients, then the memory each stream costs, then one change seen by many.
    const firstNew = clients.length;
    for (let p = firstNew; p < fanout; p++)
      clients.push(proxyClient(controller.xdsPort, `bench/gw-${p % gateways}`, p % 2 === 0, p));
    await Promise.all(clients.slice(firstNew).map((c, k) => until(c, lastRouteOf((firstNew + k) % gateways), 120_000)));
    log(`fan-out: ${clients.length} clients connected`);
    // Settled: the new streams' first responses are out before anything is timed.
    await sleep(3000);
    // One Gateway at a time (five of them): a second listener (a new route configuration) reaches all its clients.
    const perGateway = [];
    let gatewayClients = [];
    for (let k = 1; k <= Math.min(5, gateways); k++) {
      const g0 = k % gateways;
      await admin.must(
        'PATCH',
        `/apis/${GW}/namespaces/bench/gateways/gw-${g0}`,
        {
          spec: {
            listeners: [
              { name: 'http', port: 80, protocol: 'HTTP' },
              { name: 'alt', port: 8080, protocol: 'HTTP' },
            ],
          },
        },
        'application/merge-patch+json',
      );
      const written = performance.now();
      gatewayClients = clients.filter((_, p) => p % gateways === g0);
      perGateway.push(
        Math.max(...(await Promise.all(gatewayClients.map((c) => until(c, 'tcp-8080', 120_000))))) - written,
      );
      await sleep(300);
    }
    const fanoutGateway = pct(perGateway, 50);
    let written = 0;
    // The Service every Gateway uses: h2c (appProtocol) makes its cluster speak HTTP/2 in every Gateway
    // (builds before 9c4e7b8 renamed the cluster `…/h2` in every route; either counts).
    await admin.must(
      'PATCH',
      `/api/v1/namespaces/bench/services/app`,
      { spec: { ports: [{ name: 'http', port: 8080, appProtocol: 'kubernetes.io/h2c' }] } },
      'application/strategic-merge-patch+json',
    );
    written = performance.now();
    const fanoutAll = Math.round(
      Math.max(...(await Promise.all(clients.map((c) => until(c, speaksH2, 120_000))))) - written,
    );
    log(
      `fan-out: one Gateway's ${gatewayClients.length} clients in ${fanoutGateway} ms (median of ${perGateway.length}, ` +
        `max ${pct(perGateway, 100)}); all ${clients.length} in ${fanoutAll} ms`,
    );

    // Memory per stream: in a process of its own, after a full GC (in the controller, GC noise swamps it).
    const memory = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        join(ROOT, 'bench/stream-memory.mjs'),
        '--routes',
        String(routes),
        '--streams',
        String(fanout),
        '--json',
      ],
      { encoding: 'utf8' },
    );
    const streamKib = memory.status === 0 ? JSON.parse(memory.stdout.trim().split('\n').at(-1)).stream_kib : null;
    log(`stream memory: ${streamKib} KiB per stream beyond the shared snapshots (bench/stream-memory.mjs)`);
    const result = {
      routes,
      gateways,
      proxies,
      idle_ms: { p50: pct(idle, 50), p99: pct(idle, 99) },
      churn_ms: { p50: pct(churn, 50), p99: pct(churn, 99) },
      lost,
      endpoint_lag_ms: { p50: pct(lags, 50), p99: pct(lags, 99) },
      endpoint_rate: Math.round(endpointWrites / endpointElapsed),
      endpoint_cpu_pct: endpointCpu,
      fanout_ms: { gateway: fanoutGateway, all: fanoutAll },
      fanout_clients: clients.length,
      stream_kib: streamKib,
      cold_start_ms: coldStartMs,
      heap_mib: heapMib,
    };
    if (json) process.stdout.write(`${JSON.stringify({ sizes: [result] })}\n`);
  }
} finally {
  for (const c of clients) c.close();
  await controller?.stop();
  await cluster.stop();
  execFileSync('rm', ['-rf', out]);
}
