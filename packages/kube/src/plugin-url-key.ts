// The HMAC key behind plugin content URLs, shared by every replica through a Secret in the
// controller's namespace: created by whichever replica starts first, read by the others. A key
// in the manifests would be public; a key per process would give replicas different URLs.
import { randomBytes } from 'node:crypto';
import { encodeSecretData, secretBytes, type Secret } from '@turnpike/api';
import { KubeApiError, type KubeClient } from './client.js';

export const PLUGIN_URL_KEY_SECRET = 'turnpike-plugin-url-key';

export async function ensurePluginUrlKey(
  client: KubeClient,
  namespace: string,
  name = PLUGIN_URL_KEY_SECRET,
): Promise<Buffer> {
  const path = `/api/v1/namespaces/${namespace}/secrets`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const s = await client.must<Secret>('GET', `${path}/${name}`);
      const key = secretBytes(s, 'key') ?? Buffer.alloc(0);
      if (key.length >= 16) return key;
      throw new Error(`Secret ${namespace}/${name} has no "key" of at least 16 bytes`);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 404)) throw e;
    }
    try {
      const key = randomBytes(32);
      await client.must('POST', path, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'turnpike' } },
        type: 'Opaque',
        data: encodeSecretData({ key }),
      });
      return key;
    } catch (e) {
      // Another replica created it first: read theirs.
      if (!(e instanceof KubeApiError && e.status === 409)) throw e;
    }
  }
  throw new Error(`could not read or create Secret ${namespace}/${name}`);
}
