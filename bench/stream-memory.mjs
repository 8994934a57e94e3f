#!/usr/bin/env node
// What one more proxy stream costs the controller, beyond the encoded resources every stream
// shares: the real ADS server and snapshot cache serving a translated synthetic cluster, with N
// clients in a child process (so that their memory is not counted), each on its own connection,
// subscribed to every type and ACKing as Envoy does. Heap and external (buffer) memory are read
// after a full GC, before the clients connect and once they all hold their configuration.
//   node --expose-gc bench/stream-memory.mjs [--routes 10000] [--streams 1000] [--json]
// --json prints {"routes", "streams", "stream_kib"} on the last line.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const TYPES = [
  'type.googleapis.com/envoy.config.listener.v3.Listener',
  'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
];

if (args[0] === '--clients') {
  // The child: N clients of the server at `port`, spread over the Gateways; "ready" once every one
  // has had a response of every type.
  const [, port, count, ...gateways] = args;
  const { Ads, grpc } = await import('./ads-client.mjs');
  let pending = Number(count);
  for (let i = 0; i < Number(count); i++) {
    const client = new Ads(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'bench.client': i });
    const stream = client.StreamAggregatedResources();
    const node = { id: `mem-${i}`, cluster: gateways[i % gateways.length] };
    const got = new Set();
    stream.on('data', (r) => {
      stream.write({
        node,
        type_url: r.type_url,
        resource_names: ['*'],
        version_info: r.version_info,
        response_nonce: r.nonce,
      });
      got.add(r.type_url);
      if (got.size === TYPES.length && !got.done) {
        got.done = true;
        if (--pending === 0) process.send('ready');
      }
    });
    stream.on('error', () => undefined);
    for (const type of TYPES) stream.write({ node, type_url: type, resource_names: ['*'] });
  }
} else {
  const json = args.includes('--json');
  const routes = Number(opt('--routes', '10000'));
  const streams = Number(opt('--streams', '1000'));
  if (!globalThis.gc) throw new Error('run with node --expose-gc');
  const { applyEvents, EMPTY_SNAPSHOT, upsert } = await import('../packages/engine/dist/index.js');
  const { Translator } = await import('../packages/translator/dist/index.js');
  const { AdsServer, SnapshotCache, XdsSnapshotBuilder } = await import('../packages/xds/dist/index.js');
  const { syntheticCluster } = await import('./synthetic-cluster.mjs');
  const objects = syntheticCluster(routes);
  const snapshot = applyEvents(
    EMPTY_SNAPSHOT,
    objects.map((o) => upsert('bench', o)),
  ).snapshot;
  const result = new Translator().translate(snapshot);
  const lookup = (kind, ns, name) => snapshot.get(kind)?.get(ns)?.get(name);
  const cache = new SnapshotCache();
  const measure = () => {
    globalThis.gc();
    globalThis.gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  cache.setAll(new XdsSnapshotBuilder().build(result.xdsIR, lookup));
  const server = new AdsServer({ cache });
  const port = await server.listen('127.0.0.1:0');
  const before = measure();
  const gateways = [...result.xdsIR.gateways.keys()];
  const child = fork(fileURLToPath(import.meta.url), ['--clients', String(port), String(streams), ...gateways], {
    stdio: 'inherit',
  });
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`clients exited (${code})`)));
  });
  await new Promise((r) => setTimeout(r, 1000));
  const after = measure();
  const streamKib = Math.round((after - before) / 1024 / streams);
  const line = `${routes} routes, ${gateways.length} Gateways: ${streams} streams cost ${streamKib} KiB each beyond the snapshots they share`;
  if (json) process.stdout.write(`${JSON.stringify({ routes, streams, stream_kib: streamKib })}\n`);
  else process.stderr.write(`${line}\n`);
  child.kill();
  await server.close();
  process.exit(0);
}
