// How the ADS server authenticates: from files (`run --dir` with --xds-tls-cert/--xds-tls-key and,
// for client certificates, --xds-client-ca), or from the control-plane CA (in a cluster). Files
// are watched and reloaded; new certificates apply to new connections.
import { existsSync } from 'node:fs';
import { experimental } from '@grpc/grpc-js';
import type { AdsTlsOptions, MemoryCertificateProvider } from '@turnpike/xds';
import { CliError } from './errors.js';

export interface XdsTlsFlags { xdsTlsCert?: string; xdsTlsKey?: string; xdsClientCa?: string; xdsTrustDomain: string }

/** TLS from files, or undefined for plaintext. */
export function xdsTlsFromFiles(f: XdsTlsFlags): AdsTlsOptions | undefined {
  if (!f.xdsTlsCert && !f.xdsTlsKey && !f.xdsClientCa) return undefined;
  if (!f.xdsTlsCert || !f.xdsTlsKey) throw new CliError('--xds-tls-cert and --xds-tls-key go together');
  for (const [flag, file] of [['--xds-tls-cert', f.xdsTlsCert], ['--xds-tls-key', f.xdsTlsKey], ['--xds-client-ca', f.xdsClientCa]] as const) {
    if (file && !existsSync(file)) throw new CliError(`${flag} ${file}: no such file`);
  }
  const identity = new experimental.FileWatcherCertificateProvider({ certificateFile: f.xdsTlsCert, privateKeyFile: f.xdsTlsKey, refreshIntervalMs: 5000 });
  if (!f.xdsClientCa) {
    // Server TLS only: the stream is encrypted, but any client may ask for any Gateway.
    return { credentials: experimental.createCertificateProviderServerCredentials(identity, null, false) };
  }
  const ca = new experimental.FileWatcherCertificateProvider({ caCertificateFile: f.xdsClientCa, refreshIntervalMs: 5000 });
  return { credentials: experimental.createCertificateProviderServerCredentials(identity, ca, true), trustDomain: f.xdsTrustDomain };
}

/** mTLS from the control-plane CA: client certificates required, each stream limited to its Gateway. */
export function xdsTlsFromAuthority(provider: MemoryCertificateProvider, trustDomain: string): AdsTlsOptions {
  return { credentials: experimental.createCertificateProviderServerCredentials(provider, provider, true), trustDomain };
}
