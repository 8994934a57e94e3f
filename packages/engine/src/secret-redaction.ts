// What an event log keeps of a Secret: a value made of certificates and public keys alone as it is
// (the translator checks them, and they are public), and of every other value only what the translator
// and the output hash need (api/secret-data.ts): its sha256, the certificates and public keys in it (a
// certificate followed by its private key, or by any text, keeps its certificate and loses the rest),
// and for `tls.key` whether it is a private key of `tls.crt`. Text around PEM blocks, comments
// included, is not kept: it could hold anything. A log is handed around during an incident; private
// keys, tokens and registry credentials stay out of it, and a replay still reproduces every output.
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { publicPem, publicPemOf, redactedValue, secretText, type KubeObject, type Secret } from '@turnpike/api';

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

function redact(secret: Secret, key: string, text: string): string {
  const pub = publicPem(text);
  if (pub.whole) return text;
  const sha256 = createHash('sha256').update(text).digest('hex');
  if (key !== 'tls.key')
    return redactedValue({ sha256, ...(pub.publicBlocks ? { publicBlocks: pub.publicBlocks } : {}) });
  return redactedValue({ sha256, privateKey: keyVerdict(text, publicPemOf(secretText(secret, 'tls.crt'))?.pem) });
}

/** The Secret as an event log keeps it; any other object as it is. */
export function redactForLog(object: KubeObject): KubeObject {
  if (object.kind !== 'Secret' || object.apiVersion !== 'v1') return object;
  const secret = object as Secret;
  const out: Secret = { ...secret };
  if (secret.data)
    out.data = Object.fromEntries(
      Object.entries(secret.data).map(([k, v]) => [
        k,
        Buffer.from(redact(secret, k, Buffer.from(v, 'base64').toString('utf8'))).toString('base64'),
      ]),
    );
  if (secret.stringData)
    out.stringData = Object.fromEntries(Object.entries(secret.stringData).map(([k, v]) => [k, redact(secret, k, v)]));
  // The API server's record of the last applied configuration holds the values too.
  const annotations = secret.metadata.annotations;
  if (annotations?.['kubectl.kubernetes.io/last-applied-configuration']) {
    const { ['kubectl.kubernetes.io/last-applied-configuration']: _dropped, ...rest } = annotations;
    out.metadata = { ...secret.metadata, annotations: rest };
  }
  return out;
}
