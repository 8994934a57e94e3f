// The identity a Gateway's proxies present to the controller: a SPIFFE ID naming the Gateway,
// spiffe://<trust-domain>/ns/<namespace>/gateway/<name>, carried as a URI SAN in the client
// certificate. The ADS server serves a stream only the Gateway its certificate names.

export const DEFAULT_TRUST_DOMAIN = 'turnpike.local';

export function gatewayIdentity(trustDomain: string, namespace: string, name: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/gateway/${name}`;
}

/** The Gateway (`namespace/name`) a SPIFFE ID names in this trust domain, if it names one. */
export function gatewayOfIdentity(uri: string, trustDomain: string): string | undefined {
  const prefix = `spiffe://${trustDomain}/ns/`;
  if (!uri.startsWith(prefix)) return undefined;
  const m = /^([a-z0-9-]{1,63})\/gateway\/([a-z0-9.-]{1,253})$/.exec(uri.slice(prefix.length));
  return m ? `${m[1]}/${m[2]}` : undefined;
}

/** The URI SANs of a certificate as node:tls reports them ("URI:a, DNS:b"). */
export function uriSans(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  return subjectAltName
    .split(/,\s*/)
    .filter((s) => s.startsWith('URI:'))
    .map((s) => s.slice(4));
}

/** The Gateway a certificate names: its only URI SAN, a Gateway identity of this trust domain. */
export function gatewayOfCertificate(subjectAltName: string | undefined, trustDomain: string): string | undefined {
  const uris = uriSans(subjectAltName);
  return uris.length === 1 ? gatewayOfIdentity(uris[0]!, trustDomain) : undefined;
}
