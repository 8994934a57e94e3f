// A thin HTTP client to the API server on @kubernetes/client-node's configuration and auth
// (kubeconfig or in-cluster), with ONE keep-alive agent for every request and watch: the
// library's own watch makes a new agent per reconnect and leaks sockets on Node 20.
import { request as httpsRequest, Agent, type RequestOptions } from 'node:https';
import { request as httpRequest, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { KubeConfig } from './kube-config.js';
import { ListResponseReader } from './list-response-reader.js';

export interface KubeResponse<T = unknown> {
  status: number;
  body: T;
  text: string;
}

/** A list response is parsed as it arrives once this much of it is in (see KubeClient.list). */
export const STREAM_LIST_AFTER_BYTES = 16 * 1024 * 1024;

export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export class KubeClient {
  private readonly agent: Agent | HttpAgent;
  private readonly server: URL;

  private constructor(readonly kc: KubeConfig) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
    this.agent =
      this.server.protocol === 'http:'
        ? new HttpAgent({ keepAlive: true, maxSockets: 64 })
        : new Agent({ keepAlive: true, maxSockets: 64 });
  }

  /** `context`: one of the kubeconfig's contexts instead of its current one (kubectl's --context). */
  static fromKubeconfig(path: string, context?: string): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    if (context !== undefined) {
      if (!kc.getContextObject(context)) throw new Error(`no context "${context}" in ${path}`);
      kc.setCurrentContext(context);
    }
    return new KubeClient(kc);
  }

  static inCluster(): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromCluster();
    return new KubeClient(kc);
  }

  close(): void {
    this.agent.destroy();
  }

  private async options(method: string, path: string, headers: Record<string, string>): Promise<RequestOptions> {
    const opts: RequestOptions = { method, headers: { Accept: 'application/json', ...headers } };
    // Refreshes credentials (token files rotate) and TLS material on every request.
    await this.kc.applyToHTTPSOptions(opts);
    opts.agent = this.agent as Agent;
    opts.hostname = this.server.hostname;
    opts.port = this.server.port || (this.server.protocol === 'http:' ? 80 : 443);
    opts.path = `${this.server.pathname.replace(/\/$/, '')}${path}`;
    return opts;
  }

  private send(opts: RequestOptions, body?: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = (this.server.protocol === 'http:' ? httpRequest : httpsRequest)(opts, resolve);
      req.on('error', reject);
      req.setTimeout(60_000, () => req.destroy(new Error(`${opts.method} ${opts.path}: timed out`)));
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<KubeResponse<T>> {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const opts = await this.options(method, path, payload !== undefined ? { 'Content-Type': contentType } : {});
    const res = await this.send(opts, payload);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return { status: res.statusCode ?? 0, body: parseOrUndefined(text) as T, text };
  }

  /** Like request, but throws KubeApiError for a non-2xx answer. */
  async must<T = unknown>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    const r = await this.request<T>(method, path, body, contentType);
    if (r.status < 200 || r.status > 299) throw apiError(method, path, r.status, r.body, r.text);
    return r.body;
  }

  /**
   * A LIST whose items are handed to `onItem` one by one (as the response arrives, once it is past
   * `streamAfterBytes`); resolves to the rest of the response (metadata with resourceVersion and
   * continue). Throws KubeApiError for a non-2xx answer.
   */
  async list<T>(path: string, onItem: (item: unknown) => void, streamAfterBytes = STREAM_LIST_AFTER_BYTES): Promise<T> {
    const res = await this.send(await this.options('GET', path, {}));
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      throw apiError('GET', path, status, parseOrUndefined(text), text);
    }
    // A response is parsed while it streams in only once it is large (a first list of ~100k objects, where
    // that overlaps seconds of the API server's encoding); a smaller one is held and parsed at its end:
    // parsing while it arrives took CPU from the API server's encoding of it and the cold start at 10k
    // routes (8 MB) was ~0.4 s slower that way.
    const reader = new ListResponseReader(onItem);
    let held: Buffer[] | undefined = [];
    let heldBytes = 0;
    for await (const c of res) {
      if (!held) {
        reader.push(c as Buffer);
        continue;
      }
      held.push(c as Buffer);
      heldBytes += (c as Buffer).length;
      if (heldBytes < streamAfterBytes) continue;
      for (const h of held) reader.push(h);
      held = undefined;
    }
    if (held) reader.push(Buffer.concat(held));
    return reader.end<T>();
  }

  /** Opens a streaming GET (watch); the caller reads the response. */
  async stream(path: string, signal: AbortSignal): Promise<IncomingMessage> {
    const opts = await this.options('GET', path, {});
    opts.signal = signal;
    const res = await this.send(opts);
    return res;
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function apiError(method: string, path: string, status: number, body: unknown, text: string): KubeApiError {
  const st = body as { reason?: string; message?: string } | undefined;
  return new KubeApiError(
    status,
    st?.reason ?? String(status),
    `${method} ${path}: ${status} ${st?.message ?? text.slice(0, 200)}`,
  );
}
