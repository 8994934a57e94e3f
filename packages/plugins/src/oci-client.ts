// A registry client for the distribution API v2, on Node's fetch: manifests (OCI and Docker,
// single images and indexes), blobs streamed through sha256 with a size cap, and anonymous,
// basic or bearer-token auth. Every request has a deadline. Errors are PluginFetchErrors whose
// reason is the Fetched condition's.
//
// Whoever may create a PluginInstallation names the registry, so what the controller fetches is
// theirs to steer: redirects are followed only where the distribution API needs them (blobs),
// never from HTTPS to plain HTTP, credentials go nowhere but the registry and its HTTPS token
// endpoint, and no part of an answer's body reaches a message (messages end up in the status).
import { createHash } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { manifestReference, type ImageReference } from '@turnpike/api';
import type { RegistryCredentials } from './docker-config.js';
import { PluginFetchError } from './errors.js';

export const MEDIA_TYPES = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
} as const;
const MANIFEST_ACCEPT = Object.values(MEDIA_TYPES).join(', ');
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** Redirects followed per request: a blob needs one (to its storage); a CDN may add a few. */
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** What a request is for: it decides where it may be redirected. */
type Purpose = 'manifest' | 'blob' | 'token';

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { os?: string; architecture?: string };
  annotations?: Record<string, string>;
  artifactType?: string;
}
export interface ImageManifest {
  mediaType?: string;
  artifactType?: string;
  config?: Descriptor;
  layers: Descriptor[];
}
export interface ResolvedManifest {
  digest: string;
  manifest: ImageManifest;
}

export interface OciClientOptions {
  /** Largest blob fetched, in bytes. */
  maxBytes: number;
  /** Deadline of each request, in milliseconds. */
  timeoutMs: number;
  /** Registry hosts reached over plain HTTP; loopback hosts always are. */
  insecureRegistries?: readonly string[];
  /** The fetch requests go through (tests pass one that trusts their CA); redirects are ours to follow. */
  fetch?: typeof fetch;
}

