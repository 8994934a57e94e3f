// Whoever may create a PluginInstallation names the registry (issue #47, item 3): the fetcher
// follows redirects only where the distribution API needs them, never from HTTPS to plain HTTP,
// sends credentials to no other origin and to no token realm over plain HTTP elsewhere, writes no
// answer's body into the status, and fetches only from --plugin-registries when it is set.
// Loopback servers stand for the registry, its blob storage, token realms and internal services.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Condition, KubeObject } from '@turnpike/api';
import { parseImageReference } from '@turnpike/api';
import { runEngine, synced, upsert, type EngineOutput, type SourceEvent } from '@turnpike/engine';
import { Subject, type Subscription } from 'rxjs';
import { createAuthority, issueCertificate } from '../../xds/src/index.js';
import {
  MemoryStorage,
  OciClient,
  PluginContentStore,
  PluginFetchError,
  PluginFetchWorker,
  type OciClientOptions,
} from '../src/index.js';
import { basic, fetchTrusting, Loopback, luaArtifact, sendManifest } from './support/loopback.js';
import { withUsers } from './support/plugin-users.js';

const LUA = 'function envoy_on_request(h) h:headers():add("x-plugin", "guarded") end\n';
const ART = luaArtifact(LUA);
const USER = { username: 'plugin-puller', password: 'pull-secret-password' };
const CREDS = basic(USER.username, USER.password);
/** Text a registry (or the service it stands for) answers with, which must reach no status. */
const SECRET = 'INTERNAL-SECRET-9c1f';

const servers: Loopback[] = [];
async function serve(...args: Parameters<typeof Loopback.start>): Promise<Loopback> {
  const s = await Loopback.start(...args);
  servers.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

const client = (o: Partial<OciClientOptions> = {}) => new OciClient({ maxBytes: 1 << 20, timeoutMs: 5000, ...o });

async function failure(p: Promise<unknown>): Promise<PluginFetchError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PluginFetchError) return e;
    throw e;
  }
  throw new Error('expected the fetch to fail');
}

/** Resolves `image` and downloads its plugin layer. */
async function pull(c: OciClient, image: string, creds?: typeof USER): Promise<Buffer> {
  const ref = parseImageReference(image);
  const { manifest } = await c.resolve(ref, creds);
  return c.blob(ref, manifest.layers[0]!, creds);
}

