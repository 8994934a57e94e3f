// What an event log keeps of a Secret: certificates and public keys as they are (the translator
// checks them, and they are public), and of every other value only what the translator and the
// output hash need (api/secret-data.ts): its sha256, and for `tls.key` whether it is a private key
// of `tls.crt`. A log is handed around during an incident; private keys, tokens and registry
// credentials stay out of it, and a replay still reproduces every output.
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { redactedValue, secretText, type KubeObject, type Secret } from '@turnpike/api';

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----/g;

/**
 * PEM certificates or public keys, and no other PEM block: kept whole, with any text around the
 * blocks (bundles often carry comments), since the translator parses them as they are.
 */
function isPublicPem(text: string): boolean {
  const blocks = [...text.matchAll(PEM_BLOCK)];
  return (
    blocks.length > 0 &&
    blocks.every((b) => b[1] === 'CERTIFICATE' || b[1] === 'PUBLIC KEY' || b[1] === 'TRUSTED CERTIFICATE') &&
    !/PRIVATE KEY/.test(text)
  );
}

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
  if (isPublicPem(text)) return text;
  const sha256 = createHash('sha256').update(text).digest('hex');
  if (key !== 'tls.key') return redactedValue({ sha256 });
  return redactedValue({ sha256, privateKey: keyVerdict(text, secretText(secret, 'tls.crt')) });
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
