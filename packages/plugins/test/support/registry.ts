// A real OCI registry for tests: Debian's `docker-registry` (distribution v2) on loopback, with
// filesystem storage in a temp dir, optionally behind htpasswd (basic) or token (bearer) auth.
// `push` uploads blobs and a manifest through the distribution API, as `oras push` would.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, createSign, randomUUID, sign, type KeyObject } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as netServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import bcrypt from 'bcryptjs';
import { pack } from 'tar-stream';

export const REGISTRY_BINARY = process.env.TURNPIKE_REGISTRY_BINARY ?? '/usr/bin/docker-registry';

export interface RegistryAuth {
  basic?: { username: string; password: string };
  token?: boolean;
}

async function freePort(): Promise<number> {
  const s = netServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const USER = { username: 'plugin-puller', password: 'correct horse' };

export class TestRegistry {
  private proc?: ChildProcess;
  private tokenServer?: Server;
  readonly dir = mkdtempSync(join(tmpdir(), 'tp-registry-'));
  host = '';
  log = '';
  /** Credentials the registry accepts (when it has auth). */
  readonly user = USER;

  private constructor(private readonly auth: RegistryAuth) {}

  static async start(auth: RegistryAuth = {}): Promise<TestRegistry> {
    if (!existsSync(REGISTRY_BINARY))
      throw new Error(`${REGISTRY_BINARY} not found: install Debian's docker-registry (scripts/setup.sh does)`);
    const r = new TestRegistry(auth);
    const port = await freePort();
    r.host = `127.0.0.1:${port}`;
    await r.writeConfig(port);
    await r.up();
    return r;
  }

  private async writeConfig(port: number): Promise<void> {
    let authBlock = '';
    if (this.auth.basic) {
      writeFileSync(
        join(this.dir, 'htpasswd'),
        `${this.auth.basic.username}:${bcrypt.hashSync(this.auth.basic.password, 5)}\n`,
      );
      authBlock = `auth:\n  htpasswd:\n    realm: turnpike-test\n    path: ${join(this.dir, 'htpasswd')}\n`;
    } else if (this.auth.token) {
      const key = join(this.dir, 'token.key'),
        cert = join(this.dir, 'token.crt');
      const r = spawnSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          key,
          '-out',
          cert,
          '-days',
          '1',
          '-subj',
          '/CN=turnpike-test-token',
        ],
        { encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(`openssl: ${r.stderr}`);
      const realm = await this.startTokenServer(readFileSync(key, 'utf8'), readFileSync(cert, 'utf8'));
      authBlock = `auth:\n  token:\n    realm: ${realm}\n    service: turnpike-test-registry\n    issuer: turnpike-test-issuer\n    rootcertbundle: ${cert}\n`;
    }
    writeFileSync(
      join(this.dir, 'config.yml'),
      `version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: ${join(this.dir, 'data')}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:${port}
${authBlock}`,
    );
  }

  /** A token endpoint (docker token auth): checks basic credentials, issues an RS256 JWT. */
  private async startTokenServer(keyPem: string, certPem: string): Promise<string> {
    const der = certPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
    const b64u = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    this.tokenServer = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const auth = req.headers.authorization ?? '';
      const [user, pass] = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString().split(':') : [];
      if (user !== USER.username || pass !== USER.password) {
        res.writeHead(401).end('{"details":"bad credentials"}');
        return;
      }
      const scope = url.searchParams.get('scope') ?? '';
      const [, name] = scope.split(':');
      const now = Math.floor(Date.now() / 1000);
      const header = b64u({ alg: 'RS256', typ: 'JWT', x5c: [der] });
      const claims = b64u({
        iss: 'turnpike-test-issuer',
        sub: user,
        aud: url.searchParams.get('service'),
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomUUID(),
        access: name ? [{ type: 'repository', name, actions: ['pull', 'push'] }] : [],
      });
      const sig = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(keyPem).toString('base64url');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ token: `${header}.${claims}.${sig}`, expires_in: 300 }));
    });
    await new Promise<void>((r) => this.tokenServer!.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(this.tokenServer.address() as AddressInfo).port}/token`;
  }

  /** Starts the registry process and waits until it answers. */
  async up(): Promise<void> {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) return;
    this.proc = spawn(REGISTRY_BINARY, ['serve', join(this.dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stdout!.on('data', (d: Buffer) => {
      this.log += d.toString();
    });
    this.proc.stderr!.on('data', (d: Buffer) => {
      this.log += d.toString();
    });
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        const res = await fetch(`http://${this.host}/v2/`);
        if (res.status === 200 || res.status === 401) return;
      } catch {
        /* not listening yet */
      }
      if (this.proc.exitCode !== null || Date.now() > deadline)
        throw new Error(`docker-registry did not start: ${this.log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops the process; storage stays, so `up()` brings back the same content. */
  async down(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await exited;
  }

  async stop(): Promise<void> {
    await this.down();
    if (this.tokenServer) await new Promise<void>((r) => this.tokenServer!.close(() => r()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async authHeader(repo: string): Promise<Record<string, string>> {
    if (this.auth.basic)
      return {
        authorization: `Basic ${Buffer.from(`${this.auth.basic.username}:${this.auth.basic.password}`).toString('base64')}`,
      };
    if (this.auth.token) {
      const probe = await fetch(`http://${this.host}/v2/`);
      const realm = /realm="([^"]+)"/.exec(probe.headers.get('www-authenticate') ?? '')![1]!;
      const res = await fetch(`${realm}?service=turnpike-test-registry&scope=repository:${repo}:pull,push`, {
        headers: { authorization: `Basic ${Buffer.from(`${USER.username}:${USER.password}`).toString('base64')}` },
      });
      return { authorization: `Bearer ${((await res.json()) as { token: string }).token}` };
    }
    return {};
  }

  async pushBlob(repo: string, data: Buffer): Promise<string> {
    const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
    const auth = await this.authHeader(repo);
    const start = await fetch(`http://${this.host}/v2/${repo}/blobs/uploads/`, { method: 'POST', headers: auth });
    if (start.status !== 202) throw new Error(`upload start: ${start.status} ${await start.text()}`);
    const loc = new URL(start.headers.get('location')!, `http://${this.host}`);
    loc.searchParams.set('digest', digest);
    const put = await fetch(loc, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: data,
    });
    if (put.status !== 201) throw new Error(`upload: ${put.status} ${await put.text()}`);
    return digest;
  }

  async pushManifest(repo: string, reference: string, manifest: object, mediaType: string): Promise<string> {
    const body = Buffer.from(JSON.stringify(manifest));
    const res = await fetch(`http://${this.host}/v2/${repo}/manifests/${reference}`, {
      method: 'PUT',
      headers: { ...(await this.authHeader(repo)), 'content-type': mediaType },
      body,
    });
    if (res.status !== 201) throw new Error(`manifest: ${res.status} ${await res.text()}`);
    return `sha256:${createHash('sha256').update(body).digest('hex')}`;
  }

  /** Pushes an image whose single layer is a gzip tar of `files`; answers the manifest digest. */
  async pushImage(
    repo: string,
    tag: string,
    files: Record<string, Buffer | string>,
    opts: { docker?: boolean } = {},
  ): Promise<string> {
    const layer = gzipSync(await tarOf(files));
    const config = Buffer.from(
      JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] } }),
    );
    const [layerDigest, configDigest] = [await this.pushBlob(repo, layer), await this.pushBlob(repo, config)];
    const mt = opts.docker
      ? {
          m: 'application/vnd.docker.distribution.manifest.v2+json',
          c: 'application/vnd.docker.container.image.v1+json',
          l: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
        }
      : {
          m: 'application/vnd.oci.image.manifest.v1+json',
          c: 'application/vnd.oci.image.config.v1+json',
          l: 'application/vnd.oci.image.layer.v1.tar+gzip',
        };
    return this.pushManifest(
      repo,
      tag,
      {
        schemaVersion: 2,
        mediaType: mt.m,
        config: { mediaType: mt.c, digest: configDigest, size: config.length },
        layers: [{ mediaType: mt.l, digest: layerDigest, size: layer.length }],
      },
      mt.m,
    );
  }

  /** Pushes an OCI artifact with the plugin file as a layer of our media type. */
  async pushArtifact(repo: string, tag: string, content: Buffer, layerMediaType: string): Promise<string> {
    const empty = Buffer.from('{}');
    const [layerDigest, configDigest] = [await this.pushBlob(repo, content), await this.pushBlob(repo, empty)];
    const mt = 'application/vnd.oci.image.manifest.v1+json';
    return this.pushManifest(
      repo,
      tag,
      {
        schemaVersion: 2,
        mediaType: mt,
        artifactType: 'application/vnd.turnpike.plugin.v1',
        config: { mediaType: 'application/vnd.oci.empty.v1+json', digest: configDigest, size: empty.length },
        layers: [{ mediaType: layerMediaType, digest: layerDigest, size: content.length }],
      },
      mt,
    );
  }

  /**
   * Signs `digest` the way `cosign sign --key` does: a simple-signing payload naming the digest
   * and the repository it is for (`dockerReference`: another one stands for a signature copied
   * from another image), signed with `privateKey` (SHA-256), pushed as the layer of an image
   * tagged `sha256-<hex>.sig`.
   */
  async pushCosignSignature(
    repo: string,
    digest: string,
    privateKey: KeyObject,
    dockerReference = `${this.host}/${repo}`,
  ): Promise<string> {
    const payload = Buffer.from(
      JSON.stringify({
        critical: {
          identity: { 'docker-reference': dockerReference },
          image: { 'docker-manifest-digest': digest },
          type: 'cosign container image signature',
        },
        optional: null,
      }),
    );
    const signature = sign('sha256', payload, privateKey).toString('base64');
    const config = Buffer.from(JSON.stringify({ architecture: '', os: '', rootfs: { type: 'layers', diff_ids: [] } }));
    const [layerDigest, configDigest] = [await this.pushBlob(repo, payload), await this.pushBlob(repo, config)];
    const mt = 'application/vnd.oci.image.manifest.v1+json';
    return this.pushManifest(
      repo,
      `${digest.replace(':', '-')}.sig`,
      {
        schemaVersion: 2,
        mediaType: mt,
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: configDigest, size: config.length },
        layers: [
          {
            mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json',
            digest: layerDigest,
            size: payload.length,
            annotations: { 'dev.cosignproject.cosign/signature': signature },
          },
        ],
      },
      mt,
    );
  }

  /** Pushes an index pointing at `manifestDigest` (plus an attestation entry to skip). */
  async pushIndex(repo: string, tag: string, manifestDigest: string, size: number): Promise<string> {
    const mt = 'application/vnd.oci.image.index.v1+json';
    return this.pushManifest(
      repo,
      tag,
      {
        schemaVersion: 2,
        mediaType: mt,
        manifests: [
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            digest: manifestDigest,
            size,
            platform: { os: 'unknown', architecture: 'unknown' },
            annotations: { 'vnd.docker.reference.type': 'attestation-manifest' },
          },
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            digest: manifestDigest,
            size,
            platform: { os: 'linux', architecture: 'amd64' },
          },
        ],
      },
      mt,
    );
  }

  /** The file the registry keeps a blob in (to corrupt it in a test). */
  blobPath(digest: string): string {
    const hex = digest.slice('sha256:'.length);
    return join(this.dir, 'data', 'docker', 'registry', 'v2', 'blobs', 'sha256', hex.slice(0, 2), hex, 'data');
  }
}

export async function tarOf(files: Record<string, Buffer | string>): Promise<Buffer> {
  const p = pack();
  for (const [name, body] of Object.entries(files))
    p.entry({ name, mode: 0o644 }, typeof body === 'string' ? Buffer.from(body) : body);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A `kubernetes.io/dockerconfigjson` Secret for a registry. */
export function pullSecret(
  namespace: string,
  name: string,
  host: string,
  username: string,
  password: string,
): {
  apiVersion: string;
  kind: string;
  metadata: { namespace: string; name: string };
  type: string;
  data: Record<string, string>;
} {
  const cfg = { auths: { [host]: { auth: Buffer.from(`${username}:${password}`).toString('base64') } } };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace, name },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify(cfg)).toString('base64') },
  };
}