describe('redirects', () => {
  it('a manifest redirected to another origin is refused and that origin never asked; same-origin is followed', async () => {
    const elsewhere = await serve((_req, res) => sendManifest(res, ART));
    const registry = await serve((req, res) => {
      const path = req.url ?? '';
      if (path === '/v2/team/p/manifests/v1')
        res.writeHead(307, { location: `${elsewhere.origin}/v2/team/p/manifests/v1` }).end();
      else if (path === '/v2/team/p/manifests/moved')
        res.writeHead(301, { location: `/v2/team/p/manifests/${ART.manifestDigest}` }).end();
      else if (path === `/v2/team/p/manifests/${ART.manifestDigest}`) sendManifest(res, ART);
      else if (path === '/v2/team/p/manifests/loop') res.writeHead(302, { location: path }).end();
      else res.writeHead(404).end();
    });
    const e = await failure(client().resolve(parseImageReference(`${registry.host}/team/p:v1`)));
    expect(e.reason).toBe('FetchFailed');
    expect(e.message).toContain(`${registry.host} redirected the manifest of team/p:v1 to another origin`);
    expect(elsewhere.seen).toEqual([]);

    const moved = await client().resolve(parseImageReference(`${registry.host}/team/p:moved`));
    expect(moved.digest).toBe(ART.manifestDigest);

    const loop = await failure(client().resolve(parseImageReference(`${registry.host}/team/p:loop`)));
    expect(loop.message).toContain('more than 5 times');
    expect(registry.seen.filter((s) => s.path.endsWith('/loop'))).toHaveLength(6);
  });

  it('a blob redirected to another origin is followed without the credentials; a 401 there gets none', async () => {
    const storage = await serve((req, res) => {
      if (req.url?.startsWith('/blob?')) res.writeHead(200).end(ART.blob);
      // Storage asking for credentials, with a token realm of its own.
      else if (req.url === '/missing') res.writeHead(404).end(SECRET);
      else if (req.url === '/challenge')
        res.writeHead(401, { 'www-authenticate': `Bearer realm="http://127.0.0.1:${storage.port}/token"` }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"token":"t"}');
    });
    const registry = await serve((req, res) => {
      if (req.headers.authorization !== CREDS) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="registry"' }).end();
        return;
      }
      if (req.url?.includes('/manifests/')) sendManifest(res, ART);
      else if (req.url?.startsWith('/v2/team/p/blobs/'))
        res.writeHead(307, { location: `${storage.origin}/blob?signature=abc` }).end();
      else if (req.url?.startsWith('/v2/team/missing/blobs/'))
        res.writeHead(307, { location: `${storage.origin}/missing` }).end();
      else res.writeHead(307, { location: `${storage.origin}/challenge` }).end();
    });
    expect((await pull(client(), `${registry.host}/team/p:v1`, USER)).toString()).toBe(LUA);
    expect(storage.seen).toEqual([{ path: '/blob?signature=abc' }]);
    expect(registry.seen.some((s) => s.authorization === CREDS)).toBe(true);
    const missing = await failure(pull(client(), `${registry.host}/team/missing:v1`, USER));
    expect(missing.reason).toBe('NotFound');
    expect(missing.message).toBe(
      `${registry.host} redirected blob ${ART.blobDigest} of team/missing to another origin, which answered 404 Not Found`,
    );

    const e = await failure(pull(client(), `${registry.host}/team/other:v1`, USER));
    expect(storage.seen.filter((s) => s.authorization)).toEqual([]);
    expect(storage.seen.map((s) => s.path)).not.toContain('/token');
    expect(e.reason).toBe('Unauthorized');
    expect(e.message).toContain('redirected blob');
  });

  describe('over HTTPS', () => {
    let ca = '';
    let tls: { cert: string; key: string };
    beforeAll(async () => {
      const authority = await createAuthority('test registries CA', 3_600_000);
      ca = authority.certPem;
      const c = await issueCertificate(authority, {
        commonName: 'registry.test',
        dnsNames: ['registry.test', 'storage.test', 'auth.test'],
        usage: 'server',
        validityMs: 3_600_000,
      });
      tls = { cert: c.certPem, key: c.keyPem };
    });

    it('an HTTPS registry redirecting a blob to plain HTTP is refused; to HTTPS elsewhere, followed bare', async () => {
      const plain = await serve((_req, res) => res.writeHead(200).end(ART.blob));
      const storage = await serve((_req, res) => res.writeHead(200).end(ART.blob), { hostname: 'storage.test', tls });
      const registry = await serve(
        (req, res) => {
          if (req.headers.authorization !== CREDS)
            res.writeHead(401, { 'www-authenticate': 'Basic realm="registry"' }).end();
          else if (req.url?.includes('/manifests/')) sendManifest(res, ART);
          else if (req.url?.startsWith('/v2/team/downgrade/'))
            res.writeHead(307, { location: `${plain.origin}/blob` }).end();
          else res.writeHead(307, { location: `${storage.origin}/blob?signature=abc` }).end();
        },
        { hostname: 'registry.test', tls },
      );
      const c = client({ fetch: fetchTrusting(ca) });
      const e = await failure(pull(c, `${registry.host}/team/downgrade:v1`, USER));
      expect(e.reason).toBe('FetchFailed');
      expect(e.message).toContain('to plain HTTP');
      expect(plain.seen).toEqual([]);

      expect((await pull(c, `${registry.host}/team/ok:v1`, USER)).toString()).toBe(LUA);
      expect(storage.seen).toEqual([{ path: '/blob?signature=abc' }]);
    });

    it('a token realm over plain HTTP is refused; an HTTPS realm on another origin gets the credentials', async () => {
      const realmSeen: Loopback[] = [];
      const tokenServer = (opts: Parameters<typeof Loopback.start>[1]) =>
        serve((req, res) => {
          if (req.headers.authorization === CREDS)
            res.writeHead(200, { 'content-type': 'application/json' }).end('{"token":"tok-1"}');
          else res.writeHead(401).end();
        }, opts).then((s) => (realmSeen.push(s), s));
      const httpsRealm = await tokenServer({ hostname: 'auth.test', tls });
      const plainRealm = await tokenServer({});
      let realm = '';
      const registry = await serve(
        (req, res) => {
          if (req.headers.authorization !== 'Bearer tok-1')
            res.writeHead(401, { 'www-authenticate': `Bearer realm="${realm}",service="registry.test"` }).end();
          else if (req.url?.includes('/manifests/')) sendManifest(res, ART);
          else res.writeHead(200).end(ART.blob);
        },
        { hostname: 'registry.test', tls },
      );
      const c = () => client({ fetch: fetchTrusting(ca) });
      // Plain HTTP, on another host or on the registry's own (it is not configured insecure).
      for (const r of [`${plainRealm.origin}/token`, `http://registry.test:${plainRealm.port}/token`]) {
        realm = r;
        const e = await failure(pull(c(), `${registry.host}/team/p:v1`, USER));
        expect(e.message).toContain('names a token endpoint (Bearer realm) that is not HTTPS');
      }
      expect(plainRealm.seen).toEqual([]);

      realm = `${httpsRealm.origin}/token`;
      expect((await pull(c(), `${registry.host}/team/p:v1`, USER)).toString()).toBe(LUA);
      expect(httpsRealm.seen[0]).toMatchObject({ authorization: CREDS });
      expect(realmSeen).toHaveLength(2);
    });
  });

  it('an insecure registry: a realm on another host over plain HTTP never receives the credentials', async () => {
    const realm = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), {
      bind: '127.0.0.2',
    });
    const registry = await serve((_req, res) =>
      res.writeHead(401, { 'www-authenticate': `Bearer realm="${realm.origin}/token",service="r"` }).end(),
    );
    const e = await failure(pull(client(), `${registry.host}/team/p:v1`, USER));
    expect(realm.seen).toEqual([]);
    expect(e.message).toContain('not HTTPS nor on its own host');
  });
});

