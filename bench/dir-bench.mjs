#!/usr/bin/env node
// `turnpike run --dir` on a synthetic cluster written as YAML (one file per namespace): the CPU it
// uses while nothing changes, and how long an edit of one file takes to reach an ADS client, saved in
// place and saved the way most editors do (a temporary file renamed over the old one).
//   node bench/dir-bench.mjs [--routes 10000] [--edits 10] [--idle-s 10] [--json]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INCLUDE_DIRS } from '../packages/xds/dist/index.js';
import { syntheticCluster } from './synthetic-cluster.mjs';

const require = createRequire(new URL('../packages/xds/package.json', import.meta.url));
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const YAML = createRequire(new URL('../packages/engine/package.json', import.meta.url))('yaml');

const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const routes = Number(opt('--routes', '10000'));
const edits = Number(opt('--edits', '10'));
const idleS = Number(opt('--idle-s', '10'));
const json = args.includes('--json');
const log = (s) => {
  if (!json) process.stderr.write(`${s}\n`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'turnpike-dirbench-'));
const byNs = new Map();
for (const o of syntheticCluster(routes)) {
  const ns = o.metadata.namespace ?? '_cluster';
  if (!byNs.has(ns)) byNs.set(ns, []);
  byNs.get(ns).push(o);
}
for (const [ns, list] of byNs) {
  mkdirSync(join(dir, ns));
  writeFileSync(join(dir, ns, 'manifests.yaml'), list.map((o) => YAML.stringify(o)).join('---\n'));
}

const port = 20000 + Math.floor(Math.random() * 20000);
const t0 = Date.now();
const proc = spawn(
  process.execPath,
  [
    'packages/cli/dist/main.js',
    'run',
    '--dir',
    dir,
    '--xds-address',
    `127.0.0.1:${port}`,
    '--plugin-address',
    '127.0.0.1:0',
  ],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);
let stderr = '';
proc.stderr.on('data', (d) => {
  stderr += d;
});

const def = protoLoader.loadSync('envoy/service/discovery/v3/ads.proto', {
  keepCase: true,
  longs: String,
  enums: String,
  oneofs: true,
  includeDirs: INCLUDE_DIRS,
});
const Ads = grpc.loadPackageDefinition(def).envoy.service.discovery.v3.AggregatedDiscoveryService;
const RDS = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';

function cpuSeconds() {
  const f = readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks of 1/100 s
}

try {
  // route-0 (team-0, gw-0) is served on port 8080's RouteConfiguration.
  const client = new Ads(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  let onResponse = () => undefined;
  let last = '';
  const connect = () => {
    const stream = client.DeltaAggregatedResources();
    stream.on('data', (r) => {
      for (const res of r.resources ?? []) last = res.resource.value.toString('latin1');
      stream.write({ type_url: RDS, response_nonce: r.nonce });
      onResponse();
    });
    stream.on('error', () => undefined);
    stream.write({
      node: { id: 'bench', cluster: 'infra/gw-0' },
      type_url: RDS,
      resource_names_subscribe: ['tcp-8080'],
    });
    return stream;
  };
  let stream;
  for (;;) {
    if (Date.now() - t0 > 300_000) throw new Error(`no xDS after 300 s:\n${stderr}`);
    await sleep(200);
    if (!/serving xDS/.test(stderr)) continue;
    stream ??= connect();
    if (last.includes('/api/v1')) break;
  }
  const startMs = Date.now() - t0;
  log(`${routes} routes: first config at the client after ${startMs} ms`);
  await sleep(3000); // let start-up work settle
  const c0 = cpuSeconds();
  await sleep(idleS * 1000);
  const idleCpu = (cpuSeconds() - c0) / idleS;
  log(`  idle: ${(idleCpu * 100).toFixed(1)}% of a core over ${idleS} s`);

  const file = join(dir, 'team-0', 'manifests.yaml');
  const original = readFileSync(file, 'utf8');
  // Two ways to save: in place, and as most editors and tools do (a temporary file renamed over the old).
  const save = {
    'in place': (text) => writeFileSync(file, text),
    rename: (text) => {
      writeFileSync(`${file}.tmp~`, text);
      renameSync(`${file}.tmp~`, file);
    },
  };
  const figures = {};
  for (const [how, write] of Object.entries(save)) {
    const latencies = [];
    for (let i = 1; i <= edits; i++) {
      const marker = `/edited-${how.replace(' ', '-')}-${i}-${Date.now()}`;
      const seen = new Promise((resolve) => {
        onResponse = () => {
          if (last.includes(marker)) resolve();
        };
      });
      const start = process.hrtime.bigint();
      write(original.replace('value: /health0', `value: ${marker}`));
      await Promise.race([
        seen,
        sleep(30_000).then(() => {
          throw new Error('edit not seen in 30 s');
        }),
      ]);
      latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
      await sleep(300);
    }
    latencies.sort((a, b) => a - b);
    const median = latencies[Math.floor(latencies.length / 2)];
    const p90 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.9))];
    figures[how] = { median: Math.round(median), p90: Math.round(p90) };
    log(
      `  edit saved ${how} → ADS client: median ${median.toFixed(0)} ms, p90 ${p90.toFixed(0)} ms (holdoff included)`,
    );
  }
  stream.end();
  client.close();
  if (json)
    process.stdout.write(
      `${JSON.stringify({ routes, first_config_ms: startMs, idle_cpu_percent: Math.round(idleCpu * 1000) / 10, edit_to_client_ms: figures['in place'], rename_to_client_ms: figures.rename })}\n`,
    );
} finally {
  proc.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
