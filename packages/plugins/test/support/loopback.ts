// Small HTTP(S) servers on loopback standing for a registry, its blob storage, a token realm or
// any service a tenant might point the fetcher at: each answers as a test says and records what
// it was asked (and with which Authorization). Plus a plugin artifact to serve, and a fetch that
// trusts a test CA and reaches `*.test` host names on this machine.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

export interface Seen {
  path: string;
  authorization?: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, self: Loopback) => void;

export class Loopback {
  readonly seen: Seen[] = [];
  port = 0;

  private readonly server: Server;
  readonly scheme: 'http' | 'https';

  private constructor(
    handler: Handler,
    /** The host name clients use (`127.0.0.1`, or a `*.test` name with fetchTrusting). */
    readonly hostname: string,
    tls: { cert: string; key: string } | undefined,
  ) {
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      this.seen.push({
        path: req.url ?? '/',
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      });
      handler(req, res, this);
    };
    this.server = tls ? createTlsServer(tls, listener) : createServer(listener);
    this.scheme = tls ? 'https' : 'http';
  }

  /** `host:port`, as an image names its registry. */
  get host(): string {
    return `${this.hostname}:${this.port}`;
  }

  get origin(): string {
    return `${this.scheme}://${this.host}`;
  }

  static async start(
    handler: Handler,
    opts: { bind?: string; hostname?: string; tls?: { cert: string; key: string } } = {},
  ): Promise<Loopback> {
    const bind = opts.bind ?? '127.0.0.1';
    const self = new Loopback(handler, opts.hostname ?? bind, opts.tls);
    await new Promise<void>((r) => self.server.listen(0, bind, () => r()));
    self.port = (self.server.address() as AddressInfo).port;
    return self;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

const digestOf = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A Lua plugin as an OCI artifact: its manifest and its one blob, with their digests. */
export function luaArtifact(lua: string): {
  manifest: Buffer;
  manifestDigest: string;
  blob: Buffer;
  blobDigest: string;
} {
  const blob = Buffer.from(lua);
  const empty = Buffer.from('{}');
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      artifactType: 'application/vnd.turnpike.plugin.v1',
      config: { mediaType: 'application/vnd.oci.empty.v1+json', digest: digestOf(empty), size: empty.length },
      layers: [{ mediaType: 'application/vnd.turnpike.plugin.lua.v1', digest: digestOf(blob), size: blob.length }],
    }),
  );
  return { manifest, manifestDigest: digestOf(manifest), blob, blobDigest: digestOf(blob) };
}

/** Answers a manifest request with the artifact's manifest. */
export function sendManifest(res: ServerResponse, a: { manifest: Buffer }): void {
  res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }).end(a.manifest);
}

export const basic = (username: string, password: string): string =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

/**
 * A fetch for HTTPS test servers: trusts `ca` and connects every `*.test` host to 127.0.0.1 (the
 * name stays the TLS server name and the Host). Plain HTTP goes to Node's fetch. Like fetch with
 * `redirect: 'manual'`, it follows no redirect.
 */
export function fetchTrusting(ca: string): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.protocol !== 'https:') return fetch(url, init);
    if (!url.hostname.endsWith('.test')) throw new Error(`fetchTrusting: ${url.hostname} is not a test host`);
    return new Promise<Response>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: url.port,
          path: `${url.pathname}${url.search}`,
          servername: url.hostname,
          ca,
          headers: { ...(init?.headers as Record<string, string> | undefined), host: url.host },
          ...(init?.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers))
            for (const one of v === undefined ? [] : [v].flat()) headers.append(k, one);
          const status = res.statusCode ?? 500;
          const empty = [101, 204, 205, 304].includes(status);
          if (empty) res.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>), {
              status,
              headers,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  }) as typeof fetch;
}
