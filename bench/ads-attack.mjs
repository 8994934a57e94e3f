#!/usr/bin/env node
// What one proxy identity can make the ADS server hold (docs/security.md, "Bounds on callers"): the
// real server (plaintext, node.cluster is the identity), with ten Gateways in its cache, and an
// attacker in a child process (so that its memory is not counted). Heap and external (buffer) memory
// are read after a full GC, and RSS, before the attack and once it has done what it can.
//   node --expose-gc bench/ads-attack.mjs names|names-streams|streams|silent [--dist packages/xds/dist] [--json]
//   names:   one delta stream of Gateway 0 subscribes to 8 000 names of 40 kB (320 MB of names), 90 per
//            request; then a stream of Gateway 1 asks for its listeners.
//   names-streams: the same over 20 delta streams of 360 names (14.4 MB each, 288 MB in all).
//   streams: Gateway 0 opens 10 000 streams (100 connections of 100); then a stream of Gateway 1.
//   silent:  9 000 TCP connections that send nothing, held 15 s; then a stream of Gateway 1.
// --dist: another build of the xds package (the one before a change, to compare).
// --json prints {"attack", "before_mib", "after_mib", "rss_mib", "held", "refused", "other_served"}; "held" is
// what the attacker still holds at the end (names, streams, connections).
import { fork } from 'node:child_process';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const attack = args[0];
const EDS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const GATEWAYS = Array.from({ length: 10 }, (_, i) => `bench/gw${i}`);

/** A client with a connection of its own. */
const clientOf = (Ads, grpc, port) =>
  new Ads(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });

/** One SotW stream of `gateway` asking for listeners: 'served', or the error that ended it. */
function ask(client, gateway) {
  const stream = client.StreamAggregatedResources();
  return {
    stream,
    result: new Promise((done) => {
      stream.on('data', () => done('served'));
      stream.on('error', (e) => done(`refused: ${e.details}`));
      stream.write({ node: { id: 'bench', cluster: gateway }, type_url: LDS });
    }),
  };
}

if (attack === '--attacker') {
  // The child: the attack named by args[1] on the server at args[2].
  const [, kind, port] = args;
  const { Ads, grpc } = await import('./ads-client.mjs');
  const report = (m) => process.send(m);
  // One delta stream subscribing to `count` names of 40 kB, 90 per request: how many it holds at the end.
  const subscribe = async (client, count, tag) => {
    const stream = client.DeltaAggregatedResources();
    let refused = '';
    let responses = 0;
    let answered = () => undefined;
    const ended = new Promise((r) =>
      stream.on('error', (e) => {
        refused = e.details;
        answered();
        r();
      }),
    );
    stream.on('data', () => {
      responses++;
      answered();
    });
    const node = { id: 'bench', cluster: GATEWAYS[0] };
    const pad = 'x'.repeat(40_000);
    let sent = 0;
    for (let batch = 0; sent < count && !refused; batch++) {
      const names = Array.from({ length: Math.min(90, count - sent) }, (_, i) => `${tag}-${batch}-${i}-${pad}`);
      sent += names.length;
      await Promise.race([
        new Promise((r) => stream.write({ node, type_url: EDS, resource_names_subscribe: names }, r)),
        ended,
      ]);
    }
    // A new type is answered at once (as the first EDS request was): once it is, the server has read
    // every request before it.
    stream.write({ node, type_url: LDS });
    while (responses < 2 && !refused) await new Promise((r) => (answered = r));
    return { held: refused ? 0 : sent, refusal: refused };
  };
  if (kind === 'names' || kind === 'names-streams') {
    const client = new Ads(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    // 320 MB of names on one stream, or 288 MB over 20 streams of 14.4 MB.
    const [streams, each] = kind === 'names' ? [1, 8_000] : [20, 360];
    const results = [];
    for (let i = 0; i < streams; i++) results.push(await subscribe(client, each, i));
    const held = results.reduce((n, r) => n + r.held, 0);
    report({ held, refusal: results.find((r) => r.refusal)?.refusal ?? '' });
  } else if (kind === 'streams') {
    const results = [];
    for (let c = 0; c < 100; c++) {
      const client = clientOf(Ads, grpc, port);
      for (let s = 0; s < 100; s++) results.push(ask(client, GATEWAYS[0]).result);
    }
    const all = await Promise.all(results);
    const held = all.filter((r) => r === 'served').length;
    report({ held, refused: all.length - held, refusal: all.find((r) => r !== 'served') ?? '' });
  } else if (kind === 'silent') {
    const sockets = [];
    let closed = 0;
    await Promise.all(
      Array.from(
        { length: 9_000 },
        () =>
          new Promise((r) => {
            const s = connect(Number(port), '127.0.0.1', () => r());
            s.on('error', () => r());
            s.on('close', () => closed++);
            s.resume();
            sockets.push(s);
          }),
      ),
    );
    report({ phase: 'connected' });
    await new Promise((r) => setTimeout(r, 15_000));
    report({ held: sockets.length - closed, refused: closed, refusal: '' });
  }
  // Held until the parent has measured.
  process.on('message', () => process.exit(0));
} else {
  if (!['names', 'names-streams', 'streams', 'silent'].includes(attack))
    throw new Error('usage: ads-attack.mjs names|names-streams|streams|silent');
  if (!globalThis.gc) throw new Error('run with node --expose-gc');
  const dist = resolve(opt('--dist', 'packages/xds/dist'));
  const { AdsServer, SnapshotCache } = await import(pathToFileURL(`${dist}/index.js`).href);
  const { Ads, grpc } = await import('./ads-client.mjs');
  const cache = new SnapshotCache();
  cache.setAll(new Map(GATEWAYS.map((g) => [g, new Map()])));
  const refusals = new Map();
  const server = new AdsServer({
    cache,
    onRefuse: (r) => refusals.set(r.reason, (refusals.get(r.reason) ?? 0) + 1),
  });
  const port = await server.listen('127.0.0.1:0');
  const mib = (n) => Math.round(n / 1024 / 1024);
  const measure = () => {
    globalThis.gc();
    globalThis.gc();
    const m = process.memoryUsage();
    return { heap: m.heapUsed + m.external, rss: m.rss };
  };
  const before = measure();
  const child = fork(fileURLToPath(import.meta.url), ['--attacker', attack, String(port)], { stdio: 'inherit' });
  const messages = [];
  let wake = () => undefined;
  child.on('message', (m) => {
    messages.push(m);
    wake();
  });
  const next = () => new Promise((r) => (messages.length ? r(messages.shift()) : (wake = () => r(messages.shift()))));
  let peak;
  let outcome = await next();
  if (outcome.phase === 'connected') {
    peak = measure();
    outcome = await next();
  }
  const after = measure();
  const other = ask(clientOf(Ads, grpc, port), GATEWAYS[1]);
  const otherServed = await Promise.race([other.result, new Promise((r) => setTimeout(() => r('no answer'), 10_000))]);
  other.stream.cancel();
  const result = {
    attack,
    before_mib: mib(before.heap),
    after_mib: mib((peak ?? after).heap),
    rss_mib: mib((peak ?? after).rss),
    held: outcome.held,
    // What the server says it holds (this build and later).
    ...(server.connections ? { server_connections: server.connections } : {}),
    refused: Object.fromEntries(refusals),
    other_served: otherServed,
  };
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
  else process.stderr.write(`${JSON.stringify(result, null, 1)}\n`);
  child.send('done');
  await server.close();
  process.exit(0);
}
