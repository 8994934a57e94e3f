// Cosign signatures of plugin artifacts, checked before content is stored. Cosign keeps the
// signature of the manifest `sha256:<hex>` in the same repository under the tag
// `sha256-<hex>.sig`: an image whose layers are "simple signing" JSON payloads, each with its
// signature (base64, over the payload bytes) in the annotation dev.cosignproject.cosign/signature.
// The payload names the signed manifest digest. Keys are PEM public keys (cosign's default is
// ECDSA P-256 with SHA-256; RSA and Ed25519 keys verify too); node:crypto does the verifying.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { Descriptor, ImageManifest } from './oci-client.js';

export const COSIGN_SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';
export const SIMPLE_SIGNING_MEDIA_TYPE = 'application/vnd.dev.cosign.simplesigning.v1+json';
export const COSIGN_SIGNATURE_TYPE = 'cosign container image signature';

/** The tag cosign stores the signature of `digest` under. */
export function signatureTag(digest: string): string {
  return `${digest.replace(':', '-')}.sig`;
}

/** The signature layers of a cosign signature manifest. */
export function signatureLayers(m: ImageManifest): Descriptor[] {
  return m.layers.filter(
    (l) => l.mediaType === SIMPLE_SIGNING_MEDIA_TYPE && l.annotations?.[COSIGN_SIGNATURE_ANNOTATION],
  );
}

export function parsePublicKey(pem: string): KeyObject {
  const key = createPublicKey(pem);
  if (key.type !== 'public') throw new Error('not a public key');
  return key;
}

/** `registry/repository` as a signature names it; Docker Hub's registry has several names. */
function repositoryName(reference: string): string {
  return reference.replace(/^(index\.docker\.io|registry-1\.docker\.io)\//, 'docker.io/');
}

/**
 * Why `payload` is not a valid signature of `digest` in `repository` (`registry/repository`) by
 * `key`; undefined when it is. The simple-signing payload names the repository it was made for
 * (critical.identity.docker-reference): a signature the same key made for another image, copied
 * next to this one, does not count.
 */
export function signatureProblem(
  payload: Buffer,
  signatureB64: string,
  key: KeyObject,
  digest: string,
  repository: string,
): string | undefined {
  const sig = Buffer.from(signatureB64, 'base64');
  const algorithm = key.asymmetricKeyType === 'ed25519' ? null : 'sha256';
  let ok = false;
  try {
    ok = verify(algorithm, payload, key, sig);
  } catch {
    ok = false;
  }
  if (!ok) return 'the signature does not verify with the public key';
  let doc: {
    critical?: {
      type?: string;
      identity?: { 'docker-reference'?: string };
      image?: { 'docker-manifest-digest'?: string };
    };
  };
  try {
    doc = JSON.parse(payload.toString('utf8')) as typeof doc;
  } catch {
    return 'the signed payload is not JSON';
  }
  if (doc.critical?.type !== COSIGN_SIGNATURE_TYPE)
    return `the signed payload is not a ${COSIGN_SIGNATURE_TYPE} (critical.type: ${String(doc.critical?.type)})`;
  const signed = doc.critical.image?.['docker-manifest-digest'];
  if (signed !== digest) return `the signature is for ${String(signed)}, not ${digest}`;
  const made = doc.critical.identity?.['docker-reference'];
  // The reference may carry a tag (cosign sign of a tagged image writes the repository only).
  const madeFor = made === undefined ? undefined : repositoryName(made.replace(/(?<=\/[^/]*):[^/]*$/, ''));
  if (madeFor !== repositoryName(repository)) return `the signature was made for ${String(made)}, not ${repository}`;
  return undefined;
}
