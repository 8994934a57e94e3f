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
//
// --replicas N (default 1): N controller processes on the same cluster (`--replica-name bench-<i>`, one
// of them elected leader), the clients spread round robin over them, each dialing its replica's own
// xDS port; every replica publishes a ProxyReport of its proxies, and the leader's statuses sum them.
// The phases above run across the replicas (a Gateway's clients sit on several), and also:
//   reports      ProxyReport writes to the API server per second per replica during the churn phase
//                (turnpike_proxy_report_writes_total before and after; at most 4/s by construction)
//   memory       heap and RSS of each replica, after the cold start and with all fan-out clients
//   failover     after the fan-out, SIGKILL of one replica that is not the leader: kill → every one of
//                its clients holds its whole configuration again (the resources it held before, and
//                every route of its Gateway), from another replica it reconnected to; and kill → the
//                killed replica's report counts as gone (the others' turnpike_proxy_reports_live is N-1)
//                and → the leader deleted the object
// --record: every controller runs with its flight recorder (--record-dir), as deploy/ runs it; the
// endpoint phase then also says how much it wrote (MiB/h). Compare its CPU with a run without.
//   pnpm bench:propagation [--routes 1000] [--gateways 100] [--proxies 200] [--updates 50] [--churn 50]
//                          [--endpoint-rate 500] [--endpoint-seconds 60] [--fanout 1000] [--replicas 1]
//                          [--json] [--cli OTHER/packages/cli/dist/main.js]
//   --cold-starts N [--compare OTHER/packages/cli/dist/main.js]: only cold starts, N of each build,
//   alternating on the same cluster (a before/after that spreads the machine's noise over both).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const routes = Number(opt('--routes', '1000'));
const gateways = Number(opt('--gateways', '100'));
const proxies = Number(opt('--proxies', '200'));
const record = args.includes('--record');
const recordRoot = record ? mkdtempSync(join(tmpdir(), 'tp-bench-record-')) : '';
const updates = Number(opt('--updates', '50'));
const churnPerSecond = Number(opt('--churn', '50'));
const endpointRate = Number(opt('--endpoint-rate', '500'));
const endpointSeconds = Number(opt('--endpoint-seconds', '60'));
const fanout = Number(opt('--fanout', '1000'));
// Controller processes (replicas) on the one cluster; 1 is the bench as it always was.
const replicas = Number(opt('--replicas', '1'));
if (!Number.isInteger(replicas) || replicas < 1) throw new Error(`--replicas ${opt('--replicas')}: not a count`);
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

// A client whose stream ends (its replica was killed, or the server closed it) reconnects as Envoy
// does: after a jittered exponential back-off (Envoy's xDS stream retry starts from a 500 ms base and
// stops growing at 30 s). Chosen here: the first retry after 500–1000 ms (uniform; the slow end of
// what Envoy may wait), the bound doubling after every attempt that got no response, up to 30 s, and
// starting over once a response arrives. It dials another live replica (spread by the client's
// number, as a Service's load balancing would once the dead Pod left its endpoints), or its own
// again if it is the only one. Unlike Envoy, which keeps serving what it had, the client drops what it
// held when its stream ends: holding a resource again means the new replica sent it.
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;
const retryDelay = (attempt) => Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (attempt - 1)) * (1 + Math.random());

/**
 * One proxy: RDS, EDS and CDS of its Gateway (all names), every response ACKed; `held` is what it holds
 * now, `replica` the controller it is connected (or dialing) to.
 */