// The worker inside the engine, as in the controller: what reaches the PluginInstallation status.
interface Harness {
  input: Subject<SourceEvent>;
  worker: PluginFetchWorker;
  outputs: EngineOutput[];
  sub: Subscription;
  logs: { level: string; msg: string; fields?: Record<string, unknown> }[];
}
let h: Harness | undefined;
afterEach(() => {
  h?.sub.unsubscribe();
  h?.worker.stop();
  h = undefined;
});

function start(registries?: string[]): Harness {
  const input = new Subject<SourceEvent>();
  const logs: Harness['logs'] = [];
  const worker = new PluginFetchWorker({
    client: client({ timeoutMs: 3000 }),
    storage: new MemoryStorage(),
    content: new PluginContentStore(),
    maxBytes: 1 << 20,
    backoff: { initialMs: 60_000, maxMs: 60_000 },
    log: (level, msg, fields) => logs.push({ level, msg, ...(fields ? { fields } : {}) }),
    ...(registries ? { registries } : {}),
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
  h = { input, worker, outputs, sub, logs };
  return h;
}

const plugin = (name: string, image: string): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'PluginInstallation',
  metadata: { namespace: 'apps', name, generation: 1 },
  spec: { image, type: 'lua' },
});

/** The Fetched condition of apps/`name` once `ok` holds for it. */
async function fetched(hh: Harness, name: string, ok: (c: Condition) => boolean): Promise<Condition> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = hh.outputs.at(-1)?.result.statuses.get(`PluginInstallation/apps/${name}`) as
      { conditions?: Condition[] } | undefined;
    const c = s?.conditions?.find((x) => x.type === 'Fetched');
    if (c && ok(c)) return c;
    if (Date.now() > deadline) throw new Error(`timed out; last Fetched of apps/${name}: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the status a tenant reads', () => {
  it("carries a status code in our words, never an answer's body or headers", async () => {
    const other = await serve((_req, res) => res.writeHead(500).end(`${SECRET} from elsewhere`));
    const registry = await serve((req, res) => {
      const repo = /^\/v2\/([^/]+)\//.exec(req.url ?? '')?.[1];
      if (repo === 'bad') res.writeHead(400).end(`{"errors":[{"message":"${SECRET} in a body"}]}`);
      else if (repo === 'gone') res.writeHead(404).end(`${SECRET} not here`);
      else if (repo === 'down') res.writeHead(503, 'Unavailable ' + SECRET).end(SECRET);
      else if (repo === 'teapot') res.writeHead(418).end(SECRET);
      else if (repo === 'challenge') res.writeHead(401, { 'www-authenticate': `Negotiate ${SECRET}` }).end(SECRET);
      else if (repo === 'media')
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ mediaType: SECRET }));
      else if (repo === 'away') res.writeHead(302, { location: `${other.origin}/${SECRET}` }).end();
      else res.writeHead(404).end();
    });
    const hh = start();
    const cases: [string, string | RegExp][] = [
      ['bad', `${registry.host} answered 400 Bad Request for the manifest of bad:v1`],
      ['gone', `${registry.host} answered 404 Not Found for the manifest of gone:v1`],
      ['down', `${registry.host} answered 503 Service Unavailable for the manifest of down:v1`],
      ['teapot', `${registry.host} answered 418 I'm a Teapot for the manifest of teapot:v1`],
      ['challenge', `${registry.host} answered 401 Unauthorized for the manifest of challenge:v1 with no challenge`],
      ['media', 'manifest has no layers (media type unknown)'],
      ['away', `${registry.host} redirected the manifest of away:v1 to another origin`],
    ];
    for (const [repo] of cases) hh.input.next(upsert('test', plugin(repo, `${registry.host}/${repo}:v1`)));
    for (const [repo, says] of cases) {
      const c = await fetched(hh, repo, (x) => x.status === 'False' && !x.message.startsWith('Fetching '));
      expect(c.message).not.toContain(SECRET);
      expect(c.message).toContain(says);
    }
    expect(other.seen).toEqual([]);
  });
});

