// What a debug read (`turnpike proxy-config`) is sent of an SDS Secret: everything but its secret
// material. A debug read needs no key to show what a Gateway is served, and a reader's credentials
// should not be enough to take a listener's or a proxy's identity, so the server redacts, not the
// reader: a private key, a PKCS#12 bundle (it holds the key) and a key's password, a private key
// provider's config, session ticket keys and a generic secret's value are each replaced by
// REDACTED; certificates, OCSP staples and validation contexts are public and kept. A Listener's
// tracer metadata (often a collector's API key) is redacted too (tracing-redaction.ts).
import type protobuf from 'protobufjs';
import { messageType } from './proto-root.js';
import { REDACTED } from './redacted.js';
import type { EncodedResource } from './snapshot-cache.js';
import { mayHoldTracerMetadata, redactListenerBytes } from './tracing-redaction.js';
import { TYPE } from './type-urls.js';

export { REDACTED };

const SECRET = 'envoy.extensions.transport_sockets.tls.v3.Secret';
const DATA_SOURCE = 'envoy.config.core.v3.DataSource';

type Message = protobuf.Message & Record<string, unknown>;

/** The Secret's bytes with its secret material replaced by REDACTED. */
export function redactSecretBytes(bytes: Uint8Array): Buffer {
  const type = messageType(SECRET);
  const secret = type.decode(bytes) as Message;
  const redacted = () => messageType(DATA_SOURCE).fromObject({ inline_string: REDACTED });
  const tc = secret.tls_certificate as Message | null | undefined;
  if (tc) {
    for (const f of ['private_key', 'pkcs12', 'password']) if (tc[f]) tc[f] = redacted();
    // Its typed config may hold a key, or a way to reach one: a placeholder provider would not load.
    if (tc.private_key_provider) {
      tc.private_key_provider = null;
      if (!tc.private_key) tc.private_key = redacted();
    }
  }
  const tickets = secret.session_ticket_keys as Message | null | undefined;
  if (tickets && Array.isArray(tickets.keys)) tickets.keys = tickets.keys.map(() => redacted());
  const generic = secret.generic_secret as Message | null | undefined;
  if (generic?.secret) generic.secret = redacted();
  return Buffer.from(type.encode(secret).finish());
}

const redactedAny = new WeakMap<EncodedResource, EncodedResource['any']>();

/**
 * A resource as a debug read is sent it: a Secret redacted, a Listener without its tracer metadata values
 * (once per resource, kept while the resource is), anything else as it is.
 */
export function forDebugRead(r: EncodedResource): EncodedResource['any'] {
  const redact =
    r.any.type_url === TYPE.secret
      ? redactSecretBytes
      : r.any.type_url === TYPE.listener && mayHoldTracerMetadata(r.any.value)
        ? redactListenerBytes
        : undefined;
  if (!redact) return r.any;
  let any = redactedAny.get(r);
  if (!any) redactedAny.set(r, (any = { type_url: r.any.type_url, value: redact(r.any.value) }));
  return any;
}
