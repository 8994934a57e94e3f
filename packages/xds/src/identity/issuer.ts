// A small certificate authority for the control plane: ECDSA P-256 keys, a self-signed CA,
// serving certificates for the xDS and plugin Services, and client certificates naming a
// Gateway. Generation uses @peculiar/x509 over WebCrypto (node:crypto can verify certificates
// but not create them); reading uses node:crypto's X509Certificate.
import { webcrypto, X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import type { JsonGeneralName } from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
type X509 = typeof import('@peculiar/x509');

let loading: Promise<X509> | undefined;
/**
 * @peculiar/x509 and the reflect-metadata it needs, loaded when the first certificate is made: evaluating
 * them took a tenth of a second of every start, and a controller without mTLS makes none.
 */
function peculiarX509(): Promise<X509> {
  return (loading ??= (async () => {
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    return x509;
  })());
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
/** Certificates start a little in the past, so that a peer whose clock lags still accepts them. */
const BACKDATE_MS = 5 * 60_000;

export interface KeyedCertificate {
  certPem: string;
  keyPem: string;
}
export interface Authority extends KeyedCertificate {
  notBefore: Date;
  notAfter: Date;
}

export interface IssueRequest {
  commonName: string;
  dnsNames?: string[];
  uris?: string[];
  /** What the certificate is for. */
  usage: 'server' | 'client';
  validityMs: number;
  now?: Date;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
}

const serial = () => {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f; // positive
  return b.toString('hex');
};

export async function createAuthority(commonName: string, validityMs: number, now = new Date()): Promise<Authority> {
  const x509 = await peculiarX509();
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const notAfter = new Date(now.getTime() + validityMs);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    notBefore,
    notAfter,
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(keys.privateKey), notBefore, notAfter };
}

/** Issues a leaf certificate signed by `ca`; it never outlives the CA. */
export async function issueCertificate(ca: KeyedCertificate, req: IssueRequest): Promise<Authority> {
  const now = req.now ?? new Date();
  const x509 = await peculiarX509();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey(
    'pkcs8',
    createPrivateKey(ca.keyPem).export({ type: 'pkcs8', format: 'der' }),
    ALG,
    false,
    ['sign'],
  );
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const notAfter = new Date(Math.min(now.getTime() + req.validityMs, caCert.notAfter.getTime()));
  const names: JsonGeneralName[] = [
    ...(req.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(req.uris ?? []).map((value) => ({ type: 'url' as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${req.commonName}`,
    issuer: caCert.subject,
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: caKey as CryptoKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement, true),
      new x509.ExtendedKeyUsageExtension([
        req.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
      ]),
      ...(names.length ? [new x509.SubjectAlternativeNameExtension(names, req.usage === 'client')] : []),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(keys.privateKey), notBefore, notAfter };
}

/** The certificates of a PEM bundle. */
export function splitPemBundle(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((c) => c + '\n') ?? [];
}

/** Whether `leafPem` was signed by one of the CAs in `bundlePem`, and is valid at `now`. */
export function signedByBundle(leafPem: string, bundlePem: string, now = new Date()): boolean {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(leafPem);
  } catch {
    return false;
  }
  if (
    new Date(leaf.validTo).getTime() <= now.getTime() ||
    new Date(leaf.validFrom).getTime() > now.getTime() + BACKDATE_MS
  )
    return false;
  return splitPemBundle(bundlePem).some((ca) => {
    try {
      const c = new X509Certificate(ca);
      return leaf.checkIssued(c) && leaf.verify(c.publicKey);
    } catch {
      return false;
    }
  });
}

/** When a certificate should be replaced: two thirds into its lifetime. */
export function renewalTime(pem: string): Date {
  const c = new X509Certificate(pem);
  const from = new Date(c.validFrom).getTime(),
    to = new Date(c.validTo).getTime();
  return new Date(from + ((to - from) * 2) / 3);
}
