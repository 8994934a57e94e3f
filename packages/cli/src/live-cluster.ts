// The objects of a live cluster, listed once, for the file commands' live modes (`analyze`,
// `explain`, `diff` with --kubeconfig). Read-only: one list per kind the controller watches (a kind
// the cluster does not serve is skipped; one with fallback versions is listed at the first version
// served, and said to be served or not as the controller's source says it), and, for what the
// controller alone knows, the fetch result of each PluginInstallation rebuilt from the status the
// controller wrote. Secrets and ConfigMaps are not read at all (turnpike-viewer may not: a Secret
// cannot be listed without its values): what the translation needs of those that are referenced
// comes from the record the controller publishes (ConfigMap turnpike-references in its namespace;
// live-references.ts puts it where the objects would be).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type {
  Condition,
  ConfigMap,
  KubeObject,
  PluginFetch,
  PluginInstallation,
  ProxyReport,
  ReferenceRecord,
} from '@turnpike/api';
import { slimPod } from '@turnpike/api';
import {
  KubeApiError,
  KubeClient,
  MANAGED_SELECTOR,
  REFERENCE_RECORD_KEY,
  REFERENCE_RECORD_NAME,
  RESOURCES,
  apiVersionOf,
  collectionPath,
  servedAPI,
  versionsOf,
  type ResourceInfo,
} from '@turnpike/kube';
import { sanitize } from '@turnpike/engine';
import { GATEWAY_NAMESPACE_LABEL, type TranslateOptions } from '@turnpike/translator';
import { CliError } from './errors.js';

export interface LiveFlags {
  kubeconfig?: string;
  context?: string;
}

/**
 * The kubeconfig kubectl would use: --kubeconfig, else the first file of $KUBECONFIG, else
 * ~/.kube/config (when it exists); undefined when there is none.
 */
export function kubeconfigPath(flag: string | undefined): string | undefined {
  if (flag !== undefined) return flag;
  const fromEnv = process.env.KUBECONFIG?.split(delimiter).find((p) => p !== '');
  if (fromEnv) return fromEnv;
  const home = join(homedir(), '.kube', 'config');
  return existsSync(home) ? home : undefined;
}

export function liveClient(flags: LiveFlags): KubeClient {
  try {
    return KubeClient.fromKubeconfig(flags.kubeconfig!, flags.context);
  } catch (e) {
    throw new CliError(`--kubeconfig ${flags.kubeconfig}: ${(e as Error).message}`);
  }
}

/** Kinds the live tools never read: the controller's record stands for what they need of them. */
export const NOT_READ_LIVE = new Set(['Secret', 'ConfigMap']);

/**
 * Every object of every watched kind, across namespaces (statuses depend on objects anywhere), but
 * Secrets and ConfigMaps.
 */
export async function listLiveObjects(client: KubeClient): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const r of RESOURCES) {
    if (NOT_READ_LIVE.has(r.kind)) continue;
    const selector = r.kind === 'Deployment' ? MANAGED_SELECTOR : '';
    const listed =
      r.kind === 'ProxyReport'
        ? await liveProxyReports(client, r)
        : await listServed(client, r, selector ? `?labelSelector=${encodeURIComponent(selector)}` : '');
    // What the controller's source says of an API a cluster may lack, so the verdicts are the same.
    if (r.reportServed) out.push(servedAPI(r, listed?.version));
    // A kind this cluster does not serve has no objects.
    if (!listed) continue;
    const apiVersion = apiVersionOf(r);
    for (const item of listed.items) {
      const typed = { ...item, apiVersion, kind: r.kind };
      // As the controller's source holds them (slimPod), so its verdicts and ours are the same.
      out.push(r.kind === 'Pod' ? slimPod(typed) : sanitize(typed));
    }
  }
  return [...out, ...pluginFetchesFromStatus(out)];
}

/**
 * The controller replicas' reports of their proxies that are live now (renewed within their lease, by
 * this machine's clock): what the controller's own statuses are judged from. None where the CRD is not
 * installed or the viewer role predates it.
 */
