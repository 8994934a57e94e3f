// Which Gateway's configuration a stream may read. With client certificates required, the
// certificate must carry exactly one URI SAN naming a Gateway of our trust domain, and node.cluster must be that
// Gateway: a proxy of Gateway A cannot ask for Gateway B's routes or TLS keys.
import type { PeerCertificate } from 'node:tls';
import { gatewayOfIdentity, uriSans } from './spiffe.js';

export type StreamVerdict =
  { ok: true } | { ok: false; reason: 'no-certificate' | 'no-identity' | 'wrong-gateway'; message: string };

export function authorizeStream(
  peer: PeerCertificate | undefined,
  nodeCluster: string,
  trustDomain: string,
): StreamVerdict {
  if (!peer || !peer.raw) return { ok: false, reason: 'no-certificate', message: 'a client certificate is required' };
  // Exactly one URI SAN, and that one a Gateway identity: a certificate with other URIs beside
  // it is an identity of something else too (SPIFFE allows one ID per certificate).
  const uris = uriSans(peer.subjectaltname);
  const gateways = uris.map((u) => gatewayOfIdentity(u, trustDomain)).filter((g): g is string => !!g);
  if (uris.length !== 1 || gateways.length !== 1) {
    return {
      ok: false,
      reason: 'no-identity',
      message:
        `the client certificate must carry exactly one URI SAN, a Gateway as ` +
        `spiffe://${trustDomain}/ns/<namespace>/gateway/<name>; it carries ${uris.length} URI SAN(s), ` +
        `${gateways.length} of them a Gateway`,
    };
  }
  if (gateways[0] !== nodeCluster) {
    return {
      ok: false,
      reason: 'wrong-gateway',
      message: `the client certificate is Gateway ${gateways[0]}'s; node.cluster ${nodeCluster} is not served to it`,
    };
  }
  return { ok: true };
}
