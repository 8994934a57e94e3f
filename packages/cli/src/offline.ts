// Offline translation of manifests: load, translate, and merge statuses into the objects.
import { CONTROLLER_NAME, OWNED_STATUS_KINDS, objectKey, type KubeObject } from '@turnpike/api';
import { loadManifests, type ManifestValidation } from '@turnpike/engine';
import type { LiveCluster, LiveRecord } from './live-cluster.js';
import { liveInput, type ReferenceNote } from './live-references.js';
import {
  mergeStatus,
  snapshotFromObjects,
  Translator,
  type TranslateOptions,
  type TranslateResult,
} from '@turnpike/translator';

export interface OfflineResult {
  resources: KubeObject[];
  result: TranslateResult;
  /** The translator that made `result`, for what statuses do not say (every backend's verdict). */
  translator: Translator;
  warnings: string[];
  /** Objects the API server would refuse (left out unless validation is `warn`). */
  errors: string[];
  /** Skipped as `run --dir` skips them (dangling links, link loops, later copies of an object). */
  skipped: string[];
  /** Objects of kinds we do not read that target others as policies do (from files). */
  foreignPolicies?: KubeObject[];
  /** A live cluster's: the Secrets and ConfigMaps referenced, and what each was judged by (live-references.ts). */
  references?: ReferenceNote[];
  record?: LiveRecord;
}

export function withStatuses(objects: readonly KubeObject[], result: TranslateResult, now: string): KubeObject[] {
  return objects.map((o) => {
    const ours = result.statuses.get(objectKey(o.kind, o.metadata.namespace, o.metadata.name));
    if (!ours || !OWNED_STATUS_KINDS.has(o.kind)) return o;
    return {
      ...o,
      status: mergeStatus(o.kind, o.status as Record<string, unknown> | undefined, ours, CONTROLLER_NAME, now),
    };
  });
}

export function translateObjects(objects: KubeObject[], now: string, options: TranslateOptions = {}): OfflineResult {
  const translator = new Translator(options);
  const result = translator.translate(snapshotFromObjects(objects));
  return { resources: withStatuses(objects, result, now), result, translator, warnings: [], errors: [], skipped: [] };
}

export function translatePaths(
  paths: string[],
  now: string,
  validation: ManifestValidation = 'strict',
  options: TranslateOptions = {},
): OfflineResult {
  const loaded = loadManifests(paths, { validation });
  // Files are the operator's, as under `run --dir`: loopback backends are kept (a cluster's slices are not).
  const r = translateObjects(loaded.objects, now, { loopbackEndpoints: true, ...options });
  for (const [kind, file] of loaded.unknownKinds)
    r.warnings.push(`ignoring kind ${kind} (first seen in ${file}): not a kind turnpike reads`);
  if (validation === 'warn') r.warnings.push(...loaded.invalid);
  else r.errors.push(...loaded.invalid.map((m) => `${m} (left out)`));
  r.skipped.push(...loaded.skipped);
  r.foreignPolicies = loaded.foreignPolicies;
  return r;
}

/**
 * A live cluster's objects (read once, live-cluster.ts), with files applied on top if any, translated
 * as its controller would; the Secrets and ConfigMaps they reference as the controller's record has them.
 */
export function translateLive(live: LiveCluster, now: string, files: KubeObject[] = []): OfflineResult {
  const input = liveInput(live, files);
  return { ...translateObjects(input.objects, now, live.options), references: input.references, record: live.record };
}
