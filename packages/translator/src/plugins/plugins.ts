// Plugins (turnpike.dev PluginInstallation). Three rules live here:
// - a PluginInstallation is Accepted when its image parses and its pull Secret may be used
//   (same namespace, or a ReferenceGrant from PluginInstallation to Secret);
// - it is Fetched when the fetch worker's result (an internal PluginFetch object) is for its
//   current generation and image and succeeded; one nothing uses is not fetched (plugin-uses.ts);
// - a reference to a plugin (a ProxyConfig installing it, a route's ExtensionRef) resolves when
//   the plugin exists, another namespace grants it (ReferenceGrant from the referrer's kind to
//   PluginInstallation), and some content was fetched. Content of an earlier generation keeps
//   serving while a new one is fetched (make before break); a failed fetch of the new one stops it.
import {
  TURNPIKE_GROUP,
  parseImageReference,
  recordedOf,
  secretText,
  type Condition,
  type PluginFetch,
  type PluginInstallation,
  type ProxyConfig,
  type Secret,
} from '@turnpike/api';
import { type Problem, condition, conditionOf, sortConditions } from '../status/conditions.js';
import type { Inputs } from '../incremental/inputs.js';
import { referenceNotPermitted } from '../policies/reference-grants.js';
import { NOT_TOLD } from '../policies/certificates.js';
import { notUsedMessage } from './plugin-uses.js';

export const DOCKER_CONFIG_SECRET_TYPE = 'kubernetes.io/dockerconfigjson';
/** The key of a pull Secret that holds the registry credentials. */
export const DOCKER_CONFIG_KEY = '.dockerconfigjson';
/** Where an installed plugin's file is mounted in the proxy container. */
export const PLUGIN_MOUNT_ROOT = '/etc/turnpike/plugins';

export interface PullAccess {
  secret?: Secret;
  problem?: Problem;
}

/** The pull Secret a PluginInstallation may use, or why it may not. */
export function pullSecretAccess(inputs: Inputs, pi: PluginInstallation): PullAccess {
  const ref = pi.spec?.pullSecretRef;
  if (!ref) return {};
  const ns = ref.namespace || pi.metadata.namespace || '';
  const target = `Secret ${ns}/${ref.name}`;
  const notPermitted = referenceNotPermitted(
    inputs,
    { group: TURNPIKE_GROUP, kind: 'PluginInstallation', namespace: pi.metadata.namespace ?? '' },
    { group: '', kind: 'Secret', namespace: ns, name: ref.name },
    'spec.pullSecretRef',
  );
  if (notPermitted) return { problem: notPermitted };
  const secret = inputs.get<Secret>('Secret', ns, ref.name);
  if (!secret) return { problem: { reason: 'InvalidPullSecret', message: `spec.pullSecretRef: ${target} not found` } };
  // A live tool's stand-in (api/secret-data.ts): what the controller recorded of it, if it did.
  const recorded = recordedOf(secret);
  if (recorded && !recorded.pullSecret)
    return {
      problem: {
        reason: 'InvalidPullSecret',
        message: `spec.pullSecretRef: ${target}: not readable here, and not in the controller's record: ${NOT_TOLD}`,
      },
    };
  const usable = recorded
    ? recorded.type === DOCKER_CONFIG_SECRET_TYPE && recorded.pullSecret!.dockerConfig
    : secret.type === DOCKER_CONFIG_SECRET_TYPE && !!secretText(secret, DOCKER_CONFIG_KEY);
  if (!usable) {
    return {
      problem: {
        reason: 'InvalidPullSecret',
        message:
          `spec.pullSecretRef: ${target} must be of type ${DOCKER_CONFIG_SECRET_TYPE} with a ` +
          `.dockerconfigjson key`,
      },
    };
  }
  return { secret };
}

/** Why the spec cannot be acted on, if it cannot. */
export function pluginSpecProblem(inputs: Inputs, pi: PluginInstallation): Problem | undefined {
  if (pi.spec?.type !== 'lua' && pi.spec?.type !== 'wasm')
    return {
      reason: 'UnsupportedValue',
      message: `spec.type: "${String(pi.spec?.type)}" is not supported (lua, wasm)`,
    };
  try {
    parseImageReference(String(pi.spec.image ?? ''));
  } catch (e) {
    return { reason: 'InvalidImage', message: `spec.image: ${(e as Error).message}` };
  }
  return pullSecretAccess(inputs, pi).problem;
}

function fetchFor(inputs: Inputs, pi: PluginInstallation): PluginFetch | undefined {
  return inputs.get<PluginFetch>('PluginFetch', pi.metadata.namespace, pi.metadata.name);
}

function isCurrent(f: PluginFetch | undefined, pi: PluginInstallation): boolean {
  return (
    !!f && f.status.image === pi.spec.image && (f.status.observedGeneration ?? 0) === (pi.metadata.generation ?? 0)
  );
}

/**
 * The content a reference to this plugin gets: the last successful fetch, unless the current spec
 * failed or is invalid. A pull Secret that went missing only stops fetching: content already
 * fetched keeps serving (a Secret deleted and created again must not break routes); a revoked
 * ReferenceGrant stops serving.
 */
export function servedContent(inputs: Inputs, pi: PluginInstallation): PluginFetch['status'] | undefined {
  const problem = pluginSpecProblem(inputs, pi);
  if (problem && problem.reason !== 'InvalidPullSecret') return undefined;
  const f = fetchFor(inputs, pi);
  if (!f?.status.sha256) return undefined;
  if (!f.status.fetched && isCurrent(f, pi)) return undefined;
  return f.status;
}

