// The control plane's certificate authority, kept in a Secret of the controller's namespace and
// shared by the replicas. The leader creates it, and rotates it two thirds into its life, in two
// phases so that no proxy that reconnects meets a certificate it cannot verify:
//
//   1. publish: a new CA is created and added to the trust bundle (ca.crt) while the current CA
//      keeps signing (next.crt/next.key hold the new one). The bundle reaches every proxy's Secret,
//      and through kubelet's sync of the mounted volume, its pods.
//   2. switch, a grace period later (longer than that propagation; --xds-ca-rotation-grace): the
//      new CA signs the serving and proxy certificates; the previous CA stays trusted until the
//      next rotation, so certificates it issued keep working until they are renewed.
//
// Every replica reloads the Secret periodically, trusts its bundle, and serves xDS (and plugin
// content) with a certificate of its own for the controller's Service names, signed by the CA of
// the current phase. The leader also issues each Gateway's proxies a client certificate naming
// that Gateway (SPIFFE URI), adopting the one in the cluster when it is still good, and renewing
// it two thirds into its life.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { encodeSecretData, secretText, type Secret } from '@turnpike/api';
import {
  createAuthority,
  gatewayIdentity,
  issueCertificate,
  MemoryCertificateProvider,
  renewalTime,
  signedByBundle,
  uriSans,
  type KeyedCertificate,
} from '@turnpike/xds';
import { KubeApiError, type KubeClient } from './client.js';

export const XDS_CA_SECRET = 'turnpike-xds-ca';
/** On the CA Secret during a rotation's publish phase: when the new CA (next.crt) starts signing. */
export const CA_SWITCH_ANNOTATION = 'turnpike.dev/ca-switch-after';
/** Default grace between publishing a new CA and signing with it: kubelet syncs Secret volumes in about a minute. */
export const DEFAULT_CA_ROTATION_GRACE_MS = 5 * 60_000;

export interface ClientCredentials {
  'tls.crt': string;
  'tls.key': string;
  'ca.crt': string;
}

export interface XdsAuthorityOptions {
  client: KubeClient;
  namespace: string;
  trustDomain: string;
  /** DNS names of the serving certificate (the controller's Service). */
  serverNames: string[];
  caValidityMs: number;
  certValidityMs: number;
  /** Time between publishing a new CA in the trust bundles and signing with it (default 5 minutes). */
  caRotationGraceMs?: number;
  isLeader: () => boolean;
  checkIntervalMs?: number;
  log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /** Called when client credentials were issued or the CA changed (the proxies' Secrets need writing). */
  onCredentialsChanged?: () => void;
  now?: () => Date;
}

interface CAState extends KeyedCertificate {
  bundle: string;
  resourceVersion?: string;
  /** During a rotation's publish phase: the CA that signs after `switchAfter` (already in `bundle`). */
  next?: KeyedCertificate & { switchAfter: number };
}

export class XdsAuthority {
  /** What the gRPC and HTTPS servers present and trust; updated in place on rotation. */
  readonly provider = new MemoryCertificateProvider();
  private ca?: CAState;
  private serving?: { certPem: string; renewAt: number; issuer: string };
  private readonly clients = new Map<string, { creds: ClientCredentials; renewAt: number; issuer: string }>();
  private readonly pending = new Set<string>();
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;

  constructor(private readonly o: XdsAuthorityOptions) {}

  private now(): Date {
    return this.o.now?.() ?? new Date();
  }

