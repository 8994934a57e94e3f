// A registry client for the distribution API v2, on Node's fetch: manifests (OCI and Docker,
// single images and indexes), blobs streamed through sha256 with a size cap, and anonymous,
// basic or bearer-token auth. Every request has a deadline. Errors are PluginFetchErrors whose
// reason is the Fetched condition's.
import { createHash } from 'node:crypto';
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

export function sha256Digest(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

export class OciClient {
  /** Authorization headers by `registry repository credentials`, with when they expire. */
  private readonly tokens = new Map<string, { header: string; until: number }>();

  constructor(private readonly opts: OciClientOptions) {}

  private base(ref: ImageReference): string {
    const plain = isLoopback(ref.registry) || (this.opts.insecureRegistries ?? []).includes(ref.registry);
    return `${plain ? 'http' : 'https'}://${ref.registry}/v2/${ref.repository}`;
  }

  /** GET with auth: answers a 401 challenge once (basic, or a bearer token for pull scope). */
  private async get(
    ref: ImageReference,
    url: string,
    creds: RegistryCredentials | undefined,
    accept?: string,
  ): Promise<Response> {
    // Keyed by the credentials too: a changed pull Secret must not ride on the old one's token.
    const who = creds
      ? createHash('sha256').update(`${creds.username}\0${creds.password}`).digest('hex').slice(0, 16)
      : 'anonymous';
    const key = `${ref.registry} ${ref.repository} ${who}`;
    const cached = this.tokens.get(key);
    const headers: Record<string, string> = accept ? { accept } : {};
    if (cached && cached.until > Date.now()) headers.authorization = cached.header;
    let res = await this.send(ref, url, headers);
    if (res.status !== 401) return res;
    await res.body?.cancel();
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
        `${ref.registry} answered 401 with no usable challenge (${res.headers.get('www-authenticate') ?? 'none'})`,
      );
    }
    this.tokens.set(key, { header: auth, until: Date.now() + 50_000 });
    res = await this.send(ref, url, { ...headers, authorization: auth });
    if (res.status === 401) {
      await res.body?.cancel();
      this.tokens.delete(key);
      throw new PluginFetchError(
        'Unauthorized',
        `${ref.registry} rejected the credentials${creds ? ` of user "${creds.username}"` : ''} for ${ref.repository}`,
      );
    }
    return res;
  }

  private async bearerToken(
    ref: ImageReference,
    params: Record<string, string>,
    creds: RegistryCredentials | undefined,
  ): Promise<string> {
    const u = new URL(params.realm!);
    if (params.service) u.searchParams.set('service', params.service);
    u.searchParams.set('scope', params.scope ?? `repository:${ref.repository}:pull`);
    const headers: Record<string, string> = creds
      ? { authorization: `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}` }
      : {};
    const res = await this.send(ref, u.toString(), headers);
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new PluginFetchError(
        'Unauthorized',
        `token endpoint ${u.host} refused ${creds ? `user "${creds.username}"` : 'anonymous access'} for ` +
          `${ref.repository}`,
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new PluginFetchError(
        res.status >= 500 ? 'Pending' : 'FetchFailed',
        `token endpoint ${u.host} answered ${res.status}`,
      );
    }
    const body = (await res.json().catch(() => ({}))) as { token?: string; access_token?: string; expires_in?: number };
    const token = body.token ?? body.access_token;
    if (!token) throw new PluginFetchError('FetchFailed', `token endpoint ${u.host} answered without a token`);
    return `Bearer ${token}`;
  }

  private async send(ref: ImageReference, url: string, headers: Record<string, string>): Promise<Response> {
    try {
      return await fetch(url, { headers, signal: AbortSignal.timeout(this.opts.timeoutMs), redirect: 'follow' });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'TimeoutError' || err.name === 'AbortError')
        throw new PluginFetchError('Pending', `${ref.registry} did not answer within ${this.opts.timeoutMs / 1000}s`);
      throw new PluginFetchError(
        'Pending',
        `${ref.registry} is unreachable: ${err.cause?.code ?? err.cause?.message ?? err.message}`,
      );
    }
  }

  private async check(ref: ImageReference, res: Response, what: string): Promise<void> {
    if (res.ok) return;
    const text = (await res.text().catch(() => '')).slice(0, 200).replace(/\s+/g, ' ');
    const detail = `${ref.registry}/${ref.repository}: ${what} answered ${res.status}${text ? ` (${text})` : ''}`;
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
    const res = await this.get(ref, `${this.base(ref)}/manifests/${reference}`, creds, MANIFEST_ACCEPT);
    await this.check(ref, res, `manifest ${reference}`);
    const { data: body, digest } = await this.readLimited(ref, res, MAX_MANIFEST_BYTES, `manifest ${reference}`);
    if (reference.startsWith('sha256:') && digest !== reference) {
      throw new PluginFetchError(
        'InvalidArtifact',
        `${ref.registry}/${ref.repository}: manifest ${reference} has digest ${digest}; refusing content that ` +
          `does not match its digest`,
      );
    }
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw new PluginFetchError(
        'InvalidArtifact',
        `${ref.registry}/${ref.repository}: manifest ${reference} is not JSON`,
      );
    }
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
          `${String(doc.mediaType ?? 'unknown')})`,
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
    const res = await this.get(ref, `${this.base(ref)}/blobs/${desc.digest}`, creds);
    await this.check(ref, res, `blob ${desc.digest}`);
    const { data, digest } = await this.readLimited(ref, res, this.opts.maxBytes, `blob ${desc.digest}`);
    if (digest !== desc.digest)
      throw new PluginFetchError(
        'InvalidArtifact',
        `${ref.registry}/${ref.repository}: blob ${desc.digest} has digest ${digest}; refusing content that ` +
          `does not match its digest`,
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
          throw new PluginFetchError(
            'TooLarge',
            `${ref.registry}/${ref.repository}: ${what} is over the limit of ${limit} bytes`,
          );
        }
        hash.update(value);
        chunks.push(Buffer.from(value));
      }
    } catch (e) {
      if (e instanceof PluginFetchError) throw e;
      const err = e as Error;
      throw new PluginFetchError(
        'Pending',
        `${ref.registry}/${ref.repository}: reading ${what} failed: ` +
          `${err.name === 'TimeoutError' ? `no answer within ${this.opts.timeoutMs / 1000}s` : err.message}`,
      );
    }
    return { data: Buffer.concat(chunks, size), digest: `sha256:${hash.digest('hex')}` };
  }
}