describe('--plugin-registries', () => {
  it('refuses a registry it does not list before any request, with a condition naming it and the flag', async () => {
    const registry = await serve((req, res) => {
      if (req.url?.includes('/manifests/')) sendManifest(res, ART);
      else res.writeHead(200).end(ART.blob);
    });
    const hh = start(['registry.example.com', 'ghcr.io']);
    expect(hh.logs.filter((l) => /registr/.test(l.msg))).toEqual([
      {
        level: 'info',
        msg: 'plugins are fetched only from the registries of --plugin-registries',
        fields: { registries: ['registry.example.com', 'ghcr.io'] },
      },
    ]);
    hh.input.next(upsert('test', plugin('elsewhere', `${registry.host}/team/p:v1`)));
    const c = await fetched(hh, 'elsewhere', (x) => x.reason === 'RefNotPermitted');
    expect(c.status).toBe('False');
    expect(c.message).toContain(`registry ${registry.host} is not one this controller fetches plugins from`);
    expect(c.message).toContain('--plugin-registries: registry.example.com, ghcr.io');
    expect(registry.seen).toEqual([]);
    h!.sub.unsubscribe();
    h!.worker.stop();

    // Listed (in any case), it is fetched; unset, any registry is, and the log says so.
    const listed = start([registry.host.toUpperCase()]);
    listed.input.next(upsert('test', plugin('listed', `${registry.host}/team/p:v1`)));
    expect((await fetched(listed, 'listed', (x) => x.status === 'True')).reason).toBe('Fetched');
    h!.sub.unsubscribe();
    h!.worker.stop();
    const any = start();
    expect(any.logs.map((l) => l.msg)).toContain(
      'plugins are fetched from any registry their PluginInstallation names (no --plugin-registries)',
    );
  });
});
