#!/usr/bin/env node
// Plugin fetch benchmark: resolve + download (streamed sha256) + extract, from Debian's
// docker-registry on loopback, for a small Lua script in an image layer and Wasm modules of
// 1 MiB and 16 MiB as OCI artifacts. Median and p90 of 15 runs each; a fresh client per run, so
// nothing is cached between runs. Needs /usr/bin/docker-registry (scripts/test.sh installs it).
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { parseImageReference } from '../packages/api/dist/index.js';
import { extractPlugin, OciClient, pluginLayer, PLUGIN_LAYER_MEDIA_TYPES } from '../packages/plugins/dist/index.js';

// tar-stream is a dependency of the plugins package, resolved from there.
const { pack } = createRequire(new URL('../packages/plugins/package.json', import.meta.url))('tar-stream');

const port = await new Promise((r) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => r(p));
  });
});
const dir = mkdtempSync(join(tmpdir(), 'tp-bench-registry-'));
writeFileSync(
  join(dir, 'config.yml'),
  `version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: ${dir}/data}}\nhttp: {addr: 127.0.0.1:${port}}\n`,
);
const reg = spawn('/usr/bin/docker-registry', ['serve', join(dir, 'config.yml')], { stdio: 'ignore' });
const host = `127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`http://${host}/v2/`)).ok) break;
  } catch {
    /* starting */
  }
  if (i > 100) throw new Error('registry did not start');
  await new Promise((r) => setTimeout(r, 100));
}
const digestOf = (b) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
async function blob(repo, data) {
  const start = await fetch(`http://${host}/v2/${repo}/blobs/uploads/`, { method: 'POST' });
  const loc = new URL(start.headers.get('location'), `http://${host}`);
  loc.searchParams.set('digest', digestOf(data));
  await fetch(loc, { method: 'PUT', body: data, headers: { 'content-type': 'application/octet-stream' } });
  return { digest: digestOf(data), size: data.length };
}
async function push(repo, layer, layerType) {
  const config = Buffer.from('{}');
  const l = await blob(repo, layer),
    c = await blob(repo, config);
  const manifest = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.empty.v1+json', ...c },
    layers: [{ mediaType: layerType, ...l }],
  };
  await fetch(`http://${host}/v2/${repo}/manifests/v1`, {
    method: 'PUT',
    body: JSON.stringify(manifest),
    headers: { 'content-type': manifest.mediaType },
  });
}
async function tarGz(name, body) {
  const p = pack();
  p.entry({ name }, body);
  p.finalize();
  const chunks = [];
  for await (const c of p) chunks.push(c);
  return gzipSync(Buffer.concat(chunks));
}
const wasm = (n) => Buffer.concat([Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]), randomBytes(n - 8)]);
const cases = [
  {
    name: 'lua 4 KiB, image layer',
    repo: 'bench/lua',
    type: 'lua',
    layer: await tarGz('plugin.lua', Buffer.from(`-- ${'x'.repeat(4090)}\n`)),
    layerType: 'application/vnd.oci.image.layer.v1.tar+gzip',
  },
  {
    name: 'wasm 1 MiB, artifact',
    repo: 'bench/wasm1',
    type: 'wasm',
    layer: wasm(1 << 20),
    layerType: PLUGIN_LAYER_MEDIA_TYPES.wasm,
  },
  {
    name: 'wasm 16 MiB, artifact',
    repo: 'bench/wasm16',
    type: 'wasm',
    layer: wasm(16 << 20),
    layerType: PLUGIN_LAYER_MEDIA_TYPES.wasm,
  },
];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
try {
  console.log('| plugin | median | p90 |\n|---|---|---|');
  for (const c of cases) {
    await push(c.repo, c.layer, c.layerType);
    const ref = parseImageReference(`${host}/${c.repo}:v1`);
    const times = [];
    for (let i = 0; i < 15; i++) {
      const client = new OciClient({ maxBytes: 32 << 20, timeoutMs: 30_000 });
      const t0 = process.hrtime.bigint();
      const r = await client.resolve(ref);
      const pl = pluginLayer(r.manifest, c.type, c.name);
      await extractPlugin(await client.blob(ref, pl.layer), pl, c.type, 32 << 20, c.name);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    console.log(`| ${c.name} | ${pct(times, 0.5).toFixed(1)} ms | ${pct(times, 0.9).toFixed(1)} ms |`);
  }
} finally {
  reg.kill();
  rmSync(dir, { recursive: true, force: true });
}
