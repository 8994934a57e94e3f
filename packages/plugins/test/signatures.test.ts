// Signed plugins: with spec.verify, the artifact's cosign signature (tag sha256-<hex>.sig in the
// same repository, made here the way `cosign sign --key` makes it) is checked against the public
// key in a Secret or ConfigMap before any content is stored. Against the real registry.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, generateKeyPairSync } from 'node:crypto';
import type { Condition, KubeObject } from '@turnpike/api';
import { runEngine, synced, upsert, type EngineOutput, type SourceEvent } from '@turnpike/engine';
import { Subject, type Subscription } from 'rxjs';
import { MemoryStorage, OciClient, PluginContentStore, PluginFetchWorker, type PluginStorage } from '../src/index.js';
import { TestRegistry } from './support/registry.js';
import { withUsers } from './support/plugin-users.js';

const LUA = 'function envoy_on_request(h) h:headers():add("x-signed", "yes") end\n';
const keys = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const pem = (k: ReturnType<typeof keys>) => k.publicKey.export({ type: 'spki', format: 'pem' }).toString();

interface Harness {
  input: Subject<SourceEvent>;
  worker: PluginFetchWorker;
  content: PluginContentStore;
  outputs: EngineOutput[];
  sub: Subscription;
}
let h: Harness | undefined;

function start(storage: PluginStorage = new MemoryStorage()): Harness {
  const input = new Subject<SourceEvent>();
  const content = new PluginContentStore();
  const worker = new PluginFetchWorker({
    client: new OciClient({ maxBytes: 1 << 20, timeoutMs: 3000 }),
    storage,
    content,
    maxBytes: 1 << 20,
    backoff: { initialMs: 200, maxMs: 1000 },
  });
  const outputs: EngineOutput[] = [];
  const sub = runEngine({
    sources: [withUsers(input), worker.events],
    sourceNames: ['test'],
    quietMs: 10,
    maxDelayMs: 50,
  }).subscribe((o) => {
    outputs.push(o);
    worker.accept(o);
  });
  input.next(synced('test'));
  return (h = { input, worker, content, outputs, sub });
}
afterEach(() => {
  h?.sub.unsubscribe();
  h?.worker.stop();
  h = undefined;
});

