// How the ADS server authenticates: from files (`run --dir` with --xds-tls-cert/--xds-tls-key and,
// for client certificates, --xds-client-ca), or from the control-plane CA (in a cluster). Files
// are read again every few seconds; new certificates apply to new connections.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { experimental } from '@grpc/grpc-js';
import type { ContentServerTls, ContentTlsSource } from '@turnpike/plugins';
import { MemoryCertificateProvider, type AdsTlsOptions } from '@turnpike/xds';
import { CliError } from './errors.js';

export interface XdsTlsFlags {
  xdsTlsCert?: string;
  xdsTlsKey?: string;
  xdsClientCa?: string;
  xdsTrustDomain: string;
}

/** TLS from files, or undefined for plaintext. Read (and checked) now, then again every few seconds. */
export function xdsTlsFromFiles(f: XdsTlsFlags): AdsTlsOptions | undefined {
  if (!f.xdsTlsCert && !f.xdsTlsKey && !f.xdsClientCa) return undefined;
  if (!f.xdsTlsCert || !f.xdsTlsKey) throw new CliError('--xds-tls-cert and --xds-tls-key go together');
  const provider = new MemoryCertificateProvider();
  const load = (strict: boolean) => {
    try {
      const cert = readPem('--xds-tls-cert', f.xdsTlsCert!, (t) => new X509Certificate(t));
      const key = readPem('--xds-tls-key', f.xdsTlsKey!, (t) => createPrivateKey(t));
      const ca = f.xdsClientCa ? readPem('--xds-client-ca', f.xdsClientCa, (t) => new X509Certificate(t)) : undefined;
      provider.setIdentity(cert, key);
      if (ca) provider.setCA(ca);
    } catch (e) {
      // At start a bad file is a mistake to report; later, a half-written file is retried.
      if (strict) throw e;
    }
  };
  load(true);
  setInterval(() => load(false), 5000).unref();
  if (!f.xdsClientCa) {
    // Server TLS only: the stream is encrypted, but any client may ask for any Gateway.
    return { credentials: experimental.createCertificateProviderServerCredentials(provider, null, false) };
  }
  return {
    credentials: experimental.createCertificateProviderServerCredentials(provider, provider, true),
    trustDomain: f.xdsTrustDomain,
  };
}

function readPem(flag: string, file: string, check: (text: string) => unknown): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(
      `${flag} ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
  try {
    check(text);
  } catch (e) {
    throw new CliError(`${flag} ${file}: not a usable PEM file (${(e as Error).message})`);
  }
  return text;
}

/** mTLS from the control-plane CA: client certificates required, each stream limited to its Gateway. */
export function xdsTlsFromAuthority(provider: MemoryCertificateProvider, trustDomain: string): AdsTlsOptions {
  return {
    credentials: experimental.createCertificateProviderServerCredentials(provider, provider, true),
    trustDomain,
  };
}

/**
 * The plugin content server's TLS from the control-plane CA, as the xDS server has it: this replica's
 * serving certificate, and client certificates signed by the trust bundle. The server follows the
 * provider from the moment it is made: a certificate issued or a CA rotated while it starts is not
 * lost (it once was, and the server answered every handshake with alert 40 until the next renewal).
 */
export function contentTlsFromAuthority(provider: MemoryCertificateProvider): ContentTlsSource {
  return {
    current: () => {
      const [cert, key, ca] = [provider.identityPem, provider.keyPem, provider.caPem];
      return cert && key ? { cert, key, ...(ca ? { ca } : {}) } : undefined;
    },
    onChange: (listener) => provider.onChange(listener),
  };
}

/**
 * The plugin content server's TLS from the same files as xDS (`run --dir`): the serving certificate,
 * and the client CA when xDS requires client certificates. Read again every few seconds. Undefined
 * without xDS TLS.
 */
export function contentTlsFromFiles(f: XdsTlsFlags): ContentTlsSource | undefined {
  if (!f.xdsTlsCert || !f.xdsTlsKey) return undefined;
  const read = (): ContentServerTls => ({
    cert: readPem('--xds-tls-cert', f.xdsTlsCert!, (t) => new X509Certificate(t)),
    key: readPem('--xds-tls-key', f.xdsTlsKey!, (t) => createPrivateKey(t)),
    ...(f.xdsClientCa ? { ca: readPem('--xds-client-ca', f.xdsClientCa, (t) => new X509Certificate(t)) } : {}),
  });
  let current = read();
  const listeners = new Set<() => void>();
  setInterval(() => {
    try {
      const next = read();
      if (next.cert === current.cert && next.key === current.key && next.ca === current.ca) return;
      current = next;
      for (const l of listeners) l();
    } catch {
      // A half-written file: the next read will do.
    }
  }, 5000).unref();
  return { current: () => current, onChange: (l) => listeners.add(l) };
}