/** Its status; `used`: something uses it (else it is not fetched, and nothing of it is served). */
export function pluginInstallationStatus(
  inputs: Inputs,
  pi: PluginInstallation,
  used: boolean,
): Record<string, unknown> {
  const gen = pi.metadata.generation;
  const problem = pluginSpecProblem(inputs, pi);
  const conds: Condition[] = [
    conditionOf(
      'Accepted',
      problem,
      { reason: 'Accepted', message: 'The spec is valid and its references are permitted' },
      gen,
    ),
  ];
  const f = fetchFor(inputs, pi);
  const status: Record<string, unknown> = { observedGeneration: gen };
  if (problem) {
    const reason = problem.reason === 'RefNotPermitted' ? 'RefNotPermitted' : 'Pending';
    conds.push(condition('Fetched', false, reason, `Not fetched: ${problem.message}`, gen));
  } else if (!used) {
    conds.push(
      condition('Fetched', false, 'NotUsed', notUsedMessage(pi.metadata.namespace ?? '', pi.metadata.name), gen),
    );
  } else if (!isCurrent(f, pi)) {
    conds.push(condition('Fetched', false, 'Pending', `Fetching ${pi.spec.image}`, gen));
  } else {
    conds.push(condition('Fetched', f!.status.fetched, f!.status.reason, f!.status.message, gen));
  }
  // digest and storage say what is served, which may be an earlier generation's content; an unused
  // plugin's content is released by the worker.
  const served = used ? servedContent(inputs, pi) : undefined;
  if (served) {
    status.digest = served.digest;
    status.storage = { ...served.storage, sha256: served.sha256, size: served.size };
  }
  status.conditions = sortConditions(conds);
  return status;
}

export interface ResolvedPlugin {
  plugin: PluginInstallation;
  content: NonNullable<ReturnType<typeof servedContent>>;
}

/** Resolves `{name, namespace?}` from a referrer; the problem names `field`. */
export function resolvePluginRef(
  inputs: Inputs,
  from: { kind: string; group: string; namespace: string },
  ref: { name: string; namespace?: string },
  field: string,
): { resolved?: ResolvedPlugin; problem?: Problem } {
  const ns = ref.namespace || from.namespace;
  const key = `${ns}/${ref.name}`;
  const notPermitted = referenceNotPermitted(
    inputs,
    { group: from.group, kind: from.kind, namespace: from.namespace },
    { group: TURNPIKE_GROUP, kind: 'PluginInstallation', namespace: ns, name: ref.name },
    field,
  );
  if (notPermitted) return { problem: notPermitted };
  const plugin = inputs.get<PluginInstallation>('PluginInstallation', ns, ref.name);
  if (!plugin)
    return { problem: { reason: 'PluginNotFound', message: `${field}: PluginInstallation ${key} not found` } };
  const content = servedContent(inputs, plugin);
  if (!content)
    return {
      problem: {
        reason: 'PluginNotFetched',
        message: `${field}: PluginInstallation ${key} is not fetched (see its Fetched condition)`,
      },
    };
  return { resolved: { plugin, content } };
}

export interface InstalledPlugin {
  name: string;
  namespace: string;
  type: 'lua' | 'wasm';
  sha256: string;
  size: number;
  digest?: string;
  /** Stored in this ConfigMap (in the plugin's namespace), or served at this URL when too large. */
  configMap?: string;
  url?: string;
  /** The file in the proxy container, when the content is mounted. */
  mountPath?: string;
}

export function pluginMountPath(namespace: string, name: string, type: string): string {
  return `${PLUGIN_MOUNT_ROOT}/${namespace}/${name}/plugin.${type}`;
}

/** One entry of ProxyConfig.spec.plugins: resolved, or why it cannot be installed. */
export interface ProxyConfigPluginEntry {
  name: string;
  namespace: string;
  problem?: Problem;
}

/** The plugins a ProxyConfig installs, and per entry of spec.plugins whether it resolves (Installed is decided per Gateway). */
export function proxyConfigPlugins(
  inputs: Inputs,
  pc: ProxyConfig,
): { installed: InstalledPlugin[]; entries: ProxyConfigPluginEntry[] } {
  const installed: InstalledPlugin[] = [];
  const entries: ProxyConfigPluginEntry[] = [];
  const seen = new Set<string>();
  for (const [i, ref] of (pc.spec?.plugins ?? []).entries()) {
    const ns = ref.namespace || pc.metadata.namespace || '';
    const key = `${ns}/${ref.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const r = resolvePluginRef(
      inputs,
      { kind: 'ProxyConfig', group: TURNPIKE_GROUP, namespace: pc.metadata.namespace ?? '' },
      ref,
      `spec.plugins[${i}]`,
    );
    if (r.problem) {
      entries.push({ name: ref.name, namespace: ns, problem: r.problem });
      continue;
    }
    const { plugin, content } = r.resolved!;
    const p: InstalledPlugin = {
      name: ref.name,
      namespace: ns,
      type: plugin.spec.type,
      sha256: content.sha256!,
      size: content.size ?? 0,
    };
    if (content.digest) p.digest = content.digest;
    if (content.storage?.configMap) {
      p.configMap = content.storage.configMap;
      p.mountPath = pluginMountPath(ns, ref.name, plugin.spec.type);
    }
    if (content.storage?.url) p.url = content.storage.url;
    installed.push(p);
    entries.push({ name: ref.name, namespace: ns });
  }
  return {
    installed: installed.sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1)),
    entries,
  };
}
