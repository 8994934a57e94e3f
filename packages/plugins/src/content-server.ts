// Serves large plugin content to the proxies, at `/plugins/<token>.<type>` where the token is an
// HMAC of the content's sha256: a URL cannot be guessed from what a tenant can see, and replicas
// sharing the key serve the same URLs. Envoy checks the sha256 it was given. With TLS material the
// server speaks HTTPS and requires a client certificate signed by the control-plane CA (a proxy's),
// and (with `readerOf`) serves content only to the proxies of Gateways whose configuration uses it
// (`setReaders`). Certificates change for new connections without a restart: from a source the server
// follows from the moment it is made (a rotating CA), or by `setTls`.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { PluginContentStore } from './content-store.js';

/** PEM: the server's certificate and key, and the CAs whose client certificates it accepts. */
export interface ContentServerTls {
  cert: string;
  key: string;
  /** Client certificates must chain to these CAs; absent: server TLS only, any client may fetch. */
  ca?: string;
}

/**
 * TLS material that changes while the server runs. The server listens to it from the moment it is
 * made, so no change is lost between reading it and listening (a serving certificate issued while the
 * controller starts), and it never serves without a certificate.
 */
export interface ContentTlsSource {
  /** The material now; undefined while there is no serving certificate. */
  current(): ContentServerTls | undefined;
  /** `listener` is called after any of it changed. */
  onChange(listener: () => void): void;
}

function isSource(tls: ContentServerTls | ContentTlsSource | undefined): tls is ContentTlsSource {
  return !!tls && 'current' in tls;
}

/** The Gateway (`namespace/name`) a client certificate's subjectAltName names, if it names one. */
export type ContentReader = (subjectAltName: string | undefined) => string | undefined;

export class PluginContentServer {
  private readonly tokens = new Map<string, string>();
  private server?: Server | HttpsServer;
  private readonly source?: ContentTlsSource;
  private tls?: ContentServerTls;
  /** The material the server presents now (what `tls` or the source said when it was last applied). */
  private applied?: ContentServerTls;
  /** sha256 → the Gateways whose configuration uses that content. */
  private readers = new Map<string, ReadonlySet<string>>();

  /**
   * `publicBase` is where proxies reach this server; without one, the address it listens on.
   * `readerOf`, with TLS: which Gateway a client certificate names; content then goes only to
   * the proxies of Gateways that use it. `onTlsError`: new material that could not be used (the
   * server goes on with what it had).
   */
  constructor(
    private readonly content: PluginContentStore,
    private publicBase?: string,
    private readonly key: Buffer = randomBytes(32),
    tls?: ContentServerTls | ContentTlsSource,
    private readonly readerOf?: ContentReader,
    private readonly onTlsError?: (e: Error) => void,
  ) {
    if (isSource(tls)) {
      this.source = tls;
      tls.onChange(() => this.apply(tls.current()));
    } else this.tls = tls;
  }

  /** Which Gateways use which content, from the latest translation. */
  setReaders(readers: Map<string, ReadonlySet<string>>): void {
    this.readers = readers;
  }

  /** New certificates (rotation): new connections use them. */
  setTls(tls: ContentServerTls): void {
    this.tls = tls;
    this.apply(tls);
  }

  private apply(tls: ContentServerTls | undefined): void {
    const a = this.applied;
    if (!tls || !this.server || !('setSecureContext' in this.server)) return;
    if (a && a.cert === tls.cert && a.key === tls.key && a.ca === tls.ca) return;
    try {
      this.server.setSecureContext(secureContext(tls));
      this.applied = tls;
    } catch (e) {
      this.onTlsError?.(e as Error);
    }
  }

  /** The URL proxies fetch this content at. */
  urlFor(sha256: string, type: string): string {
    const token = createHmac('sha256', this.key).update(sha256).digest('base64url');
    this.tokens.set(token, sha256);
    return `${(this.publicBase ?? 'http://127.0.0.1').replace(/\/$/, '')}/plugins/${token}.${type}`;
  }

  async listen(host: string, port: number): Promise<number> {
    const handle = (req: IncomingMessage, res: ServerResponse) => {
      const m = /^\/plugins\/([A-Za-z0-9_-]{43})\.(lua|wasm)$/.exec(req.url ?? '');
      const sha = m ? this.tokens.get(m[1]!) : undefined;
      const body = sha && this.mayRead(req, sha) ? this.content.get(sha) : undefined;
      // Content a client may not read is as absent as content that does not exist.
      if (req.method !== 'GET' || !body) {
        res.writeHead(404).end();
        return;
      }
      res
        .writeHead(200, {
          'content-type': m![2] === 'wasm' ? 'application/wasm' : 'text/plain',
          'content-length': body.length,
          'cache-control': 'no-store',
        })
        .end(body);
    };
    const tls = this.source ? this.source.current() : this.tls;
    // A TLS server without a certificate answers every handshake with alert 40 (handshake_failure).
    if ((this.source && !tls) || (tls && (!tls.cert || !tls.key)))
      throw new Error('plugin content is served over TLS, and there is no serving certificate yet');
    this.server = tls
      ? createHttpsServer(
          {
            ...secureContext(tls),
            ...(tls.ca ? { requestCert: true, rejectUnauthorized: true } : {}),
            minVersion: 'TLSv1.2',
          },
          handle,
        )
      : createServer(handle);
    this.applied = tls;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    const bound = (this.server.address() as AddressInfo).port;
    const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    this.publicBase ??= `${tls ? 'https' : 'http'}://${reachable}:${bound}`;
    return bound;
  }

  private mayRead(req: IncomingMessage, sha256: string): boolean {
    if (!this.applied?.ca || !this.readerOf) return true;
    const peer = (req.socket as TLSSocket).getPeerCertificate?.();
    const gateway = this.readerOf(peer?.subjectaltname);
    return gateway !== undefined && (this.readers.get(sha256)?.has(gateway) ?? false);
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

function secureContext(tls: ContentServerTls): { cert: string; key: string; ca?: string } {
  return { cert: tls.cert, key: tls.key, ...(tls.ca ? { ca: tls.ca } : {}) };
}