async function liveProxyReports(
  client: KubeClient,
  r: ResourceInfo,
): Promise<{ version: string; items: KubeObject[] } | undefined> {
  let items: KubeObject[];
  try {
    items = (await client.must<{ items?: KubeObject[] }>('GET', collectionPath(r))).items ?? [];
  } catch (e) {
    if (e instanceof KubeApiError && (e.status === 404 || e.status === 403)) return undefined;
    throw new CliError(`cannot list ${r.plural}: ${(e as Error).message}`);
  }
  const now = Date.now();
  const live = (o: KubeObject) => {
    const spec = (o as ProxyReport).spec;
    return now - Date.parse(spec?.renewTime ?? '') < (spec?.leaseDurationSeconds ?? 15) * 1000;
  };
  return { version: r.version, items: items.filter(live) };
}

/** A kind's objects at the first of its versions the cluster serves; undefined when it serves none (404). */
async function listServed(
  client: KubeClient,
  r: ResourceInfo,
  query: string,
): Promise<{ version: string; items: KubeObject[] } | undefined> {
  for (const version of versionsOf(r)) {
    try {
      const list = await client.must<{ items?: KubeObject[] }>('GET', `${collectionPath({ ...r, version })}${query}`);
      return { version, items: list.items ?? [] };
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404) continue;
      if (e instanceof KubeApiError && e.status === 403)
        throw new CliError(`cannot list ${r.plural}: ${e.message} (bind the ClusterRole turnpike-viewer)`);
      throw new CliError(`cannot list ${r.plural}: ${(e as Error).message}`);
    }
  }
  return undefined;
}

/**
 * What the controller's fetch worker reported for each PluginInstallation, as its status says it:
 * the translator reads fetch results as inputs, and they are not stored in the cluster otherwise.
 */
function pluginFetchesFromStatus(objects: readonly KubeObject[]): PluginFetch[] {
  const out: PluginFetch[] = [];
  for (const o of objects) {
    if (o.kind !== 'PluginInstallation') continue;
    const pi = o as PluginInstallation;
    const fetched = (pi.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Fetched');
    if (!fetched) continue;
    const storage = pi.status?.storage;
    out.push({
      apiVersion: 'turnpike.dev/internal',
      kind: 'PluginFetch',
      metadata: { namespace: pi.metadata.namespace!, name: pi.metadata.name },
      status: {
        ...(pi.status?.observedGeneration !== undefined ? { observedGeneration: pi.status.observedGeneration } : {}),
        image: pi.spec.image,
        fetched: fetched.status === 'True',
        reason: fetched.status === 'True' ? 'Fetched' : (fetched.reason as PluginFetch['status']['reason']),
        message: fetched.message,
        ...(pi.status?.digest ? { digest: pi.status.digest } : {}),
        ...(storage?.sha256 ? { sha256: storage.sha256 } : {}),
        ...(storage?.size !== undefined ? { size: storage.size } : {}),
        ...(storage?.configMap || storage?.url
          ? {
              storage: {
                ...(storage.configMap ? { configMap: storage.configMap } : {}),
                ...(storage.url ? { url: storage.url } : {}),
              },
            }
          : {}),
      },
    });
  }
  return out;
}

/** The controller's record of referenced Secrets and ConfigMaps, as a live tool found it. */
export interface LiveRecord {
  /** `namespace/name` of the ConfigMap it was read from. */
  source?: string;
  record?: ReferenceRecord;
  /** Why there is none. */
  missing?: string;
}

/** A live cluster read once: its objects, and how its controller translates them. */
export interface LiveCluster {
  objects: KubeObject[];
  options: TranslateOptions;
  record: LiveRecord;
}

/** The controller's default namespace (deploy/, `--leader-election-namespace`). */
const DEFAULT_CONTROLLER_NAMESPACE = 'turnpike-system';

/**
 * Where the controller runs: the namespace of the live ProxyReports (only the controller writes them, in
 * its own namespace), else where it placed the proxies, else deploy/'s.
 */
export function controllerNamespaces(objects: readonly KubeObject[]): string[] {
  const reports = new Set(objects.filter((o) => o.kind === 'ProxyReport').map((o) => o.metadata.namespace ?? ''));
  if (reports.size) return [...reports].sort();
  return [proxyNamespaceOf(objects) ?? DEFAULT_CONTROLLER_NAMESPACE];
}

/** The record in the first of `namespaces` that has one; why there is none otherwise. */
export async function readReferenceRecord(client: KubeClient, namespaces: readonly string[]): Promise<LiveRecord> {
  const refused: string[] = [];
  for (const namespace of namespaces) {
    const source = `${namespace}/${REFERENCE_RECORD_NAME}`;
    let cm: ConfigMap;
    try {
      cm = await client.must<ConfigMap>('GET', `/api/v1/namespaces/${namespace}/configmaps/${REFERENCE_RECORD_NAME}`);
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404) continue;
      if (e instanceof KubeApiError && e.status === 403) {
        refused.push(source);
        continue;
      }
      throw new CliError(`cannot read ConfigMap ${source}: ${(e as Error).message}`);
    }
    const record = parseRecord(cm.data?.[REFERENCE_RECORD_KEY]);
    if (!record) return { source, missing: `ConfigMap ${source} does not hold a record this tool can read` };
    return { source, record };
  }
  if (refused.length)
    return {
      missing:
        `reading ConfigMap ${refused.join(', ')} is refused (bind the ClusterRole turnpike-viewer of this ` +
        `release: it may get that ConfigMap)`,
    };
  const where = namespaces.map((n) => `${n}/${REFERENCE_RECORD_NAME}`).join(', ');
  return {
    missing: `the controller has published no record (no ConfigMap ${where}: none runs there, or it predates the record)`,
  };
}

