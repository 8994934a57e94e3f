// The CA bundle a caCertificateRef names in a ConfigMap or Secret: its `ca.crt` key, which must hold
// at least one PEM CA certificate. Gateway frontend validation and BackendTLSPolicy share this rule.
import { secretText, type ConfigMap, type Secret } from '@turnpike/api';
import { checkCABundle } from './certificates.js';
import type { Inputs } from './incremental/inputs.js';

export const CA_BUNDLE_KEY = 'ca.crt';

/** The PEM bundle, or why the object does not hold a usable one (names the object). */
export function caBundleInObject(
  inputs: Inputs,
  kind: 'ConfigMap' | 'Secret',
  namespace: string,
  name: string,
): { pem: string } | { problem: string } {
  const object = inputs.get<ConfigMap | Secret>(kind, namespace, name);
  if (!object) return { problem: `${kind} ${namespace}/${name} not found` };
  const pem =
    kind === 'ConfigMap' ? (object as ConfigMap).data?.[CA_BUNDLE_KEY] : secretText(object as Secret, CA_BUNDLE_KEY);
  const problem = checkCABundle(pem);
  // Name the object the key was looked up in: "no "ca.crt" entry" alone leaves the reader guessing which.
  return problem ? { problem: `${kind} ${namespace}/${name}: ${problem}` } : { pem: pem! };
}
