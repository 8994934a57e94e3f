// The plugin OCI client against a real registry (Debian's docker-registry on loopback).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseImageReference } from '@turnpike/api';
import {
  extractPlugin,
  OciClient,
  pluginLayer,
  PluginFetchError,
  PLUGIN_LAYER_MEDIA_TYPES,
  type PluginType,
} from '../src/index.js';
import type { RegistryCredentials } from '../src/docker-config.js';
import { TestRegistry } from './support/registry.js';

const LUA = 'function envoy_on_request(h) h:headers():add("x-plugin", "hello") end\n';
const WASM = Buffer.concat([Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]), Buffer.alloc(64, 1)]);

async function fetchPlugin(
  client: OciClient,
  image: string,
  type: PluginType,
  creds?: RegistryCredentials,
): Promise<{ digest: string; content: Buffer }> {
  const ref = parseImageReference(image);
  const r = await client.resolve(ref, creds);
  const layer = pluginLayer(r.manifest, type, image);
  const blob = await client.blob(ref, layer.layer, creds);
  return { digest: r.digest, content: await extractPlugin(blob, layer, type, 1 << 20, image) };
}

async function failure(p: Promise<unknown>): Promise<PluginFetchError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PluginFetchError) return e;
    throw e;
  }
  throw new Error('expected the fetch to fail');
}

const client = new OciClient({ maxBytes: 1 << 20, timeoutMs: 5000 });

describe('plugin OCI client, anonymous registry', () => {
  let reg: TestRegistry;
  beforeAll(async () => {
    reg = await TestRegistry.start();
  });
  afterAll(async () => {
    await reg.stop();
  });

  it('fetches a Lua plugin from a single-layer OCI image by tag and by digest', async () => {
    const digest = await reg.pushImage('team/hello', 'v1', { 'plugin.lua': LUA, 'README.md': 'ignored' });
    const byTag = await fetchPlugin(client, `${reg.host}/team/hello:v1`, 'lua');
    expect(byTag.digest).toBe(digest);
    expect(byTag.content.toString()).toBe(LUA);
    const byDigest = await fetchPlugin(client, `${reg.host}/team/hello@${digest}`, 'lua');
    expect(byDigest.content.toString()).toBe(LUA);
  });

  it('fetches from a Docker manifest and through an index, skipping attestations', async () => {
    const docker = await reg.pushImage('team/docker', 'v1', { './plugin.lua': LUA }, { docker: true });
    expect((await fetchPlugin(client, `${reg.host}/team/docker:v1`, 'lua')).digest).toBe(docker);
    const inner = await reg.pushImage('team/multi', 'inner', { 'plugin.wasm': WASM });
    const size = (
      await fetch(`http://${reg.host}/v2/team/multi/manifests/inner`, {
        headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
      }).then((r) => r.arrayBuffer())
    ).byteLength;
    const index = await reg.pushIndex('team/multi', 'v1', inner, size);
    const r = await fetchPlugin(client, `${reg.host}/team/multi:v1`, 'wasm');
    expect(r.digest).toBe(index);
    expect(r.content.equals(WASM)).toBe(true);
  });

  it('fetches an OCI artifact whose layer has the plugin media type, and refuses the wrong type', async () => {
    await reg.pushArtifact('team/artifact', 'v1', WASM, PLUGIN_LAYER_MEDIA_TYPES.wasm);
    expect((await fetchPlugin(client, `${reg.host}/team/artifact:v1`, 'wasm')).content.equals(WASM)).toBe(true);
    const e = await failure(fetchPlugin(client, `${reg.host}/team/artifact:v1`, 'lua'));
    expect(e.reason).toBe('InvalidArtifact');
    expect(e.message).toMatch(/holds a wasm plugin but spec.type is lua/);
  });

  it('rejects a plugin image without the file, or with a plugin.wasm that is not Wasm', async () => {
    await reg.pushImage('team/empty', 'v1', { 'other.lua': LUA });
    expect((await failure(fetchPlugin(client, `${reg.host}/team/empty:v1`, 'lua'))).message).toMatch(
      /no plugin.lua at its root/,
    );
    await reg.pushImage('team/notwasm', 'v1', { 'plugin.wasm': 'not wasm' });
    expect((await failure(fetchPlugin(client, `${reg.host}/team/notwasm:v1`, 'wasm'))).message).toMatch(
      /not a WebAssembly module/,
    );
  });

  it('rejects a blob whose content does not match its digest (wrong digest)', async () => {
    await reg.pushImage('team/tampered', 'v1', { 'plugin.lua': `${LUA}-- tampered\n` });
    const ref = parseImageReference(`${reg.host}/team/tampered:v1`);
    const { manifest } = await client.resolve(ref);
    const path = reg.blobPath(manifest.layers[0]!.digest);
    const original = readFileSync(path);
    const bad = Buffer.from(original);
    bad[bad.length - 5] ^= 0xff;
    writeFileSync(path, bad);
    const e = await failure(client.blob(ref, manifest.layers[0]!));
    expect(e.reason).toBe('InvalidArtifact');
    expect(e.message).toMatch(/does not match its digest/);
    writeFileSync(path, original);
    const missing = await failure(fetchPlugin(client, `${reg.host}/team/tampered@sha256:${'0'.repeat(64)}`, 'lua'));
    expect(missing.reason).toBe('NotFound');
  });

  it('stops at the size limit: TooLarge', async () => {
    const big = `-- ${'x'.repeat(8192)}\n`;
    await reg.pushArtifact('team/big', 'v1', Buffer.from(big), PLUGIN_LAYER_MEDIA_TYPES.lua);
    const small = new OciClient({ maxBytes: 4096, timeoutMs: 5000 });
    const e = await failure(fetchPlugin(small, `${reg.host}/team/big:v1`, 'lua'));
    expect(e.reason).toBe('TooLarge');
    expect(e.message).toMatch(/over the limit of 4096/);
  });

  it('answers NotFound for a missing repository or tag', async () => {
    expect((await failure(fetchPlugin(client, `${reg.host}/team/nothing:v1`, 'lua'))).reason).toBe('NotFound');
  });

  it('answers Pending when the registry is down, and fetches once it is back', async () => {
    await reg.pushImage('team/updown', 'v1', { 'plugin.lua': LUA });
    await reg.down();
    const e = await failure(fetchPlugin(client, `${reg.host}/team/updown:v1`, 'lua'));
    expect(e.reason).toBe('Pending');
    expect(e.transient).toBe(true);
    expect(e.message).toMatch(/unreachable: ECONNREFUSED/);
    await reg.up();
    expect((await fetchPlugin(client, `${reg.host}/team/updown:v1`, 'lua')).content.toString()).toBe(LUA);
  });
});

