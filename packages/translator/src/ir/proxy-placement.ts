// Where a Gateway's proxy objects live and what they are called. Either every proxy in one namespace
// (the controller's: its writes then need a Role there only) or each beside its Gateway.
//
// The name must never be shared by two Gateways: in one namespace for all proxies, a tenant who could
// pick a Gateway name that maps to another tenant's objects would have the infra applier hand that
// Gateway's Deployment (and its xDS identity) to the wrong proxies. So the name ends in 65 bits of
// sha256 over the Gateway's namespace and name, in base32: finding a second Gateway that maps there
// takes ~2^64 hashes. The readable part before it is the Gateway's name (with its namespace when all
// proxies share one), cut to fit 63 characters (the limit of a Service name and of a label value).
import { createHash } from 'node:crypto';

export interface ProxyPlacement {
  namespace: string;
  name: string;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const HASH_CHARS = 13;

function base32Hash(text: string): string {
  const digest = createHash('sha256').update(text).digest();
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < HASH_CHARS) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= 0xff;
    if (out.length === HASH_CHARS) break;
  }
  return out;
}

/** `readable`, cut to fit, then '-' and the hash of `identity`: distinct identities never share a name. */
export function hashedName(readable: string, identity: string, maxLength = 63): string {
  const prefix = readable.slice(0, maxLength - HASH_CHARS - 1).replace(/[-.]+$/, '');
  return `${prefix}-${base32Hash(identity)}`;
}

/** The name of every object that runs a Gateway's proxy. */
export function generatedName(gatewayNamespace: string, gateway: string, proxyNamespace?: string): string {
  const readable = proxyNamespace === undefined ? gateway : `${gatewayNamespace}-${gateway}`;
  return hashedName(readable, `${gatewayNamespace}/${gateway}`);
}

/** Namespace and name of a Gateway's proxy objects; `proxyNamespace` undefined: the Gateway's own namespace. */
export function proxyPlacement(gatewayNamespace: string, gateway: string, proxyNamespace?: string): ProxyPlacement {
  return {
    namespace: proxyNamespace ?? gatewayNamespace,
    name: generatedName(gatewayNamespace, gateway, proxyNamespace),
  };
}