function isLoopback(registry: string): boolean {
  const host = registry.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

function parseChallenge(header: string | null): { scheme: string; params: Record<string, string> } | undefined {
  if (!header) return undefined;
  const m = /^\s*(\w+)\s*(.*)$/.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  for (const p of m[2]!.matchAll(/(\w+)\s*=\s*(?:"([^"]*)"|([^,\s]*))/g))
    params[p[1]!.toLowerCase()] = p[2] ?? p[3] ?? '';
  return { scheme: m[1]!.toLowerCase(), params };
}

/** A status in our words: its code and the standard phrase, never the registry's own text. */
function statusOf(code: number): string {
  return STATUS_CODES[code] ? `${code} ${STATUS_CODES[code]}` : String(code);
}

/** A media type as a message may name it: the shape RFC 6838 allows, else not at all. */
export function mediaTypeName(value: unknown): string {
  return typeof value === 'string' && /^[\w.+-]{1,64}\/[\w.+-]{1,127}$/.test(value) ? value : 'unknown';
}

/** `repo:tag` or `repo@digest`. */
function named(ref: ImageReference, reference: string): string {
  return `${ref.repository}${reference.includes(':') ? '@' : ':'}${reference}`;
}

export function sha256Digest(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

export class OciClient {
  /** Authorization headers by `registry repository credentials`, with when they expire. */
  private readonly tokens = new Map<string, { header: string; until: number }>();
  private readonly fetch: typeof fetch;

  constructor(private readonly opts: OciClientOptions) {
    this.fetch = opts.fetch ?? globalThis.fetch;
  }

  /** Reached over plain HTTP: loopback, or configured so (`--insecure-registry`). */
  private insecure(registry: string): boolean {
    return isLoopback(registry) || (this.opts.insecureRegistries ?? []).includes(registry);
  }

  private origin(ref: ImageReference): string {
    return `${this.insecure(ref.registry) ? 'http' : 'https'}://${ref.registry}`;
  }

  private base(ref: ImageReference): string {
    return `${this.origin(ref)}/v2/${ref.repository}`;
  }

  /**
   * GET with auth: answers a 401 challenge once (basic, or a bearer token for pull scope). Says
   * whether the answer came from another origin (blob storage the registry redirected to).
   */
  private async get(
    ref: ImageReference,
    url: string,
    creds: RegistryCredentials | undefined,
    purpose: Purpose,
    what: string,
    accept?: string,
  ): Promise<{ res: Response; elsewhere: boolean }> {
    // Keyed by the credentials too: a changed pull Secret must not ride on the old one's token.
    const who = creds
      ? createHash('sha256').update(`${creds.username}\0${creds.password}`).digest('hex').slice(0, 16)
      : 'anonymous';
    const key = `${ref.registry} ${ref.repository} ${who}`;
    const cached = this.tokens.get(key);
    const headers: Record<string, string> = accept ? { accept } : {};
    if (cached && cached.until > Date.now()) headers.authorization = cached.header;
    const first = await this.send(ref, url, headers, purpose, what);
    let res = first.res;
    const elsewhere = first.url.origin !== this.origin(ref);
    if (res.status !== 401) return { res, elsewhere };
    await res.body?.cancel();
    // A challenge is answered for the registry only: blob storage it redirected to gets nothing.
    if (elsewhere)
      throw new PluginFetchError(
        'Unauthorized',
        `${ref.registry} redirected ${what} to another origin, which answered 401 Unauthorized; the registry's ` +
          `credentials are not sent there`,
        `redirected to ${first.url.origin}`,
      );
    const challenge = parseChallenge(res.headers.get('www-authenticate'));
    let auth: string;
    if (challenge?.scheme === 'basic') {
      if (!creds)
        throw new PluginFetchError(
          'Unauthorized',
          `${ref.registry} asks for credentials (basic auth) and spec.pullSecretRef gives none`,
        );
      auth = `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`;
    } else if (challenge?.scheme === 'bearer' && challenge.params.realm) {
      auth = await this.bearerToken(ref, challenge.params, creds);
    } else {
      throw new PluginFetchError(
        'Unauthorized',
        `${ref.registry} answered 401 Unauthorized for ${what} with no challenge we answer (basic, or bearer ` +
          `with a realm)`,
      );
    }
    this.tokens.set(key, { header: auth, until: Date.now() + 50_000 });
    const again = await this.send(ref, url, { ...headers, authorization: auth }, purpose, what);
    res = again.res;
    if (res.status === 401) {
      await res.body?.cancel();
      this.tokens.delete(key);
      throw new PluginFetchError(
        'Unauthorized',
        `${ref.registry} rejected the credentials${creds ? ` of user "${creds.username}"` : ''} for ${ref.repository}`,
      );
    }
    return { res, elsewhere: again.url.origin !== this.origin(ref) };
  }

  private async bearerToken(
    ref: ImageReference,
    params: Record<string, string>,
    creds: RegistryCredentials | undefined,
  ): Promise<string> {
    let u: URL;
    try {
      u = new URL(params.realm!);
    } catch {
      throw new PluginFetchError('FetchFailed', `${ref.registry} names a token endpoint (Bearer realm) that is no URL`);
    }
    // The realm is the registry's to name, and it receives the pull Secret's credentials: over
    // HTTPS only, or, for a registry configured insecure, plain HTTP on the registry's own host.
    // (The distribution spec leaves auth to the registry; Docker's token authentication spec has
    // the client ask the challenge's realm for a token, and says nothing of where that may be.)
    const ownHost = u.hostname === new URL(this.origin(ref)).hostname;
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && this.insecure(ref.registry) && ownHost))
      throw new PluginFetchError(
        'FetchFailed',
        `${ref.registry} names a token endpoint (Bearer realm) that is not HTTPS` +
          `${this.insecure(ref.registry) ? ' nor on its own host' : ''}; refusing to send it credentials`,
        `realm ${u.origin}`,
      );
    u.username = u.password = '';
    if (params.service) u.searchParams.set('service', params.service);
    u.searchParams.set('scope', params.scope ?? `repository:${ref.repository}:pull`);
    const headers: Record<string, string> = creds
      ? { authorization: `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}` }
      : {};
    const what = `the token endpoint of ${ref.registry}`;
    const { res } = await this.send(ref, u.toString(), headers, 'token', what);
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new PluginFetchError(
        'Unauthorized',
        `${what} refused ${creds ? `user "${creds.username}"` : 'anonymous access'} for ${ref.repository}`,
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new PluginFetchError(
        res.status >= 500 ? 'Pending' : 'FetchFailed',
        `${what} answered ${statusOf(res.status)}`,
      );
    }
    const body = (await res.json().catch(() => ({}))) as { token?: string; access_token?: string; expires_in?: number };
    const token = body.token ?? body.access_token;
    if (typeof token !== 'string' || !token)
      throw new PluginFetchError('FetchFailed', `${what} answered without a token`);
    return `Bearer ${token}`;
  }

  /**
   * One GET, following redirects ourselves (fetch would follow any, to any scheme and origin).
   * Answers the last response and where it came from.
   */
  private async send(
    ref: ImageReference,
    start: string,
    headers: Record<string, string>,
    purpose: Purpose,
    what: string,
  ): Promise<{ res: Response; url: URL }> {
    const first = new URL(start);
    let url = first;
    let sent = headers;
    // One deadline for the request, its redirects and reading its body.
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    for (let hops = 0; ; hops++) {
      let res: Response;
      try {
        res = await this.fetch(url, { headers: sent, signal, redirect: 'manual' });
      } catch (e) {
        const err = e as Error & { cause?: { code?: unknown } };
        const who = url.origin === first.origin ? ref.registry : `the address ${ref.registry} redirected ${what} to`;
        if (err.name === 'TimeoutError' || err.name === 'AbortError')
          throw new PluginFetchError('Pending', `${who} did not answer within ${this.opts.timeoutMs / 1000}s`);
        // The error code only (ECONNREFUSED, CERT_HAS_EXPIRED): messages of TLS and parser errors quote the peer.
        const code = err.cause?.code;
        throw new PluginFetchError(
          'Pending',
          `${who} is unreachable: ${typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? code : 'the connection failed'}`,
        );
      }
      if (!REDIRECT_STATUSES.has(res.status)) return { res, url };
      await res.body?.cancel();
      const next = this.redirect(ref, res, url, first, purpose, what, hops);
      // Credentials are the registry's: never forwarded to another origin (its blob storage
      // authorizes with the signed URL it redirected to). Once dropped, they stay dropped.
      if (next.origin !== first.origin && 'authorization' in sent) {
        const { authorization: _, ...rest } = sent;
        sent = rest;
      }
      url = next;
    }
  }

  /** Where a redirect may go, or why it may not. */
  private redirect(
    ref: ImageReference,
    res: Response,
    from: URL,
    first: URL,
    purpose: Purpose,
    what: string,
    hops: number,
  ): URL {
    const refuse = (why: string, detail?: string) =>
      new PluginFetchError('FetchFailed', `${ref.registry} redirected ${what} ${why}; refusing to follow`, detail);
    if (hops >= MAX_REDIRECTS) throw refuse(`more than ${MAX_REDIRECTS} times`);
    const location = res.headers.get('location');
    if (!location) throw refuse(`(${statusOf(res.status)}) without a Location`);
    let to: URL;
    try {
      to = new URL(location, from);
    } catch {
      throw refuse('to an address that is no URL');
    }
    if (to.protocol !== 'https:' && to.protocol !== 'http:')
      throw refuse('to an address that is neither HTTPS nor HTTP');
    if (to.protocol === 'http:' && !this.insecure(ref.registry))
      throw refuse('to plain HTTP (only a registry configured insecure may be reached so)', `to ${to.origin}`);
    // Docker Registry HTTP API V2, "Pulling a Layer" (carried into OCI distribution-spec v1.0): the
    // blob endpoint "may issue a 307 redirect to another service for downloading the layer". A
    // manifest (and a token) is answered by the registry itself: another origin is refused.
    if (purpose !== 'blob' && to.origin !== first.origin)
      throw refuse('to another origin (only blob downloads may leave the registry)', `to ${to.origin}`);
    return to;
  }

  /** A failed answer, in our words: its status code, never its body (the message goes into the status). */
  private async check(
    ref: ImageReference,
    { res, elsewhere }: { res: Response; elsewhere: boolean },
    what: string,
  ): Promise<void> {
    if (res.ok) return;
    await res.body?.cancel().catch(() => undefined);
    const detail = elsewhere
      ? `${ref.registry} redirected ${what} to another origin, which answered ${statusOf(res.status)}`
      : `${ref.registry} answered ${statusOf(res.status)} for ${what}`;
    if (res.status === 404) throw new PluginFetchError('NotFound', detail);
    if (res.status === 403) throw new PluginFetchError('Unauthorized', detail);
    if (res.status >= 500 || res.status === 429) throw new PluginFetchError('Pending', detail);
    throw new PluginFetchError('FetchFailed', detail);
  }

  private async manifestAt(
    ref: ImageReference,
    reference: string,
    creds: RegistryCredentials | undefined,
  ): Promise<{ digest: string; doc: Record<string, unknown>; mediaType: string }> {
    const what = `the manifest of ${named(ref, reference)}`;
    const answer = await this.get(
      ref,
      `${this.base(ref)}/manifests/${reference}`,
      creds,
      'manifest',
      what,
      MANIFEST_ACCEPT,
    );
    await this.check(ref, answer, what);
    const { res } = answer;
    const { data: body, digest } = await this.readLimited(ref, res, MAX_MANIFEST_BYTES, what);
    if (reference.startsWith('sha256:') && digest !== reference) {
      throw new PluginFetchError(
        'InvalidArtifact',
        `${ref.registry}: ${what} does not match its digest; refusing it`,
        `digest ${digest}`,
      );
    }
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw new PluginFetchError('InvalidArtifact', `${ref.registry}: ${what} is not JSON`);
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc))
      throw new PluginFetchError('InvalidArtifact', `${ref.registry}: ${what} is not a JSON object`);
    const mediaType = String(doc.mediaType ?? res.headers.get('content-type') ?? '');
    return { digest, doc, mediaType };
  }

  /**
   * Resolves the reference to an image manifest. An index (multi-platform image) resolves to its
   * first entry that is an image (attestations and `unknown` platforms are skipped): plugins are
   * platform-independent. The digest returned is the one the reference named (the index's).
   */
  async resolve(ref: ImageReference, creds?: RegistryCredentials): Promise<ResolvedManifest> {
    const top = await this.manifestAt(ref, manifestReference(ref), creds);
    if (
      top.mediaType === MEDIA_TYPES.ociIndex ||
      top.mediaType === MEDIA_TYPES.dockerList ||
      Array.isArray(top.doc.manifests)
    ) {
      const entries = (top.doc.manifests ?? []) as Descriptor[];
      const pick = entries.find(
        (d) => d.annotations?.['vnd.docker.reference.type'] !== 'attestation-manifest' && d.platform?.os !== 'unknown',
      );
      if (!pick)
        throw new PluginFetchError(
          'InvalidArtifact',
          `${ref.registry}/${ref.repository}: the index ${top.digest} lists no image manifest`,
        );
      const inner = await this.manifestAt(ref, pick.digest, creds);
      return { digest: top.digest, manifest: this.asImage(ref, inner.doc, inner.digest) };
    }
    return { digest: top.digest, manifest: this.asImage(ref, top.doc, top.digest) };
  }

  private asImage(ref: ImageReference, doc: Record<string, unknown>, digest: string): ImageManifest {
    if (!Array.isArray(doc.layers))
      throw new PluginFetchError(
        'InvalidArtifact',
        `${ref.registry}/${ref.repository}@${digest}: manifest has no layers (media type ` +
          `${mediaTypeName(doc.mediaType)})`,
      );
    return doc as unknown as ImageManifest;
  }

  /** Downloads a blob, hashing as it streams; stops at the size limit; checks the digest. */
  async blob(ref: ImageReference, desc: Descriptor, creds?: RegistryCredentials): Promise<Buffer> {
    if (desc.size > this.opts.maxBytes)
      throw new PluginFetchError(
        'TooLarge',
        `${ref.registry}/${ref.repository}: layer ${desc.digest} is ${desc.size} bytes, over the limit of ` +
          `${this.opts.maxBytes}`,
      );
    const what = `blob ${desc.digest} of ${ref.repository}`;
    const answer = await this.get(ref, `${this.base(ref)}/blobs/${desc.digest}`, creds, 'blob', what);
    await this.check(ref, answer, what);
    const { data, digest } = await this.readLimited(ref, answer.res, this.opts.maxBytes, what);
    // The digest it has is not named: after a redirect, the bytes may be another service's.
    if (digest !== desc.digest)
      throw new PluginFetchError(
        'InvalidArtifact',
        `${ref.registry}: ${what} does not match its digest; refusing it`,
        `digest ${digest}`,
      );
    return data;
  }

  /** Reads a body up to `limit` bytes, hashing it as it streams in. */
  private async readLimited(
    ref: ImageReference,
    res: Response,
    limit: number,
    what: string,
  ): Promise<{ data: Buffer; digest: string }> {
    const chunks: Buffer[] = [];
    const hash = createHash('sha256');
    let size = 0;
    if (!res.body) return { data: Buffer.alloc(0), digest: sha256Digest(Buffer.alloc(0)) };
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) {
          await reader.cancel();
          throw new PluginFetchError('TooLarge', `${ref.registry}: ${what} is over the limit of ${limit} bytes`);
        }
        hash.update(value);
        chunks.push(Buffer.from(value));
      }
    } catch (e) {
      if (e instanceof PluginFetchError) throw e;
      const err = e as Error;
      throw new PluginFetchError(
        'Pending',
        `${ref.registry}: reading ${what} failed: ` +
          `${err.name === 'TimeoutError' ? `no answer within ${this.opts.timeoutMs / 1000}s` : 'the connection broke'}`,
      );
    }
    return { data: Buffer.concat(chunks, size), digest: `sha256:${hash.digest('hex')}` };
  }
}