describe('plugin OCI client, basic auth (htpasswd)', () => {
  let reg: TestRegistry;
  beforeAll(async () => {
    reg = await TestRegistry.start({ basic: { username: 'plugin-puller', password: 'correct horse' } });
  });
  afterAll(async () => {
    await reg.stop();
  });

  it('fetches with the right credentials; none or wrong ones are Unauthorized', async () => {
    await reg.pushImage('private/hello', 'v1', { 'plugin.lua': LUA });
    const image = `${reg.host}/private/hello:v1`;
    const fresh = () => new OciClient({ maxBytes: 1 << 20, timeoutMs: 5000 });
    expect(
      (
        await fetchPlugin(fresh(), image, 'lua', { username: 'plugin-puller', password: 'correct horse' })
      ).content.toString(),
    ).toBe(LUA);
    const none = await failure(fetchPlugin(fresh(), image, 'lua'));
    expect(none.reason).toBe('Unauthorized');
    expect(none.message).toMatch(/asks for credentials/);
    const wrong = await failure(
      fetchPlugin(fresh(), image, 'lua', { username: 'plugin-puller', password: 'battery staple' }),
    );
    expect(wrong.reason).toBe('Unauthorized');
    expect(wrong.message).toMatch(/rejected the credentials of user "plugin-puller"/);
  });

  it('one client, credentials changed: the new ones are used, not a cached authorization', async () => {
    await reg.pushImage('private/cache', 'v1', { 'plugin.lua': LUA });
    const image = `${reg.host}/private/cache:v1`;
    const one = new OciClient({ maxBytes: 1 << 20, timeoutMs: 5000 });
    expect(
      (
        await fetchPlugin(one, image, 'lua', { username: 'plugin-puller', password: 'correct horse' })
      ).content.toString(),
    ).toBe(LUA);
    expect(
      (await failure(fetchPlugin(one, image, 'lua', { username: 'plugin-puller', password: 'battery staple' }))).reason,
    ).toBe('Unauthorized');
  });
});

describe('plugin OCI client, bearer token auth', () => {
  let reg: TestRegistry;
  beforeAll(async () => {
    reg = await TestRegistry.start({ token: true });
  });
  afterAll(async () => {
    await reg.stop();
  });

  it('gets a token from the realm with the credentials and fetches; bad credentials are Unauthorized', async () => {
    await reg.pushImage('private/token', 'v1', { 'plugin.lua': LUA });
    const image = `${reg.host}/private/token:v1`;
    const r = await fetchPlugin(new OciClient({ maxBytes: 1 << 20, timeoutMs: 5000 }), image, 'lua', reg.user);
    expect(r.content.toString()).toBe(LUA);
    const bad = await failure(
      fetchPlugin(new OciClient({ maxBytes: 1 << 20, timeoutMs: 5000 }), image, 'lua', {
        username: reg.user.username,
        password: 'nope',
      }),
    );
    expect(bad.reason).toBe('Unauthorized');
    expect(bad.message).toMatch(/token endpoint .* refused user "plugin-puller"/);
  });
});
