// What the plugin fetch worker is asked to fetch: per PluginInstallation, the image and type, the
// credentials of the pull Secret it may use, and the public key its signature must verify with.
// Derived here, from the same snapshot and rules as the statuses, so the worker (an edge, doing the
// I/O) keeps no store of its own and cannot disagree with the translator about what is permitted.
import { secretText, type ConfigMap, type PluginInstallation, type Secret } from '@turnpike/api';
import type { Inputs } from '../incremental/inputs.js';
import { DOCKER_CONFIG_KEY, pluginSpecProblem, pullSecretAccess } from './plugins.js';

export interface PluginFetchRequest {
  namespace: string;
  name: string;
  uid?: string;
  generation: number;
  image: string;
  type: string;
  /**
   * Nothing uses the plugin: the worker fetches nothing and releases what it holds of it (content and
   * result), keeping its storage, until a request without it.
   */
  unused?: true;
  /** Why the spec cannot be fetched as it is: the worker waits for a change (the status says why). */
  blocked?: string;
  /** The `.dockerconfigjson` of the pull Secret the plugin may use. */
  dockerConfig?: string;
  /** spec.verify: the PEM public key it names, or why there is none. */
  verify?: { publicKeyPem?: string; problem?: string };
}

/** The public key spec.verify.publicKeyRef names (a `*.pub` key of a Secret or ConfigMap in its namespace). */
function verificationKey(inputs: Inputs, pi: PluginInstallation): PluginFetchRequest['verify'] {
  const ref = pi.spec?.verify?.publicKeyRef;
  if (!ref) return undefined;
  const kind = ref.kind ?? 'Secret';
  const key = ref.key ?? 'cosign.pub';
  if (kind !== 'Secret' && kind !== 'ConfigMap')
    return { problem: `spec.verify.publicKeyRef.kind: ${String(kind)} is not supported (Secret, ConfigMap)` };
  if (!key.endsWith('.pub')) return { problem: `spec.verify.publicKeyRef.key: "${key}" must end in .pub` };
  const where = `spec.verify.publicKeyRef: ${kind} ${pi.metadata.namespace}/${ref.name}`;
  const holder = inputs.get<Secret | ConfigMap>(kind, pi.metadata.namespace, ref.name);
  if (!holder) return { problem: `${where} not found` };
  const pem = kind === 'Secret' ? secretText(holder as Secret, key) : (holder as ConfigMap).data?.[key];
  if (pem === undefined) return { problem: `${where} has no key ${key}` };
  return { publicKeyPem: pem };
}

/** What to fetch for `pi`; `used`: something uses it (else nothing is fetched). */
export function pluginFetchRequest(inputs: Inputs, pi: PluginInstallation, used: boolean): PluginFetchRequest {
  const request: PluginFetchRequest = {
    namespace: pi.metadata.namespace ?? '',
    name: pi.metadata.name,
    generation: pi.metadata.generation ?? 0,
    ...(pi.metadata.uid ? { uid: pi.metadata.uid } : {}),
    image: String(pi.spec?.image ?? ''),
    type: String(pi.spec?.type ?? ''),
  };
  if (!used) {
    // Nothing more: the credentials and key of a plugin not fetched stay out of the worker.
    request.unused = true;
    return request;
  }
  const problem = pluginSpecProblem(inputs, pi);
  if (problem) {
    request.blocked = problem.message;
    return request;
  }
  const secret = pullSecretAccess(inputs, pi).secret;
  const dockerConfig = secret && secretText(secret, DOCKER_CONFIG_KEY);
  if (dockerConfig) request.dockerConfig = dockerConfig;
  const verify = verificationKey(inputs, pi);
  if (verify) request.verify = verify;
  return request;
}