function proxyClient(replica, gateway, delta, id) {
  const held = new Map();
  const waiters = new Set();
  const node = { id: `bench-${id}`, cluster: gateway };
  const c = {
    name: `${gateway} (${delta ? 'delta' : 'sotw'})`,
    held,
    waiters,
    replica,
    /** Streams opened (1 + reconnections); when the last one was lost, dialed, and first answered. */
    streams: 0,
    lostAt: undefined,
    dialedAt: undefined,
    answeredAt: undefined,
    /** The last back-off waited (ms). */
    backoffMs: undefined,
    close: () => undefined,
  };
  const notify = () => {
    for (const w of [...waiters])
      if (w.check()) {
        waiters.delete(w);
        w.resolve(performance.now());
      }
  };
  let closed = false;
  let attempt = 0;
  let retry;
  const connect = () => {
    c.streams++;
    c.dialedAt = performance.now();
    c.answeredAt = undefined;
    // A connection per proxy, as real proxies have (grpc-js would share one, and the server allows
    // 100 streams per connection). A subchannel pool of its own (the global one is searched
    // linearly), no DNS resolver (ipv4:) and no channelz: at thousands of clients, what grpc-js does
    // per channel costs the bench more than the dial, and it is the bench's, not the controller's.
    const client = new Ads(`ipv4:127.0.0.1:${controllers[c.replica].xdsPort}`, grpc.credentials.createInsecure(), {
      'bench.proxy': id,
      'grpc.use_local_subchannel_pool': 1,
      'grpc.enable_channelz': 0,
    });
    const stream = delta ? client.DeltaAggregatedResources() : client.StreamAggregatedResources();
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      client.close();
      if (closed) return;
      c.lostAt = performance.now();
      held.clear();
      attempt++;
      c.backoffMs = retryDelay(attempt);
      retry = setTimeout(() => {
        const live = controllers.map((_, i) => i).filter((i) => !controllers[i].killed);
        if (closed || !live.length) return;
        const others = live.filter((i) => i !== c.replica);
        const pool = others.length ? others : live;
        c.replica = pool[(id + attempt) % pool.length];
        connect();
      }, c.backoffMs);
    };
    stream.on('error', onLost);
    stream.on('end', onLost);
    stream.on('data', (r) => {
      attempt = 0;
      c.answeredAt ??= performance.now();
      if (delta) {
        for (const res of r.resources ?? [])
          held.set(`${r.type_url} ${res.name}`, res.resource.value.toString('latin1'));
        for (const name of r.removed_resources ?? []) held.delete(`${r.type_url} ${name}`);
        stream.write({ type_url: r.type_url, response_nonce: r.nonce });
      } else {
        for (const key of [...held.keys()]) if (key.startsWith(`${r.type_url} `)) held.delete(key);
        (r.resources ?? []).forEach((res, i) => held.set(`${r.type_url} ${i}`, res.value.toString('latin1')));
        stream.write({
          node,
          type_url: r.type_url,
          resource_names: ['*'],
          version_info: r.version_info,
          response_nonce: r.nonce,
        });
      }
      notify();
    });
    for (const type of TYPES)
      stream.write(
        delta
          ? { ...(type === RDS ? { node } : {}), type_url: type, resource_names_subscribe: ['*'] }
          : { node, type_url: type, resource_names: ['*'] },
      );
    c.close = () => {
      closed = true;
      clearTimeout(retry);
      stream.end();
      client.close();
    };
  };
  connect();
  return c;
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

/** The hostnames of Gateway `g`'s routes (every route keeps its own through all the bench's writes). */
const hostnamesOf = (g) => {
  const out = [];
  for (let r = g; r < routes; r += gateways) out.push(`r${r}.example.com`);
  return out;
};
/** RDS texts found to carry every route of a Gateway, by Gateway (the same bytes reach many clients). */
const completeRds = new Map();
/**
 * The client holds every resource it held in `before` (names under delta, counts under state of the
 * world) and its RDS carries every route of Gateway `g`.
 */
function holdsAll(c, before, g) {
  for (const key of before) if (!c.held.has(key)) return false;
  let known = completeRds.get(g);
  if (!known) completeRds.set(g, (known = new Set()));
  const rds = [...c.held].filter(([key]) => key.startsWith(RDS)).map(([, text]) => text);
  if (rds.some((text) => known.has(text))) return true;
  if (!hostnamesOf(g).every((h) => rds.some((text) => text.includes(h)))) return false;
  for (const text of rds) known.add(text);
  return true;
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
    // Since the previous scrape (prom-client resets the event loop histogram on each).
    loopLagP99Seconds: value('turnpike_process_nodejs_eventloop_lag_p99_seconds'),
    recordedBytes: value('turnpike_event_log_written_bytes'),
  };
}
/** Heap and RSS in MiB, from processMetrics. */
const memoryOf = (m) => ({ heapMib: Math.round(m.heapBytes / 2 ** 20), rssMib: Math.round(m.rssBytes / 2 ** 20) });
/**
 * turnpike_config_latency_seconds (first event of a change → a proxy's ACK), summed over Gateways and
 * over the replicas given: le → count.
 */
