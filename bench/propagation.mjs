#!/usr/bin/env node
// From the API server to every proxy: a real kube-apiserver and etcd (the e2e harness, compiled on the
// fly), the controller as a process with --kubeconfig, and P ADS clients (delta and state of the world,
// alternating) spread over G Gateways, each ACKing every response as Envoy does. Measures:
//   cold start   controller start → every client has every route of its Gateway
//   idle         one HTTPRoute update (time of the API server's answer) → the last client of its
//                Gateway has it; p50 / p99 over --updates updates, one at a time
//   churn        the same updates while a background writer changes --churn objects per second
// xDS is served in plaintext here (the bench measures propagation, not TLS handshakes).
//   pnpm bench:propagation [--routes 1000] [--gateways 100] [--proxies 200] [--updates 50] [--churn 50] [--json]
//                          [--cli OTHER/packages/cli/dist/main.js]
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const routes = Number(opt('--routes', '1000'));
const gateways = Number(opt('--gateways', '100'));
const proxies = Number(opt('--proxies', '200'));
const updates = Number(opt('--updates', '50'));
const churnPerSecond = Number(opt('--churn', '50'));
const json = args.includes('--json');
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

const xdsRequire = createRequire(join(ROOT, 'packages/xds/package.json'));
const grpc = xdsRequire('@grpc/grpc-js');
const protoLoader = xdsRequire('@grpc/proto-loader');
const { INCLUDE_DIRS } = await import(join(ROOT, 'packages/xds/dist/index.js'));
const Ads = grpc.loadPackageDefinition(
  protoLoader.loadSync('envoy/service/discovery/v3/ads.proto', {
    keepCase: true,
    longs: String,
    enums: String,
    oneofs: true,
    includeDirs: INCLUDE_DIRS,
  }),
).envoy.service.discovery.v3.AggregatedDiscoveryService;
const RDS = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
const GW = 'gateway.networking.k8s.io/v1';

const pct = (list, p) => {
  const s = [...list].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]) : null;
};

/** One proxy: RDS of its Gateway (all names), every response ACKed; `text` is what it holds now. */
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
      for (const res of r.resources ?? []) held.set(res.name, res.resource.value.toString('latin1'));
      for (const name of r.removed_resources ?? []) held.delete(name);
      stream.write({ type_url: RDS, response_nonce: r.nonce });
      notify();
    });
    stream.on('error', () => undefined);
    stream.write({ node, type_url: RDS, resource_names_subscribe: ['*'] });
    return { name: `${gateway} (delta)`, held, waiters, close: () => (stream.end(), client.close()) };
  }
  const stream = client.StreamAggregatedResources();
  stream.on('data', (r) => {
    held.clear();
    (r.resources ?? []).forEach((res, i) => held.set(String(i), res.value.toString('latin1')));
    stream.write({ node, type_url: RDS, resource_names: ['*'], version_info: r.version_info, response_nonce: r.nonce });
    notify();
  });
  stream.on('error', () => undefined);
  stream.write({ node, type_url: RDS, resource_names: ['*'] });
  return { name: `${gateway} (sotw)`, held, waiters, close: () => (stream.end(), client.close()) };
}

const has = (c, marker) => [...c.held.values()].some((t) => t.includes(marker));
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

const route = (r, marker = `/r${r}`) => ({
  apiVersion: GW,
  kind: 'HTTPRoute',
  metadata: { name: `route-${r}`, namespace: 'bench' },
  spec: {
    parentRefs: [{ name: `gw-${r % gateways}`, namespace: 'bench' }],
    hostnames: [`r${r}.example.com`],
    rules: [{ matches: [{ path: { type: 'PathPrefix', value: marker } }], backendRefs: [{ name: 'app', port: 8080 }] }],
  },
});

const cluster = await Cluster.start();
const clients = [];
let controller;
try {
  const admin = cluster.admin;
  const plural = { Service: 'services', Gateway: 'gateways', HTTPRoute: 'httproutes' };
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
  for (let g = 0; g < gateways; g++)
    await create({
      apiVersion: GW,
      kind: 'Gateway',
      metadata: { name: `gw-${g}`, namespace: 'bench' },
      spec: { gatewayClassName: 'bench', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    });
  const t0 = performance.now();
  for (let r = 0; r < routes; r += 20)
    await Promise.all(Array.from({ length: Math.min(20, routes - r) }, (_, i) => create(route(r + i))));
  log(`${routes} routes, ${gateways} Gateways written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // Cold start: the controller starts with everything in place.
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
  const lastRouteOf = (g) => {
    let r = g;
    while (r + gateways < routes) r += gateways;
    return `/r${r}`;
  };
  await Promise.all(clients.map((c, p) => until(c, lastRouteOf(p % gateways))));
  const coldStartMs = Math.round(performance.now() - started);
  log(`cold start: controller start → all ${proxies} clients have their routes in ${coldStartMs} ms`);

  /** One route update; ms from the API server's answer to the last client of its Gateway having it. */
  const updateOnce = async (r, i) => {
    const marker = `/u${i}-${Date.now()}`;
    const g = r % gateways;
    const mine = clients.filter((_, p) => p % gateways === g);
    // A merge patch: no resourceVersion to race with the controller's status writes.
    await admin.must(
      'PATCH',
      `/apis/${GW}/namespaces/bench/httproutes/route-${r}`,
      { spec: route(r, marker).spec },
      'application/merge-patch+json',
    );
    const written = performance.now();
    const seen = await Promise.all(mine.map((c) => until(c, marker)));
    return Math.max(...seen) - written;
  };
  const idle = [];
  for (let i = 0; i < updates; i++) {
    idle.push(await updateOnce((i * 7919) % routes, i));
    await sleep(150);
  }
  log(`idle: route update → every client of its Gateway: p50 ${pct(idle, 50)} ms, p99 ${pct(idle, 99)} ms`);

  const churn = [];
  let stop = false;
  let churned = 0;
  const writer = (async () => {
    let i = 0;
    while (!stop) {
      const r = (i++ * 104729) % routes;
      await admin.must(
        'PATCH',
        `/apis/${GW}/namespaces/bench/httproutes/route-${r}`,
        { spec: { hostnames: [`r${r}.example.com`, `c${i}.example.com`] } },
        'application/merge-patch+json',
      );
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
  log(
    `churn (${churnPerSecond}/s background writes, ${churned} in all): p50 ${pct(churn, 50)} ms, p99 ${pct(churn, 99)} ms`,
  );
  const result = {
    routes,
    gateways,
    proxies,
    idle_ms: { p50: pct(idle, 50), p99: pct(idle, 99) },
    churn_ms: { p50: pct(churn, 50), p99: pct(churn, 99) },
    cold_start_ms: coldStartMs,
  };
  if (json) process.stdout.write(`${JSON.stringify({ sizes: [result] })}\n`);
} finally {
  for (const c of clients) c.close();
  await controller?.stop();
  await cluster.stop();
  execFileSync('rm', ['-rf', out]);
}
