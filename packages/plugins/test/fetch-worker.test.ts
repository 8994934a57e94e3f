// The plugin fetch worker inside the real engine, against a real registry: its PluginFetch events
// become PluginInstallation statuses through the translator, as in the controller.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Condition, KubeObject } from '@turnpike/api';
import { runEngine, synced, upsert, remove, type EngineOutput, type SourceEvent } from '@turnpike/engine';
import { Subject, type Subscription } from 'rxjs';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import {
  CONFIGMAP_CONTENT_LIMIT,
  MemoryStorage,
  OciClient,
  PluginContentServer,
  PluginContentStore,
  PluginFetchWorker,
  PLUGIN_LAYER_MEDIA_TYPES,
  PLUGINS_SOURCE,
  type PluginStorage,
} from '../src/index.js';
import { installer, withUsers } from './support/plugin-users.js';
import { pullSecret, TestRegistry } from './support/registry.js';

const LUA_V1 = 'function envoy_on_request(h) h:headers():add("x-plugin", "v1") end\n';
const LUA_V2 = 'function envoy_on_request(h) h:headers():add("x-plugin", "v2") end\n';

const plugin = (
  ns: string,
  name: string,
  image: string,
  extra: Record<string, unknown> = {},
  generation = 1,
): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'PluginInstallation',
  metadata: { namespace: ns, name, generation },
  spec: { image, type: 'lua', ...extra },
});
const grant = (ns: string, fromNs: string): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1beta1',
  kind: 'ReferenceGrant',
  metadata: { namespace: ns, name: 'plugins-may-pull' },
  spec: {
    from: [{ group: 'turnpike.dev', kind: 'PluginInstallation', namespace: fromNs }],
    to: [{ group: '', kind: 'Secret' }],
  },
});

/** An OCI client that notes each manifest resolved and blob downloaded. */
class CountingClient extends OciClient {
  readonly requests: string[] = [];
  constructor(timeoutMs = 3000) {
    super({ maxBytes: 4 << 20, timeoutMs });
  }
  override resolve(...args: Parameters<OciClient['resolve']>): ReturnType<OciClient['resolve']> {
    this.requests.push(`resolve ${args[0].repository}`);
    return super.resolve(...args);
  }
  override blob(...args: Parameters<OciClient['blob']>): ReturnType<OciClient['blob']> {
    this.requests.push(`blob ${args[0].repository} ${args[1].digest}`);
    return super.blob(...args);
  }
}

interface Harness {
  input: Subject<SourceEvent>;
  worker: PluginFetchWorker;
  content: PluginContentStore;
  outputs: EngineOutput[];
  sub: Subscription;
}
let h: Harness | undefined;

function start(
  opts: {
    resolveEveryMs?: number;
    storage?: PluginStorage;
    content?: PluginContentStore;
    concurrency?: number;
    gate?: boolean;
    client?: OciClient;
    /** Upserts no user with each PluginInstallation (by default a ProxyConfig installs each one). */
    unused?: boolean;
  } = {},
): Harness {
  const input = new Subject<SourceEvent>();
  // Only a plugin something uses is fetched: unless the test is about unused ones, each is installed.
  const events = opts.unused ? input : withUsers(input);
  const content = opts.content ?? new PluginContentStore();
  const worker = new PluginFetchWorker({
    client: opts.client ?? new OciClient({ maxBytes: 4 << 20, timeoutMs: 3000 }),
    storage: opts.storage ?? new MemoryStorage(),
    content,
    maxBytes: 4 << 20,
    ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
    backoff: { initialMs: 200, maxMs: 1000 },
    resolveEveryMs: opts.resolveEveryMs ?? 600_000,
  });
  const outputs: EngineOutput[] = [];
  const sub = runEngine({
    sources: [events, worker.events],
    sourceNames: ['test'],
    ...(opts.gate ? { completeAfter: [PLUGINS_SOURCE] } : {}),
    quietMs: 10,
    maxDelayMs: 50,
  }).subscribe((o) => {
    outputs.push(o);
    // The worker is a sink of every translation, as in the controller.
    worker.accept(o);
  });
  // Gated: the caller says when the test source has listed everything.
  if (!opts.gate) input.next(synced('test'));
  h = { input, worker, content, outputs, sub };
  return h;
}