async function fetched(
  hh: Harness,
  key: string,
  want: (c: Condition | undefined) => boolean,
): Promise<{ cond: Condition; status: Record<string, unknown> }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const status = hh.outputs.at(-1)?.result.statuses.get(`PluginInstallation/${key}`) as
      { conditions?: Condition[] } | undefined;
    const c = status?.conditions?.find((x) => x.type === 'Fetched');
    if (want(c)) return { cond: c!, status: status as Record<string, unknown> };
    if (Date.now() > deadline) throw new Error(`timed out; last status of ${key}: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const plugin = (name: string, image: string, ref: Record<string, unknown>): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'PluginInstallation',
  metadata: { namespace: 'apps', name, generation: 1 },
  spec: { image, type: 'lua', verify: { publicKeyRef: ref } },
});
const keySecret = (name: string, publicPem: string): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: 'apps', name },
    type: 'Opaque',
    data: { 'cosign.pub': Buffer.from(publicPem).toString('base64') },
  }) as KubeObject;
const keyConfigMap = (name: string, publicPem: string): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: 'apps', name },
    data: { 'team.pub': publicPem },
  }) as KubeObject;

describe('signed plugins (cosign)', () => {
  let reg: TestRegistry;
  const signer = keys();
  beforeAll(async () => {
    reg = await TestRegistry.start();
  });
  afterAll(async () => {
    await reg.stop();
  });

  it('a plugin signed with the key in the Secret is Fetched; its content is stored', async () => {
    const digest = await reg.pushImage('sig/good', 'v1', { 'plugin.lua': LUA });
    await reg.pushCosignSignature('sig/good', digest, signer.privateKey);
    const hh = start();
    hh.input.next(upsert('test', keySecret('signer', pem(signer))));
    hh.input.next(upsert('test', plugin('good', `${reg.host}/sig/good:v1`, { name: 'signer' })));
    const { status } = await fetched(hh, 'apps/good', (c) => c?.status === 'True');
    expect(status.digest).toBe(digest);
    expect(hh.content.get((status.storage as { sha256: string }).sha256)?.toString()).toBe(LUA);
  });

  it('a plugin signed with another key is SignatureInvalid and nothing is stored', async () => {
    const digest = await reg.pushImage('sig/other', 'v1', { 'plugin.lua': LUA + '-- other\n' });
    await reg.pushCosignSignature('sig/other', digest, keys().privateKey);
    const hh = start();
    hh.input.next(upsert('test', keyConfigMap('team-key', pem(signer))));
    hh.input.next(
      upsert(
        'test',
        plugin('other', `${reg.host}/sig/other:v1`, { kind: 'ConfigMap', name: 'team-key', key: 'team.pub' }),
      ),
    );
    const { cond, status } = await fetched(hh, 'apps/other', (c) => c?.reason === 'SignatureInvalid');
    expect(cond.status).toBe('False');
    expect(cond.message).toContain('does not verify with the public key');
    expect(status.storage).toBeUndefined();
    expect(hh.content.size).toBe(0);
  });

  it('a signature of another digest does not count for this one (SignatureInvalid)', async () => {
    const first = await reg.pushImage('sig/moved', 'v1', { 'plugin.lua': LUA });
    const second = await reg.pushImage('sig/moved', 'v2', { 'plugin.lua': LUA + '-- v2\n' });
    // The signature of v1, stored under v2's tag: what a copied .sig would look like.
    await reg.pushCosignSignature('sig/moved', first, signer.privateKey);
    const sig = await (
      await fetch(`http://${reg.host}/v2/sig/moved/manifests/${first.replace(':', '-')}.sig`, {
        headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
      })
    ).text();
    await reg.pushManifest(
      'sig/moved',
      `${second.replace(':', '-')}.sig`,
      JSON.parse(sig),
      'application/vnd.oci.image.manifest.v1+json',
    );
    const hh = start();
    hh.input.next(upsert('test', keySecret('signer', pem(signer))));
    hh.input.next(upsert('test', plugin('moved', `${reg.host}/sig/moved:v2`, { name: 'signer' })));
    const { cond } = await fetched(hh, 'apps/moved', (c) => c?.reason === 'SignatureInvalid');
    expect(cond.message).toContain(`the signature is for ${first}, not ${second}`);
  });

  it('an unsigned plugin is SignatureMissing; a missing key says which', async () => {
    await reg.pushImage('sig/unsigned', 'v1', { 'plugin.lua': LUA });
    const hh = start();
    hh.input.next(upsert('test', keySecret('signer', pem(signer))));
    hh.input.next(upsert('test', plugin('unsigned', `${reg.host}/sig/unsigned:v1`, { name: 'signer' })));
    hh.input.next(upsert('test', plugin('nokey', `${reg.host}/sig/unsigned:v1`, { name: 'absent' })));
    const missing = await fetched(hh, 'apps/unsigned', (c) => c?.reason === 'SignatureMissing');
    expect(missing.cond.message).toContain('.sig not found');
    const nokey = await fetched(hh, 'apps/nokey', (c) => c?.reason === 'SignatureInvalid');
    expect(nokey.cond.message).toContain('spec.verify.publicKeyRef: Secret apps/absent not found');
  });

  it('security: a signature the same key made for another repository does not count (SignatureInvalid)', async () => {
    const digest = await reg.pushImage('sig/copied', 'v1', { 'plugin.lua': LUA + '-- copied\n' });
    // What a signature of the same bytes in sig/benign looks like, copied next to them here.
    await reg.pushCosignSignature('sig/copied', digest, signer.privateKey, `${reg.host}/sig/benign`);
    const hh = start();
    hh.input.next(upsert('test', keySecret('signer', pem(signer))));
    hh.input.next(upsert('test', plugin('copied', `${reg.host}/sig/copied:v1`, { name: 'signer' })));
    const { cond } = await fetched(hh, 'apps/copied', (c) => c?.reason === 'SignatureInvalid');
    expect(cond.message).toContain(`the signature was made for ${reg.host}/sig/benign, not ${reg.host}/sig/copied`);
    expect(hh.content.size).toBe(0);
  });

  it('security: content in storage is never served for a signed plugin: the verified fetch replaces bytes changed there', async () => {
    const digest = await reg.pushImage('sig/stored', 'v1', { 'plugin.lua': LUA });
    await reg.pushCosignSignature('sig/stored', digest, signer.privateKey);
    const evil = Buffer.from('os.execute("curl attacker")\n');
    const evilSha = createHash('sha256').update(evil).digest('hex');
    // Storage written by someone else: the right digest annotation, other bytes.
    const tampered: PluginStorage = {
      save: async () => ({ configMap: 'turnpike-plugin-stored' }),
      load: async () => ({
        content: evil,
        sha256: evilSha,
        digest,
        image: `${reg.host}/sig/stored:v1`,
        storage: { configMap: 'turnpike-plugin-stored' },
      }),
    };
    const hh = start(tampered);
    hh.input.next(upsert('test', keySecret('signer', pem(signer))));
    hh.input.next(upsert('test', plugin('stored', `${reg.host}/sig/stored:v1`, { name: 'signer' })));
    const { status } = await fetched(hh, 'apps/stored', (c) => c?.status === 'True');
    expect(hh.content.get((status.storage as { sha256: string }).sha256)?.toString()).toBe(LUA);
    const served = hh.outputs.map((o) => JSON.stringify(o.result.statuses.get('PluginInstallation/apps/stored') ?? {}));
    expect(served.some((t) => t.includes(evilSha))).toBe(false);
    expect(hh.content.get(evilSha)).toBeUndefined();
  });
});
