// What an event log keeps of a Secret: a value made of certificates and public keys alone as it is
// (the translator checks them, and they are public), and of every other value only what the translator
// and the output hash need (api/secret-data.ts): its digest (HMAC-SHA256 under the stream's DigestKey, else
// sha256), the certificates and public keys in it (a
// certificate followed by its private key, or by any text, keeps its certificate and loses the rest),
// and for `tls.key` whether it is a private key of `tls.crt`. Text around PEM blocks, comments
// included, is not kept: it could hold anything. A log is handed around during an incident; private
// keys, tokens and registry credentials stay out of it, and a replay still reproduces every output.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import {
  DIGEST_KEY_KIND,
  DIGEST_KEY_NAME,
  digestKeyOf,
  publicPem,
  publicPemOf,
  redactedValue,
  secretText,
  valueDigest,
  type KubeObject,
  type Secret,
} from '@turnpike/api';
import type { WatchEvent } from './events.js';

/** `crt`: the certificate as the translator reads it (publicPemOf), so that both say the same of the key. */
function keyVerdict(key: string, crt: string | undefined): 'matches' | 'other' | 'invalid' {
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    return 'invalid';
  }
  try {
    return crt && new X509Certificate(crt).checkPrivateKey(privateKey) ? 'matches' : 'other';
  } catch {
    return 'other';
  }
}

function redact(secret: Secret, name: string, text: string, key: Buffer | undefined): string {
  const pub = publicPem(text);
  if (pub.whole) return text;
  const digest = { digest: valueDigest(text, key), ...(key ? { keyed: true } : {}) };
  if (name !== 'tls.key')
    return redactedValue({ ...digest, ...(pub.publicBlocks ? { publicBlocks: pub.publicBlocks } : {}) });
  return redactedValue({ ...digest, privateKey: keyVerdict(text, publicPemOf(secretText(secret, 'tls.crt'))?.pem) });
}

/** The Secret as an event log without a DigestKey keeps it (sha256 digests); any other object as it is. */
export function redactForLog(object: KubeObject): KubeObject {
  return redactForLogKeyed(object, undefined);
}

/**
 * The Secret as an event log keeps it, its values digested under `key` (the DigestKey the translator
 * digests them with: the same digests, so a replay reproduces the outputs); any other object as it is.
 */
export function redactForLogKeyed(object: KubeObject, key: Buffer | undefined): KubeObject {
  if (object.kind !== 'Secret' || object.apiVersion !== 'v1') return object;
  const secret = object as Secret;
  const out: Secret = { ...secret };
  if (secret.data)
    out.data = Object.fromEntries(
      Object.entries(secret.data).map(([k, v]) => [
        k,
        Buffer.from(redact(secret, k, Buffer.from(v, 'base64').toString('utf8'), key)).toString('base64'),
      ]),
    );
  if (secret.stringData)
    out.stringData = Object.fromEntries(
      Object.entries(secret.stringData).map(([k, v]) => [k, redact(secret, k, v, key)]),
    );
  // The API server's record of the last applied configuration holds the values too.
  const annotations = secret.metadata.annotations;
  if (annotations?.['kubectl.kubernetes.io/last-applied-configuration']) {
    const { ['kubectl.kubernetes.io/last-applied-configuration']: _dropped, ...rest } = annotations;
    out.metadata = { ...secret.metadata, annotations: rest };
  }
  return out;
}

/**
 * Redacts the events of one stream as a log writes them, with the DigestKey the stream carries (the
 * controller's first event; the translator reads the same one from its store). A stream without one
 * (a replay of a log written before keys) is digested with plain sha256, as its translator does.
 */
export class LogRedaction {
  private key: Buffer | undefined;

  event(e: WatchEvent): WatchEvent {
    if (e.type === 'upsert' && e.kind === DIGEST_KEY_KIND && e.name === DIGEST_KEY_NAME)
      this.key = digestKeyOf(e.object);
    return e.object?.kind === 'Secret' ? { ...e, object: redactForLogKeyed(e.object, this.key) } : e;
  }
}