function parseRecord(text: string | undefined): ReferenceRecord | undefined {
  try {
    const r = JSON.parse(text ?? '') as ReferenceRecord;
    return typeof r.updated === 'string' && Array.isArray(r.references) ? r : undefined;
  } catch {
    return undefined;
  }
}

export async function readLiveCluster(flags: LiveFlags): Promise<LiveCluster> {
  const client = liveClient(flags);
  try {
    const objects = await listLiveObjects(client);
    const proxyNamespace = proxyNamespaceOf(objects);
    const record = await readReferenceRecord(client, controllerNamespaces(objects));
    return { objects, options: proxyNamespace !== undefined ? { proxyNamespace } : {}, record };
  } finally {
    client.close();
  }
}

/**
 * Where the controller placed the proxies, read from the cluster: a proxy Service labelled with a
 * Gateway namespace other than its own means every proxy is in the controller's namespace.
 */
export function proxyNamespaceOf(objects: readonly KubeObject[]): string | undefined {
  for (const o of objects) {
    const of = o.kind === 'Service' ? o.metadata.labels?.[GATEWAY_NAMESPACE_LABEL] : undefined;
    if (of !== undefined && of !== o.metadata.namespace) return o.metadata.namespace;
  }
  return undefined;
}

/** RFC 7386 JSON merge patch, as kubectl apply merges a manifest into a custom resource: maps merge, lists are replaced. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** The live objects with the files applied on top: an object in both is merged, a new one added. */
export function withFilesApplied(live: readonly KubeObject[], files: readonly KubeObject[]): KubeObject[] {
  const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  const byKey = new Map(live.map((o) => [key(o), o]));
  for (const f of files) {
    const current = byKey.get(key(f));
    if (!current) {
      byKey.set(key(f), f);
      continue;
    }
    const merged = mergePatch(current, { ...f, metadata: { ...f.metadata, generation: null } }) as KubeObject;
    // As the API server does: a changed spec bumps the generation.
    const specChanged = JSON.stringify(merged.spec ?? null) !== JSON.stringify(current.spec ?? null);
    merged.metadata.generation = (current.metadata.generation ?? 1) + (specChanged ? 1 : 0);
    byKey.set(key(f), merged);
  }
  return [...byKey.values()];
}