async function configLatencyBuckets(ctls) {
  const out = new Map();
  for (const ctl of ctls) {
    const text = await (await fetch(`http://127.0.0.1:${ctl.healthPort}/metrics`)).text();
    for (const m of text.matchAll(/^turnpike_config_latency_seconds_bucket\{le="([^"]+)"[^}]*\} ([0-9.e+]+)$/gm))
      out.set(m[1], (out.get(m[1]) ?? 0) + Number(m[2]));
  }
  return out;
}
/** The upper bound (ms) of the bucket holding quantile q of the ACKs between two readings. */
function bucketQuantile(before, after, q) {
  const les = [...after.keys()].filter((le) => le !== '+Inf').sort((a, b) => Number(a) - Number(b));
  const total = (after.get('+Inf') ?? 0) - (before.get('+Inf') ?? 0);
  for (const le of les) if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= q * total) return Number(le) * 1000;
  return Infinity;
}

/**
 * A control for the failover: in a process of its own (the bench's event loop is busy with a
 * thousand reconnecting clients), one fresh state-of-the-world client every `everyMs`, dialing the
 * `ports` in turn as a debug read (left out of the proxies' accounting), timed from its dial to
 * holding the routes of `gateway` (`marker`, the hostname of its last route) and its clusters and
 * endpoints. One JSON line per probe: { at (its dial, Date.now()), ms, port }. Runs until stopped.
 */
function probeProcess(ports, gateway, marker, everyMs = 500) {
  const script = `
    const { Ads, grpc } = await import(${JSON.stringify(new URL('./ads-client.mjs', import.meta.url).href)});
    const [ports, gateway, marker, everyMs] = JSON.parse(process.argv[1]);
    // Gone with the bench: its stdin closes.
    process.stdin.on('end', () => process.exit(0)).resume();
    const types = ${JSON.stringify(TYPES)};
    const node = { id: 'bench-probe', cluster: gateway,
      metadata: { fields: { 'turnpike.dev/debug-read': { boolValue: true } } } };
    for (let i = 0; ; i++) {
      const port = ports[i % ports.length];
      const [at, started] = [Date.now(), performance.now()];
      const client = new Ads('ipv4:127.0.0.1:' + port, grpc.credentials.createInsecure(),
        { 'grpc.use_local_subchannel_pool': 1, 'bench.probe': i });
      const stream = client.StreamAggregatedResources();
      const held = new Map();
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 30_000);
        stream.on('error', () => undefined);
        stream.on('data', (r) => {
          held.set(r.type_url, (r.resources ?? []).map((x) => x.value.toString('latin1')).join(''));
          stream.write({ node, type_url: r.type_url, resource_names: ['*'], version_info: r.version_info,
            response_nonce: r.nonce });
          if (types.every((t) => held.get(t)) && held.get(types[0]).includes(marker)) {
            clearTimeout(timer);
            process.stdout.write(JSON.stringify({ at, ms: performance.now() - started, port }) + '\\n');
            resolve();
          }
        });
        for (const type_url of types) stream.write({ node, type_url, resource_names: ['*'] });
      });
      stream.end();
      client.close();
      const left = everyMs - (performance.now() - started);
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    }`;
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', script, JSON.stringify([ports, gateway, marker, everyMs])],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const results = [];
  let rest = '';
  child.stdout.on('data', (b) => {
    const lines = (rest + b).split('\n');
    rest = lines.pop();
    for (const line of lines) if (line.trim()) results.push(JSON.parse(line));
  });
  return {
    results,
    stop: () => child.kill(),
  };
}