  /**
   * Loads (or, as leader, creates) the CA and the serving certificate; then keeps them fresh. Returns
   * once both are in the provider: a check that set the CA (one the elector started, say) may still be
   * issuing the certificate, and is waited for. Returning on the CA alone once let the plugin content
   * server start without a certificate.
   */
  async start(): Promise<void> {
    for (let i = 0; !this.provider.ready; i++) {
      await this.check();
      if (!this.provider.ready) await new Promise((r) => setTimeout(r, Math.min(5000, 200 * 2 ** i)));
    }
    // Often enough that nothing lapses between two looks, even with short test lifetimes.
    const every =
      this.o.checkIntervalMs ?? Math.max(1000, Math.min(10_000, this.o.certValidityMs / 6, this.o.caValidityMs / 6));
    this.timer = setInterval(() => void this.check(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The CAs trusted now (PEM bundle). */
  get trustBundle(): string {
    return this.ca?.bundle ?? '';
  }

  /** One pass: read the CA Secret, create or rotate it as leader, refresh the serving certificate. */
  check(): Promise<void> {
    this.checking ??= this.checkOnce()
      .catch((e) => this.o.log?.('warn', `xDS CA check failed, will retry: ${(e as Error).message}`))
      .finally(() => {
        this.checking = undefined;
      });
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    const path = `/api/v1/namespaces/${this.o.namespace}/secrets`;
    let secret: Secret | undefined;
    try {
      secret = await this.o.client.must<Secret>('GET', `${path}/${XDS_CA_SECRET}`);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 404)) throw e;
    }
    let state = secret && this.parse(secret);
    if (!state && this.o.isLeader()) state = await this.create(path);
    if (state && this.o.isLeader()) {
      const now = this.now().getTime();
      if (state.next && now >= state.next.switchAfter) state = (await this.switchToNext(path, state)) ?? state;
      else if (!state.next && now >= renewalTime(state.certPem).getTime())
        state = (await this.publishNext(path, state)) ?? state;
    }
    if (!state) return;
    const changed = state.certPem !== this.ca?.certPem || state.bundle !== this.ca?.bundle;
    this.ca = state;
    this.provider.setCA(state.bundle);
    if (changed || !this.serving || this.now().getTime() >= this.serving.renewAt) await this.issueServing();
    // Changed CA, or a client certificate due for renewal: the proxies' Secrets need writing.
    const now = this.now().getTime();
    if (changed || [...this.clients.values()].some((c) => now >= c.renewAt)) this.o.onCredentialsChanged?.();
  }

  private parse(s: Secret): CAState | undefined {
    const certPem = secretText(s, 'tls.crt'),
      keyPem = secretText(s, 'tls.key'),
      bundle = secretText(s, 'ca.crt');
    if (!certPem || !keyPem || !bundle) {
      this.o.log?.('warn', `Secret ${this.o.namespace}/${XDS_CA_SECRET} lacks tls.crt, tls.key or ca.crt; ignoring it`);
      return undefined;
    }
    const nextCert = secretText(s, 'next.crt'),
      nextKey = secretText(s, 'next.key'),
      switchAfter = Date.parse(s.metadata.annotations?.[CA_SWITCH_ANNOTATION] ?? '');
    return {
      certPem,
      keyPem,
      bundle,
      ...(s.metadata.resourceVersion ? { resourceVersion: s.metadata.resourceVersion } : {}),
      ...(nextCert && nextKey && !Number.isNaN(switchAfter)
        ? { next: { certPem: nextCert, keyPem: nextKey, switchAfter } }
        : {}),
    };
  }

  private secretOf(state: Omit<CAState, 'resourceVersion'>, resourceVersion?: string): Secret {
    const next = state.next;
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: {
        name: XDS_CA_SECRET,
        namespace: this.o.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'turnpike' },
        ...(next ? { annotations: { [CA_SWITCH_ANNOTATION]: new Date(next.switchAfter).toISOString() } } : {}),
        ...(resourceVersion ? { resourceVersion } : {}),
      },
      data: encodeSecretData({
        'tls.crt': state.certPem,
        'tls.key': state.keyPem,
        'ca.crt': state.bundle,
        ...(next ? { 'next.crt': next.certPem, 'next.key': next.keyPem } : {}),
      }),
    } as Secret;
  }

  private async create(path: string): Promise<CAState | undefined> {
    const ca = await createAuthority('turnpike xDS CA', this.o.caValidityMs, this.now());
    const state = { certPem: ca.certPem, keyPem: ca.keyPem, bundle: ca.certPem };
    try {
      await this.o.client.must('POST', path, this.secretOf(state));
      this.o.log?.('info', 'created the xDS certificate authority', {
        secret: `${this.o.namespace}/${XDS_CA_SECRET}`,
        notAfter: ca.notAfter.toISOString(),
      });
      return state;
    } catch (e) {
      // Another replica created it first: theirs is read on the next pass.
      if (e instanceof KubeApiError && e.status === 409) return undefined;
      throw e;
    }
  }

  /** Rotation, phase 1: a new CA joins the trust bundle; the current one keeps signing until the switch. */
  private async publishNext(path: string, current: CAState): Promise<CAState | undefined> {
    const ca = await createAuthority('turnpike xDS CA', this.o.caValidityMs, this.now());
    const now = this.now().getTime();
    const grace = this.o.caRotationGraceMs ?? DEFAULT_CA_ROTATION_GRACE_MS;
    // The switch must come before the current CA expires, whatever the grace.
    const expires = new Date(new X509Certificate(current.certPem).validTo).getTime();
    const switchAfter = Math.min(now + grace, now + Math.max(0, (expires - now) / 2));
    // Trust the new CA and the current one; older ones are dropped.
    const state: CAState = {
      certPem: current.certPem,
      keyPem: current.keyPem,
      bundle: current.certPem + ca.certPem,
      next: { certPem: ca.certPem, keyPem: ca.keyPem, switchAfter },
    };
    if (!(await this.write(path, state, current))) return undefined;
    this.o.log?.('info', 'published a new xDS CA in the trust bundles; the current CA signs until the switch', {
      switchAfter: new Date(switchAfter).toISOString(),
    });
    return state;
  }

  /** Rotation, phase 2: the published CA signs from now on; the previous one stays trusted until the next rotation. */
  private async switchToNext(path: string, current: CAState): Promise<CAState | undefined> {
    const next = current.next!;
    const state: CAState = { certPem: next.certPem, keyPem: next.keyPem, bundle: current.bundle };
    if (!(await this.write(path, state, current))) return undefined;
    this.o.log?.('info', 'switched to the new xDS CA; the previous CA stays trusted until the next rotation', {
      notAfter: new Date(new X509Certificate(next.certPem).validTo).toISOString(),
    });
    return state;
  }

  /** Writes the CA Secret over `current`; false when another replica wrote it first (read it next time). */
  private async write(path: string, state: CAState, current: CAState): Promise<boolean> {
    try {
      await this.o.client.must('PUT', `${path}/${XDS_CA_SECRET}`, this.secretOf(state, current.resourceVersion));
      return true;
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 409) return false;
      throw e;
    }
  }

  private async issueServing(): Promise<void> {
    const ca = this.ca!;
    const cert = await issueCertificate(ca, {
      commonName: this.o.serverNames[0] ?? 'turnpike',
      dnsNames: this.o.serverNames,
      usage: 'server',
      validityMs: this.o.certValidityMs,
      now: this.now(),
    });
    this.provider.setIdentity(cert.certPem, cert.keyPem);
    this.serving = { certPem: cert.certPem, renewAt: renewalTime(cert.certPem).getTime(), issuer: ca.certPem };
  }

  /**
   * A Gateway's client credentials, when they are ready and current. Otherwise undefined, and
   * they are adopted from the cluster or issued in the background (onCredentialsChanged follows).
   */
  clientCredentials(
    gateway: { namespace: string; name: string },
    secret: { namespace: string; name: string },
  ): ClientCredentials | undefined {
    const ca = this.ca;
    if (!ca) return undefined;
    const key = `${gateway.namespace}/${gateway.name}`;
    const known = this.clients.get(key);
    if (known && known.issuer === ca.certPem && this.now().getTime() < known.renewAt) {
      return known.creds['ca.crt'] === ca.bundle ? known.creds : { ...known.creds, 'ca.crt': ca.bundle };
    }
    if (!this.pending.has(key)) {
      this.pending.add(key);
      void this.obtain(gateway, secret, ca, !known).finally(() => this.pending.delete(key));
    }
    // Until the new one is ready, the previous one (still trusted) keeps being written.
    return known && signedByBundle(known.creds['tls.crt'], ca.bundle, this.now()) ? known.creds : undefined;
  }

  private async obtain(
    gateway: { namespace: string; name: string },
    secret: { namespace: string; name: string },
    ca: CAState,
    tryAdopt: boolean,
  ): Promise<void> {
    const { namespace, name } = gateway;
    const key = `${namespace}/${name}`;
    try {
      if (tryAdopt) {
        const adopted = await this.adopt(gateway, secret, ca);
        if (adopted) {
          this.clients.set(key, adopted);
          this.o.onCredentialsChanged?.();
          return;
        }
      }
      const cert = await issueCertificate(ca, {
        commonName: key,
        uris: [gatewayIdentity(this.o.trustDomain, namespace, name)],
        usage: 'client',
        validityMs: this.o.certValidityMs,
        now: this.now(),
      });
      this.clients.set(key, {
        creds: { 'tls.crt': cert.certPem, 'tls.key': cert.keyPem, 'ca.crt': ca.bundle },
        renewAt: renewalTime(cert.certPem).getTime(),
        issuer: ca.certPem,
      });
      this.o.onCredentialsChanged?.();
    } catch (e) {
      this.o.log?.('warn', `could not issue the xDS client certificate, will retry: ${(e as Error).message}`, {
        gateway: key,
      });
    }
  }

  /**
   * The certificate already in the Gateway's Secret, if the current CA signed it, it is not due,
   * it names this Gateway and nothing else, and the key beside it is its key. Anyone who can write
   * a Secret in the proxies' namespace could otherwise put another Gateway's credentials there
   * and have its proxies read that Gateway's configuration.
   */
  private async adopt(
    gateway: { namespace: string; name: string },
    secret: { namespace: string; name: string },
    ca: CAState,
  ): Promise<{ creds: ClientCredentials; renewAt: number; issuer: string } | undefined> {
    const { namespace, name } = gateway;
    let s: Secret;
    try {
      s = await this.o.client.must<Secret>('GET', `/api/v1/namespaces/${secret.namespace}/secrets/${secret.name}`);
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404) return undefined;
      throw e;
    }
    const crt = secretText(s, 'tls.crt'),
      keyPem = secretText(s, 'tls.key');
    if (!crt || !keyPem || !signedByBundle(crt, ca.certPem, this.now())) return undefined;
    if (!namesOnly(crt, gatewayIdentity(this.o.trustDomain, namespace, name)) || !keyOf(crt, keyPem)) {
      this.o.log?.('warn', "not adopting the xDS client certificate in the Secret: it is not this Gateway's", {
        gateway: `${namespace}/${name}`,
        secret: `${secret.namespace}/${secret.name}`,
      });
      return undefined;
    }
    const renewAt = renewalTime(crt).getTime();
    if (this.now().getTime() >= renewAt) return undefined;
    return { creds: { 'tls.crt': crt, 'tls.key': keyPem, 'ca.crt': ca.bundle }, renewAt, issuer: ca.certPem };
  }
}

/** The certificate's only URI SAN is `identity`. */
function namesOnly(crt: string, identity: string): boolean {
  try {
    const uris = uriSans(new X509Certificate(crt).subjectAltName);
    return uris.length === 1 && uris[0] === identity;
  } catch {
    return false;
  }
}

/** `keyPem` is the private key of `crt`. */
function keyOf(crt: string, keyPem: string): boolean {
  try {
    return new X509Certificate(crt).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}