afterEach(() => {
  h?.sub.unsubscribe();
  h?.worker.stop();
  h = undefined;
});

function fetchedOf(o: EngineOutput | undefined, key: string): Condition | undefined {
  const s = o?.result.statuses.get(`PluginInstallation/${key}`) as { conditions?: Condition[] } | undefined;
  return s?.conditions?.find((c) => c.type === 'Fetched');
}

/** Waits until the latest output's PluginInstallation status satisfies `ok`. */
async function until(
  hh: Harness,
  key: string,
  ok: (fetched: Condition | undefined, status: Record<string, unknown> | undefined) => boolean,
  ms = 10_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const last = hh.outputs.at(-1);
    const status = last?.result.statuses.get(`PluginInstallation/${key}`);
    if (ok(fetchedOf(last, key), status)) return status!;
    if (Date.now() > deadline) throw new Error(`timed out; last status of ${key}: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('plugin fetch worker', () => {
  let reg: TestRegistry;
  beforeAll(async () => {
    reg = await TestRegistry.start();
  });
  afterAll(async () => {
    await reg.stop();
  });

  it('fetches a plugin: Fetched=True with the digest, and the content is in the store by sha256', async () => {
    const digest = await reg.pushImage('w/hello', 'v1', { 'plugin.lua': LUA_V1 });
    const hh = start();
    hh.input.next(upsert('test', plugin('apps', 'hello', `${reg.host}/w/hello:v1`)));
    const status = await until(hh, 'apps/hello', (f) => f?.status === 'True');
    expect(status.digest).toBe(digest);
    const storage = status.storage as { sha256: string; size: number };
    expect(hh.content.get(storage.sha256)?.toString()).toBe(LUA_V1);
    expect(storage.size).toBe(Buffer.byteLength(LUA_V1));
    expect((status.conditions as Condition[]).find((c) => c.type === 'Accepted')?.status).toBe('True');
  });

  it('registry down: Pending and retried with backoff, then Fetched once it is back', async () => {
    await reg.pushImage('w/later', 'v1', { 'plugin.lua': LUA_V1 });
    await reg.down();
    try {
      const hh = start();
      hh.input.next(upsert('test', plugin('apps', 'later', `${reg.host}/w/later:v1`)));
      const pending = await until(hh, 'apps/later', (f) => f?.reason === 'Pending' && /unreachable/.test(f.message));
      expect(JSON.stringify(pending)).toMatch(/retrying in \d+s \(attempt \d\)/);
      await new Promise((r) => setTimeout(r, 700));
      const attempts = Number(/attempt (\d+)/.exec(fetchedOf(hh.outputs.at(-1), 'apps/later')!.message)![1]);
      expect(attempts).toBeGreaterThanOrEqual(2);
      await reg.up();
      await until(hh, 'apps/later', (f) => f?.status === 'True', 5000);
    } finally {
      await reg.up().catch(() => undefined);
    }
  });

  it('a moved tag is fetched again on the next re-resolve: new digest and content', async () => {
    const d1 = await reg.pushImage('w/moving', 'stable', { 'plugin.lua': LUA_V1 });
    const hh = start({ resolveEveryMs: 300 });
    hh.input.next(upsert('test', plugin('apps', 'moving', `${reg.host}/w/moving:stable`)));
    await until(hh, 'apps/moving', (_f, s) => s?.digest === d1);
    const d2 = await reg.pushImage('w/moving', 'stable', { 'plugin.lua': LUA_V2 });
    expect(d2).not.toBe(d1);
    const s = await until(hh, 'apps/moving', (_f, st) => st?.digest === d2, 5000);
    expect(hh.content.get((s.storage as { sha256: string }).sha256)?.toString()).toBe(LUA_V2);
  });

  it('every re-resolve stores the content again, so lost storage comes back without a download', async () => {
    await reg.pushImage('w/heal', 'v1', { 'plugin.lua': `${LUA_V1}-- heal\n` });
    const saves: string[] = [];
    const storage: PluginStorage = {
      async save(_pi, p) {
        saves.push(p.sha256);
        return { configMap: 'turnpike-plugin-heal' };
      },
      async load() {
        return undefined;
      },
    };
    const hh = start({ storage, resolveEveryMs: 200 });
    hh.input.next(upsert('test', plugin('apps', 'heal', `${reg.host}/w/heal:v1`)));
    await until(hh, 'apps/heal', (f) => f?.status === 'True');
    const deadline = Date.now() + 5000;
    while (saves.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(saves.length).toBeGreaterThanOrEqual(3);
    expect(new Set(saves).size).toBe(1);
  });

  it('NotFound for a missing tag, InvalidArtifact for the wrong type, each on its own object', async () => {
    await reg.pushImage('w/wasm-only', 'v1', { 'plugin.wasm': Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]) });
    await reg.pushImage('w/fine', 'v1', { 'plugin.lua': LUA_V1 });
    const hh = start();
    hh.input.next(upsert('test', plugin('apps', 'missing', `${reg.host}/w/nothing:v1`)));
    hh.input.next(upsert('test', plugin('apps', 'wrongtype', `${reg.host}/w/wasm-only:v1`)));
    hh.input.next(upsert('test', plugin('apps', 'fine', `${reg.host}/w/fine:v1`)));
    hh.input.next(upsert('test', plugin('apps', 'badimage', 'no-registry-here:v1')));
    await until(hh, 'apps/missing', (f) => f?.reason === 'NotFound');
    const wrong = await until(hh, 'apps/wrongtype', (f) => f?.reason === 'InvalidArtifact');
    expect(JSON.stringify(wrong)).toMatch(/plugin.wasm but spec.type is lua/);
    await until(hh, 'apps/fine', (f) => f?.status === 'True');
    const bad = await until(hh, 'apps/badimage', (_f, s) => !!s);
    const accepted = (bad.conditions as Condition[]).find((c) => c.type === 'Accepted')!;
    expect(accepted).toMatchObject({ status: 'False', reason: 'InvalidImage' });
    expect(accepted.message).toMatch(/spec.image: "no-registry-here:v1" does not name a registry host/);
  });

  it('an event arriving while the content is being stored does not drop the content', async () => {
    await reg.pushImage('w/race', 'v1', { 'plugin.lua': `${LUA_V1}-- race\n` });
    const box: { hh?: Harness } = {};
    const obj = plugin('apps', 'race', `${reg.host}/w/race:v1`);
    // As in a cluster: our own status write comes back as an event while the ConfigMap is written.
    const storage: PluginStorage = {
      async save() {
        box.hh!.input.next(upsert('test', { ...obj, status: { conditions: [] } } as KubeObject));
        await new Promise((r) => setTimeout(r, 150));
        return {};
      },
      async load() {
        return undefined;
      },
    };
    const hh = (box.hh = start({ storage }));
    hh.input.next(upsert('test', obj));
    const s = await until(hh, 'apps/race', (f) => f?.status === 'True');
    await new Promise((r) => setTimeout(r, 100));
    expect(hh.content.get((s.storage as { sha256: string }).sha256)?.toString()).toBe(`${LUA_V1}-- race\n`);
  });

  it('many plugins at once with at most 2 fetches in flight: every one is fetched', async () => {
    let inFlight = 0,
      most = 0;
    const storage: PluginStorage = {
      async save() {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 30));
        inFlight--;
        return {};
      },
      async load() {
        return undefined;
      },
    };
    for (let i = 0; i < 12; i++) await reg.pushImage(`w/many-${i}`, 'v1', { 'plugin.lua': `${LUA_V1}-- ${i}\n` });
    const hh = start({ storage, concurrency: 2 });
    for (let i = 0; i < 12; i++)
      hh.input.next(upsert('test', plugin('apps', `many-${i}`, `${reg.host}/w/many-${i}:v1`)));
    for (let i = 0; i < 12; i++) await until(hh, `apps/many-${i}`, (f) => f?.status === 'True');
    expect(most).toBeLessThanOrEqual(2);
    expect(most).toBe(2);
  });

  it('the sinks wait for the plugins: after a restart with the registry down, the first complete translation already serves the stored content', async () => {
    const lua = Buffer.from(`${LUA_V1}-- stored\n`);
    const sha256 = createHash('sha256').update(lua).digest('hex');
    const storage: PluginStorage = {
      async save() {
        return { configMap: 'turnpike-plugin-restart' };
      },
      async load(pi) {
        if (pi.metadata.name !== 'restart') return undefined;
        return {
          content: lua,
          sha256,
          digest: `sha256:${'1'.repeat(64)}`,
          image: pi.spec.image,
          storage: { configMap: 'turnpike-plugin-restart' },
        };
      },
    };
    await reg.down();
    try {
      const hh = start({ storage, gate: true });
      hh.input.next(upsert('test', plugin('apps', 'restart', `${reg.host}/w/restart:v1`)));
      hh.input.next(upsert('test', plugin('apps', 'never-stored', `${reg.host}/w/never:v1`)));
      hh.input.next(synced('test'));
      await until(hh, 'apps/restart', (f) => f?.status === 'True');
      // The stored content may be told before the other plugin's first attempt: then the complete
      // translation is the next one.
      const deadline = Date.now() + 5000;
      while (!hh.outputs.some((o) => o.complete) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      // The translation the worker learnt its requests from came first, and was not complete.
      expect(hh.outputs[0]!.complete).toBe(false);
      expect(fetchedOf(hh.outputs[0], 'apps/restart')).toMatchObject({ status: 'False', reason: 'Pending' });
      const complete = hh.outputs.filter((o) => o.complete);
      const first = complete[0]!;
      expect(fetchedOf(first, 'apps/restart')).toMatchObject({
        status: 'True',
        message: expect.stringMatching(/^Serving the content stored before in ConfigMap turnpike-plugin-restart/),
      });
      expect(hh.content.get(sha256)?.equals(lua)).toBe(true);
      // A plugin with nothing stored got its first attempt before the first translation too.
      expect(fetchedOf(first, 'apps/never-stored')).toMatchObject({
        status: 'False',
        reason: 'Pending',
        message: expect.stringMatching(/unreachable/),
      });
      expect(complete.filter((o) => fetchedOf(o, 'apps/restart')?.status !== 'True')).toEqual([]);
      const refreshed = await until(hh, 'apps/restart', (f) =>
        /refreshing it failed \(Pending\)/.test(f?.message ?? ''),
      );
      expect((refreshed.storage as { sha256: string }).sha256).toBe(sha256);
    } finally {
      await reg.up();
    }
  });

  it('deleting a PluginInstallation drops its result and its content', async () => {
    await reg.pushImage('w/gone', 'v1', { 'plugin.lua': `${LUA_V1}-- gone\n` });
    const hh = start();
    hh.input.next(upsert('test', plugin('apps', 'gone', `${reg.host}/w/gone:v1`)));
    await until(hh, 'apps/gone', (f) => f?.status === 'True');
    expect(hh.content.size).toBe(1);
    hh.input.next(remove('test', 'PluginInstallation', 'apps', 'gone'));
    await until(hh, 'apps/gone', (_f, s) => s === undefined);
    const deadline = Date.now() + 2000;
    while (hh.content.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(hh.content.size).toBe(0);
    const lastFetch = () => hh.outputs.at(-1)!.snapshot.get('PluginFetch')?.get('apps')?.get('gone');
    while (lastFetch() && Date.now() < deadline + 2000) await new Promise((r) => setTimeout(r, 20));
    expect(lastFetch()).toBeUndefined();
  });

  it('security: the content held in all is bounded: a plugin beyond is not fetched and says so, then is once room is made', async () => {
    const big = (tag: string) => `${LUA_V1}-- ${tag} ${'x'.repeat(3000)}\n`;
    await reg.pushImage('w/first', 'v1', { 'plugin.lua': big('first') });
    await reg.pushImage('w/second', 'v1', { 'plugin.lua': big('second') });
    // Room for one of them, not two.
    const hh = start({ content: new PluginContentStore(5000) });
    hh.input.next(upsert('test', plugin('apps', 'first', `${reg.host}/w/first:v1`)));
    await until(hh, 'apps/first', (f) => f?.status === 'True');
    hh.input.next(upsert('test', plugin('apps', 'second', `${reg.host}/w/second:v1`)));
    const refused = await until(hh, 'apps/second', (f) => f?.reason === 'TooLarge');
    const fetched = (refused.conditions as Condition[]).find((c) => c.type === 'Fetched')!;
    expect(fetched.status).toBe('False');
    expect(fetched.message).toMatch(/over the controller's bound of 5000 \(--plugin-max-total-bytes\).*retrying in/);
    expect(hh.content.size).toBe(1);
    expect(hh.content.bytes).toBeLessThanOrEqual(5000);
    // The first one deleted, the second is fetched on its next try.
    hh.input.next(remove('test', 'PluginInstallation', 'apps', 'first'));
    await until(hh, 'apps/second', (f) => f?.status === 'True');
    expect(hh.content.size).toBe(1);
  });

  it('security: a plugin nothing uses is not fetched and holds nothing, so the bound counts only the plugins in use', async () => {
    const big = (tag: string) => `${LUA_V1}-- ${tag} ${'x'.repeat(3000)}\n`;
    await reg.pushImage('w/used-a', 'v1', { 'plugin.lua': big('a') });
    await reg.pushImage('w/used-b', 'v1', { 'plugin.lua': big('b') });
    const client = new CountingClient();
    const released: string[] = [];
    const storage: PluginStorage = {
      save: async () => ({}),
      load: async () => undefined,
      release: (namespace, name) => void released.push(`${namespace}/${name}`),
    };
    // Room for one of them, not two.
    const hh = start({ content: new PluginContentStore(5000), unused: true, client, storage });
    hh.input.next(upsert('test', plugin('apps', 'a', `${reg.host}/w/used-a:v1`)));
    hh.input.next(upsert('test', plugin('apps', 'b', `${reg.host}/w/used-b:v1`)));
    for (const key of ['apps/a', 'apps/b']) await until(hh, key, (f) => f?.reason === 'NotUsed');
    expect(client.requests).toEqual([]);
    // A ProxyConfig installing `a` fetches it; then installing `b` instead releases `a`, which makes room for `b`.
    hh.input.next(upsert('test', installer('apps', ['a'])));
    await until(hh, 'apps/a', (f) => f?.status === 'True');
    expect(client.requests.every((r) => r.includes('w/used-a'))).toBe(true);
    hh.input.next(upsert('test', installer('apps', ['b'])));
    const b = await until(hh, 'apps/b', (f) => f?.status === 'True');
    const a = await until(hh, 'apps/a', (f) => f?.reason === 'NotUsed');
    expect(a.digest).toBeUndefined();
    expect(hh.content.size).toBe(1);
    // The storage's copy in memory goes too (ConfigMapPluginStorage keeps one to write as leader).
    expect(released).toContain('apps/a');
    expect(hh.content.get((b.storage as { sha256: string }).sha256)).toBeDefined();
    // Its result is withdrawn too: no translation serves content no longer held.
    const fetchOf = (name: string) => hh.outputs.at(-1)!.snapshot.get('PluginFetch')?.get('apps')?.get(name);
    const deadline = Date.now() + 2000;
    while (fetchOf('a') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(fetchOf('a')).toBeUndefined();
    expect(fetchOf('b')).toBeDefined();
  });

  it('the sinks do not wait for a plugin nothing uses', async () => {
    await reg.pushImage('w/sync-used', 'v1', { 'plugin.lua': `${LUA_V1}-- sync\n` });
    // The unused plugin's registry never answers: were it fetched, the sinks would wait for its first
    // result until the worker's 10 s sync timeout.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const hh = start({ gate: true, unused: true, client: new CountingClient(60_000) });
      const silentHost = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
      hh.input.next(upsert('test', plugin('apps', 'idle', `${silentHost}/w/never-answered:v1`)));
      hh.input.next(upsert('test', plugin('apps', 'used', `${reg.host}/w/sync-used:v1`)));
      hh.input.next(upsert('test', installer('apps', ['used'])));
      hh.input.next(synced('test'));
      const deadline = Date.now() + 5000;
      while (!hh.outputs.some((o) => o.complete) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const first = hh.outputs.find((o) => o.complete);
      expect(fetchedOf(first, 'apps/used')?.status).toBe('True');
      expect(fetchedOf(first, 'apps/idle')?.reason).toBe('NotUsed');
      expect(sockets).toEqual([]);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('a plugin whose layer declares more than the bound has room for is refused without downloading it, at every retry', async () => {
    await reg.pushArtifact(
      'w/declared',
      'v1',
      Buffer.from(`${LUA_V1}-- ${'y'.repeat(6000)}\n`),
      PLUGIN_LAYER_MEDIA_TYPES.lua,
    );
    const client = new CountingClient();
    const hh = start({ content: new PluginContentStore(5000), client });
    hh.input.next(upsert('test', plugin('apps', 'declared', `${reg.host}/w/declared:v1`)));
    const refused = await until(hh, 'apps/declared', (f) => f?.reason === 'TooLarge' && /attempt 2/.test(f.message));
    expect(JSON.stringify(refused)).toMatch(/over the controller's bound of 5000/);
    expect(client.requests.filter((r) => r.startsWith('resolve')).length).toBeGreaterThanOrEqual(2);
    expect(client.requests.filter((r) => r.startsWith('blob'))).toEqual([]);
  });
});

describe('plugin content too large for a ConfigMap', () => {
  let reg: TestRegistry;
  beforeAll(async () => {
    reg = await TestRegistry.start();
  });
  afterAll(async () => {
    await reg.stop();
  });

  it('a large Wasm plugin is served by the controller at an unguessable URL, byte for byte', async () => {
    const wasm = Buffer.concat([
      Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]),
      randomBytes(CONFIGMAP_CONTENT_LIMIT + 4096),
    ]);
    await reg.pushArtifact('w/big', 'v1', wasm, PLUGIN_LAYER_MEDIA_TYPES.wasm);
    const content = new PluginContentStore();
    const server = new PluginContentServer(content);
    await server.listen('127.0.0.1', 0);
    try {
      const hh = start({ storage: new MemoryStorage((sha, type) => server.urlFor(sha, type)), content });
      hh.input.next(
        upsert('test', {
          ...plugin('apps', 'big', `${reg.host}/w/big:v1`),
          spec: { image: `${reg.host}/w/big:v1`, type: 'wasm' },
        } as KubeObject),
      );
      const s = await until(hh, 'apps/big', (f) => f?.status === 'True');
      const storage = s.storage as { url: string; sha256: string; configMap?: string };
      expect(storage.configMap).toBeUndefined();
      expect(storage.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/plugins\/[A-Za-z0-9_-]{43}\.wasm$/);
      expect(storage.url).not.toContain(storage.sha256);
      const got = Buffer.from(await (await fetch(storage.url)).arrayBuffer());
      expect(createHash('sha256').update(got).digest('hex')).toBe(storage.sha256);
      expect(got.equals(wasm)).toBe(true);
      const guess = storage.url.replace(
        /\/plugins\/[^.]+/,
        `/plugins/${Buffer.from(storage.sha256, 'hex').toString('base64url')}`,
      );
      expect((await fetch(guess)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe('plugin fetch worker with a private registry', () => {
  let reg: TestRegistry;
  beforeAll(async () => {
    reg = await TestRegistry.start({ basic: { username: 'plugin-puller', password: 'correct horse' } });
  });
  afterAll(async () => {
    await reg.stop();
  });

  it('a pull secret in another namespace: RefNotPermitted without a grant, Fetched with one', async () => {
    await reg.pushImage('p/hello', 'v1', { 'plugin.lua': LUA_V1 });
    const hh = start();
    hh.input.next(
      upsert('test', pullSecret('registry-creds', 'puller', reg.host, 'plugin-puller', 'correct horse') as KubeObject),
    );
    hh.input.next(
      upsert(
        'test',
        plugin('apps', 'private', `${reg.host}/p/hello:v1`, {
          pullSecretRef: { name: 'puller', namespace: 'registry-creds' },
        }),
      ),
    );
    const denied = await until(hh, 'apps/private', (f) => f?.reason === 'RefNotPermitted');
    expect((denied.conditions as Condition[]).find((c) => c.type === 'Accepted')).toMatchObject({
      status: 'False',
      reason: 'RefNotPermitted',
    });
    hh.input.next(upsert('test', grant('registry-creds', 'apps')));
    await until(hh, 'apps/private', (f) => f?.status === 'True');
  });

  it('bad credentials: Unauthorized; fixing the pull Secret fetches again at once', async () => {
    await reg.pushImage('p/creds', 'v1', { 'plugin.lua': LUA_V2 });
    const hh = start();
    hh.input.next(upsert('test', pullSecret('apps', 'puller', reg.host, 'plugin-puller', 'wrong') as KubeObject));
    hh.input.next(
      upsert('test', plugin('apps', 'creds', `${reg.host}/p/creds:v1`, { pullSecretRef: { name: 'puller' } })),
    );
    const unauthorized = await until(hh, 'apps/creds', (f) => f?.reason === 'Unauthorized');
    expect(JSON.stringify(unauthorized)).toMatch(/rejected the credentials of user \\"plugin-puller\\"/);
    const t0 = Date.now();
    hh.input.next(
      upsert('test', pullSecret('apps', 'puller', reg.host, 'plugin-puller', 'correct horse') as KubeObject),
    );
    await until(hh, 'apps/creds', (f) => f?.status === 'True');
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('a pull Secret changed to wrong credentials after the fetch: the content keeps serving and the status says the refresh failed', async () => {
    await reg.pushImage('p/rotate', 'v1', { 'plugin.lua': `${LUA_V1}-- rotate\n` });
    const hh = start();
    hh.input.next(upsert('test', pullSecret('apps', 'rot', reg.host, 'plugin-puller', 'correct horse') as KubeObject));
    hh.input.next(
      upsert('test', plugin('apps', 'rotate', `${reg.host}/p/rotate:v1`, { pullSecretRef: { name: 'rot' } })),
    );
    const good = await until(hh, 'apps/rotate', (f) => f?.status === 'True');
    hh.input.next(upsert('test', pullSecret('apps', 'rot', reg.host, 'plugin-puller', 'wrong') as KubeObject));
    const after = await until(hh, 'apps/rotate', (f) => /refreshing it failed \(Unauthorized\)/.test(f?.message ?? ''));
    expect(fetchedOf(hh.outputs.at(-1), 'apps/rotate')!.status).toBe('True');
    expect(after.storage).toEqual(good.storage);
  });

  it('no pull secret for a private registry: Unauthorized', async () => {
    await reg.pushImage('p/anon', 'v1', { 'plugin.lua': LUA_V1 });
    const hh = start();
    hh.input.next(upsert('test', plugin('apps', 'anon', `${reg.host}/p/anon:v1`)));
    const status = await until(hh, 'apps/anon', (f) => f?.reason === 'Unauthorized');
    const fetched = (status.conditions as Condition[]).find((c) => c.type === 'Fetched');
    // The message says what to do: the registry wants credentials and none were given.
    expect(fetched).toMatchObject({ status: 'False', reason: 'Unauthorized' });
    expect(fetched?.message).toMatch(/pullSecretRef|credentials|anonymous/);
    expect(hh.content.size).toBe(0);
  });
});

void PLUGINS_SOURCE;