const cluster = await Cluster.start();
const clients = [];
/** The controller processes, replica i named bench-i (with --replicas 1, the one controller as ever). */
const controllers = [];
/**
 * The replica client p dials: round robin, shifted by one every round of Gateways, so that each
 * Gateway's clients are spread over the replicas too (client p serves Gateway p mod G) even when the
 * two counts share a factor.
 */
const replicaOf = (p) => (p + Math.floor(p / gateways)) % replicas;
const stopControllers = async () => {
  // A killed replica has nothing to stop (and stop() would wait for an exit already gone).
  await Promise.all(controllers.filter((c) => !c.killed).map((c) => c.stop()));
  controllers.length = 0;
};
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
  // Cold start: the controllers start with everything in place.
  const coldStart = async () => {
    for (let i = 0; i < replicas; i++)
      controllers.push(
        new Controller(cluster.controllerKubeconfig, [
          '--xds-plaintext',
          '--quiet-ms',
          '100',
          '--max-delay-ms',
          '500',
          ...(replicas > 1 ? ['--replica-name', `bench-${i}`] : []),
          // --record: the flight recorder on, as deploy/ runs the controller (a directory per replica).
          ...(record ? ['--record-dir', join(recordRoot, `replica-${i}`)] : []),
        ]),
      );
    const started = performance.now();
    await Promise.all(controllers.map((c) => c.start()));
    for (let p = 0; p < proxies; p++)
      clients.push(proxyClient(replicaOf(p), `bench/gw-${p % gateways}`, p % 2 === 0, p));
    // Every client has the last route of its Gateway.
    await Promise.all(clients.map((c, p) => until(c, lastRouteOf(p % gateways))));
    const ms = Math.round(performance.now() - started);
    const perReplica = (await Promise.all(controllers.map(processMetrics))).map(memoryOf);
    // With several replicas, the largest heap and RSS (each replica's in perReplica).
    return {
      ms,
      heapMib: Math.max(...perReplica.map((m) => m.heapMib)),
      rssMib: Math.max(...perReplica.map((m) => m.rssMib)),
      perReplica,
    };
  };
  /** Heap and RSS of every replica, as text. */
  const memoryText = (list) => list.map((m, i) => `bench-${i} heap ${m.heapMib} MiB, RSS ${m.rssMib} MiB`).join('; ');
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
        await stopControllers();
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
    if (replicas > 1) log(`  (${replicas} replicas: ${memoryText(cold.perReplica)})`);

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
    // (Every replica translates: their sum.)
    const translations = async () =>
      (await Promise.all(controllers.map((c) => c.metric('turnpike_translations_total')))).reduce((a, b) => a + b, 0);
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
    // Each replica's ProxyReport writes over the churn window: on a change of what its proxies say (one
    // falls behind or catches up, connects or leaves), at most one per 250 ms, and a renewal every 5 s.
    const REPORT_WRITES = 'turnpike_proxy_report_writes_total';
    const reportWrites = () => Promise.all(controllers.map((c) => c.metric(REPORT_WRITES)));
    const reportErrors = () => Promise.all(controllers.map((c) => c.metric(REPORT_WRITES, 'result="error"')));
    const [writesBefore, errorsBefore] = [await reportWrites(), await reportErrors()];
    const churnStart = performance.now();
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
    const churnSeconds = (performance.now() - churnStart) / 1000;
    const [writesAfter, errorsAfter] = [await reportWrites(), await reportErrors()];
    /** Per replica: report writes per second over the churn window, and failed writes. */
    const reportRate = writesAfter.map((n, i) => Math.round(((n - writesBefore[i]) / churnSeconds) * 100) / 100);
    const reportFailures = errorsAfter.map((n, i) => n - errorsBefore[i]);
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
    if (replicas > 1)
      log(
        `reports: ProxyReport writes per second per replica during the churn (${churnSeconds.toFixed(1)} s): ` +
          `${reportRate.map((r, i) => `bench-${i} ${r}`).join(', ')} (${reportFailures.reduce((a, b) => a + b, 0)} failed)`,
      );

    // Endpoint churn at the rate asked, one write in flight per slice (two would race at the API server);
    // a write's lag ends when every client of its Gateway holds it or a later write of the same slice.
    const lags = [];
    const pendingLags = [];
    let endpointWrites = 0;
    const cpuBefore = await Promise.all(controllers.map(processMetrics));
    const acksBefore = await configLatencyBuckets(controllers);
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
    const cpuAfter = await Promise.all(controllers.map(processMetrics));
    // Per replica, and (endpointCpu) all replicas together.
    const endpointCpus = cpuAfter.map((m, i) =>
      endpointWrites > 0 ? Math.round(((m.cpuSeconds - cpuBefore[i].cpuSeconds) / endpointElapsed) * 100) : null,
    );
    const endpointCpu = endpointWrites > 0 ? endpointCpus.reduce((a, b) => a + b, 0) : null;
    loopDelay.disable();
    // The controller's share: from the watch event it got to the proxies' ACK.
    const acksAfter = await configLatencyBuckets(controllers);
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
        `p99 ${pct(lags, 99)} ms; controller CPU ${endpointCpu}% of a core` +
        (replicas > 1 ? ` (${endpointCpus.map((c, i) => `bench-${i} ${c}%`).join(', ')})` : ''),
    );
    if (record) {
      const bytes = cpuAfter.reduce((n, m, i) => n + (m.recordedBytes - cpuBefore[i].recordedBytes), 0);
      log(`  (recording: ${Math.round(((bytes / endpointElapsed) * 3600) / 1024 / 1024)} MiB/h written at this rate)`);
    }

    // Fan-out: more clients, then the memory each stream costs, then one change seen by many.
    const firstNew = clients.length;
    const connectStart = performance.now();
    for (let p = firstNew; p < fanout; p++)
      clients.push(proxyClient(replicaOf(p), `bench/gw-${p % gateways}`, p % 2 === 0, p));
    await Promise.all(clients.slice(firstNew).map((c, k) => until(c, lastRouteOf((firstNew + k) % gateways), 120_000)));
    log(
      `fan-out: ${clients.length} clients connected (the last ${clients.length - firstNew} in ${Math.round(performance.now() - connectStart)} ms)`,
    );
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
    // Several replicas: each one's memory with all the fan-out clients connected.
    const fanoutMemory = replicas > 1 ? (await Promise.all(controllers.map(processMetrics))).map(memoryOf) : undefined;
    if (fanoutMemory) log(`memory with ${clients.length} clients: ${memoryText(fanoutMemory)}`);
    // No stream should have failed so far (a client that reconnected dropped what it held meanwhile).
    const reconnected = clients.filter((c) => c.streams > 1).length;
    if (reconnected) log(`(${reconnected} clients had to reconnect before the failover)`);

    // Failover (several replicas): SIGKILL a replica that is not the leader (the last such), with no
    // goodbye. Its clients' streams fail; each reconnects after its back-off to another replica
    // (proxyClient) and must hold its whole configuration again: the resources it held before the kill
    // and every route of its Gateway. Meanwhile: when the killed replica's ProxyReport stops counting.
    let failover;
    if (replicas > 1) {
      const leading = await Promise.all(controllers.map((c) => c.metric('turnpike_leader')));
      let victim = replicas - 1;
      while (victim > 0 && leading[victim] === 1) victim--;
      const theirs = clients.flatMap((c, p) => (c.replica === victim ? [{ c, g: p % gateways }] : []));
      const before = new Map(theirs.map(({ c }) => [c, new Set(c.held.keys())]));
      const survivors = controllers.filter((_, i) => i !== victim);
      const reportPath = `/apis/turnpike.dev/v1alpha1/namespaces/turnpike-system/proxyreports/bench-${victim}`;
      // Who is busy while the clients come back: the surviving replicas, and the bench itself; and how
      // long a fresh client in a process of its own takes to get a whole configuration from them.
      const probe = probeProcess(
        survivors.map((c) => c.xdsPort),
        'bench/gw-0',
        lastRouteOf(0),
      );
      for (const end = performance.now() + 30_000; probe.results.length < 3 && performance.now() < end;)
        await sleep(100);
      const survivorsBefore = await Promise.all(survivors.map(processMetrics));
      const failoverLoop = monitorEventLoopDelay({ resolution: 10 });
      failoverLoop.enable();
      const failoverCpu = process.cpuUsage();
      const killedAt = performance.now();
      const killedWall = Date.now();
      controllers[victim].kill();
      // Back: connected to another replica (its held resources were dropped when the stream failed)
      // and holding everything again. NaN: not within 60 s.
      const backing = Promise.all(
        theirs.map(({ c, g }) =>
          until(c, (x) => x.replica !== victim && holdsAll(x, before.get(x), g), 60_000).catch(() => NaN),
        ),
      );
      let allBack = false;
      void backing.then(() => (allBack = true));
      // The report is gone for the others once every survivor counts N-1 live reports (its lease ran
      // out without a renewal); then the leader deletes the object. The survivors' gauge is read only
      // once the clients are back (a scrape of /metrics resets the event loop delay measured over the
      // failover; the lease outlasts the reconnections), the object from the start.
      const expiry = (async () => {
        let liveMs;
        let deletedMs;
        while (performance.now() - killedAt < 120_000 && (liveMs === undefined || deletedMs === undefined)) {
          if (liveMs === undefined && allBack) {
            const live = await Promise.all(survivors.map((c) => c.metric('turnpike_proxy_reports_live')));
            if (live.every((n) => n === replicas - 1)) liveMs = Math.round(performance.now() - killedAt);
          }
          if (deletedMs === undefined && (await admin.request('GET', reportPath)).status === 404)
            deletedMs = Math.round(performance.now() - killedAt);
          await sleep(100);
        }
        return { liveMs, deletedMs };
      })();
      const back = await backing;
      const backWall = Date.now();
      probe.stop();
      const probeIdle = probe.results.filter((r) => r.at < killedWall).map((r) => r.ms);
      const probeFailover = probe.results.filter((r) => r.at >= killedWall && r.at <= backWall).map((r) => r.ms);
      // Per client back in time: when it held everything again, when it saw its stream fail, the
      // back-off it waited and its (last) dial to another replica.
      const ok = theirs.flatMap(({ c }, i) => (Number.isNaN(back[i]) ? [] : [{ c, at: back[i] }]));
      const allBackMs = ok.length === theirs.length ? Math.round(Math.max(...back) - killedAt) : null;
      const windowSeconds = (performance.now() - killedAt) / 1000;
      const survivorsAfter = await Promise.all(survivors.map(processMetrics));
      const survivorCpu = survivorsAfter.map((m, i) =>
        Math.round(((m.cpuSeconds - survivorsBefore[i].cpuSeconds) / windowSeconds) * 100),
      );
      failoverLoop.disable();
      const benchUsage = process.cpuUsage(failoverCpu);
      const benchCpu = Math.round((benchUsage.user + benchUsage.system) / 1e4 / windowSeconds);
      const benchLoopP99 = Math.round(failoverLoop.percentile(99) / 1e6);
      const backMs = ok.map(({ at }) => at - killedAt);
      const detectMs = ok.map(({ c }) => c.lostAt - killedAt);
      const backoffMs = ok.map(({ c }) => c.backoffMs);
      // From the dial to holding everything: the serving side's share.
      const dialToFullMs = ok.map(({ c, at }) => at - c.dialedAt);
      const dialToAnswerMs = ok.map(({ c }) => c.answeredAt - c.dialedAt);
      const survivorLoopMs = survivorsAfter.map((m) => Math.round(m.loopLagP99Seconds * 1000));
      const { liveMs, deletedMs } = await expiry;
      // The leader's ProxiesInSync on a Gateway that had clients on the killed replica counts each of its
      // clients once (the dead report named them too until it expired): the true number.
      let inSync;
      if (theirs.length) {
        const g = theirs[0].g;
        const truth = clients.filter((_, p) => p % gateways === g).length;
        for (const end = performance.now() + 10_000; performance.now() < end; await sleep(200)) {
          const gw = await admin.must('GET', `/apis/${GW}/namespaces/bench/gateways/gw-${g}`);
          const message = gw.status?.conditions?.find((x) => x.type === 'turnpike.dev/ProxiesInSync')?.message ?? '';
          inSync = {
            gateway: `gw-${g}`,
            counted: Number(/(\d+) connected prox/.exec(message)?.[1] ?? NaN),
            truth,
            message,
          };
          if (inSync.counted === truth) break;
        }
      }
      failover = {
        killed: `bench-${victim}`,
        clients: theirs.length,
        back: ok.length,
        all_back_ms: allBackMs,
        back_ms: { p50: pct(backMs, 50) },
        detect_ms_max: pct(detectMs, 100),
        backoff_ms: { p50: pct(backoffMs, 50), max: pct(backoffMs, 100) },
        dial_to_full_ms: { p50: pct(dialToFullMs, 50), p99: pct(dialToFullMs, 99), max: pct(dialToFullMs, 100) },
        dial_to_first_answer_ms: { p50: pct(dialToAnswerMs, 50), max: pct(dialToAnswerMs, 100) },
        survivor_loop_delay_p99_ms: survivorLoopMs,
        survivor_cpu_pct: survivorCpu,
        probe_ms: {
          before: pct(probeIdle, 50),
          during: { count: probeFailover.length, p50: pct(probeFailover, 50), max: pct(probeFailover, 100) },
        },
        bench_cpu_pct: benchCpu,
        bench_loop_delay_p99_ms: benchLoopP99,
        report_gone_ms: liveMs ?? null,
        report_deleted_ms: deletedMs ?? null,
        proxies_in_sync: inSync,
      };
      log(
        `failover: SIGKILL bench-${victim} (not the leader) → all ${ok.length} of its ${theirs.length} clients hold ` +
          `their whole configuration again from another replica in ${allBackMs} ms (p50 ${failover.back_ms.p50} ms; ` +
          `stream failure seen ≤ ${failover.detect_ms_max} ms, back-off p50 ${failover.backoff_ms.p50} ms, ` +
          `max ${failover.backoff_ms.max} ms; dial → whole configuration p50 ${failover.dial_to_full_ms.p50} ms, ` +
          `max ${failover.dial_to_full_ms.max} ms, to a first answer p50 ${failover.dial_to_first_answer_ms.p50} ms)`,
      );
      log(
        `  (meanwhile the other replicas at ${survivorCpu.join('%, ')}% of a core, event loop delay p99 ` +
          `${survivorLoopMs.join(', ')} ms; the bench at ${benchCpu}% with event loop delay p99 ${benchLoopP99} ms; ` +
          `a client in a process of its own, dialing them every 0.5 s, had its whole configuration in ` +
          `p50 ${failover.probe_ms.during.p50} ms, max ${failover.probe_ms.during.max} ms ` +
          `(${probeFailover.length} probes; before the kill ${failover.probe_ms.before} ms))`,
      );
      log(
        `  its report counted as gone by every other replica ${liveMs} ms after the kill, deleted by the leader ` +
          `after ${deletedMs} ms; ${inSync ? `${inSync.gateway}'s ProxiesInSync counts ${inSync.counted} proxies of ${inSync.truth}` : ''}` +
          (inSync && inSync.counted !== inSync.truth
            ? ` (${inSync.message ? JSON.stringify(inSync.message) : "not in its status yet: the leader's status writes (one at a time, at most 50/s) had not reached it"})`
            : ''),
      );
    }

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
      // Several replicas: heap_mib is the largest; each one's memory, report writes and the failover.
      ...(replicas > 1
        ? {
            replicas,
            report_writes_per_s: reportRate,
            report_write_failures: reportFailures.reduce((a, b) => a + b, 0),
            memory_mib: { cold_start: cold.perReplica, fanout: fanoutMemory },
            endpoint_cpu_pct_per_replica: endpointCpus,
            failover,
          }
        : {}),
    };
    if (json) process.stdout.write(`${JSON.stringify({ sizes: [result] })}\n`);
  }
} finally {
  for (const c of clients) c.close();
  await stopControllers();
  await cluster.stop();
  execFileSync('rm', ['-rf', out]);
}
