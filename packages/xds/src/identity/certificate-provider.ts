// Certificates the gRPC server takes from memory and that can change while it runs: a new CA
// bundle or serving certificate applies to new connections; established streams keep going.
import type { experimental } from '@grpc/grpc-js';

type Provider = experimental.CertificateProvider;
type CaListener = Parameters<Provider['addCaCertificateListener']>[0];
type IdentityListener = Parameters<Provider['addIdentityCertificateListener']>[0];

/**
 * Adds a listener; the current value reaches it on the next tick: grpc-js registers its watcher
 * only after adding the listener, and would miss an update delivered synchronously.
 */
function addLater<T>(listeners: Set<(value: T) => void>, listener: (value: T) => void, current: () => T | null): void {
  listeners.add(listener);
  queueMicrotask(() => {
    const value = current();
    if (value && listeners.has(listener)) listener(value);
  });
}

export class MemoryCertificateProvider implements Provider {
  private ca: { caCertificate: Buffer } | null = null;
  private identity: { certificate: Buffer; privateKey: Buffer } | null = null;
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();
  private readonly changeListeners = new Set<() => void>();

  /** Called after the CA bundle or the identity changed (for servers other than gRPC). */
  onChange(l: () => void): void {
    this.changeListeners.add(l);
  }

  get identityPem(): string | undefined {
    return this.identity?.certificate.toString();
  }

  get keyPem(): string | undefined {
    return this.identity?.privateKey.toString();
  }

  /** The CA bundle set last (PEM). */
  get caPem(): string | undefined {
    return this.ca?.caCertificate.toString();
  }

  /** The CAs whose client certificates are accepted (PEM bundle). */
  setCA(bundlePem: string): void {
    if (this.ca?.caCertificate.toString() === bundlePem) return;
    this.ca = { caCertificate: Buffer.from(bundlePem) };
    for (const l of this.caListeners) l(this.ca);
    for (const l of this.changeListeners) l();
  }

  /** The server's own certificate and key (PEM). */
  setIdentity(certPem: string, keyPem: string): void {
    if (this.identity?.certificate.toString() === certPem) return;
    this.identity = { certificate: Buffer.from(certPem), privateKey: Buffer.from(keyPem) };
    for (const l of this.identityListeners) l(this.identity);
    for (const l of this.changeListeners) l();
  }

  get ready(): boolean {
    return !!this.ca && !!this.identity;
  }

  addCaCertificateListener(l: CaListener): void {
    addLater(this.caListeners, l, () => this.ca);
  }

  removeCaCertificateListener(l: CaListener): void {
    this.caListeners.delete(l);
  }

  addIdentityCertificateListener(l: IdentityListener): void {
    addLater(this.identityListeners, l, () => this.identity);
  }

  removeIdentityCertificateListener(l: IdentityListener): void {
    this.identityListeners.delete(l);
  }
}
