// One manifest file read as file input reads it: parsed, each object of a kind we read given its namespace,
// and checked as the API server would check it. A pure function of the file's bytes and the options, so it
// runs the same on the main thread or on a worker (see manifest-read-pool.ts).
import { readFileSync } from 'node:fs';
import { isInputObject, slimPod, type KubeObject } from '@turnpike/api';
import { manifestProblem, normalizeNamespace, parseManifests, type ManifestValidation } from '../manifests.js';

export interface ManifestReadOptions {
  defaultNamespace: string;
  validation: ManifestValidation;
}

/** An object of the file, and why the API server would refuse it, if it would (kinds we read only). */
export interface ManifestFileObject {
  object: KubeObject;
  refusal?: string;
}

/** The file's objects in file order, or why it could not be read or parsed (naming file, line and column). */
export type ManifestFileReading = { objects: ManifestFileObject[] } | { error: string };

export function readManifestFile(file: string, opts: ManifestReadOptions): ManifestFileReading {
  let parsed: KubeObject[];
  try {
    parsed = parseManifests(readFileSync(file, 'utf8'), file);
  } catch (e) {
    return { error: (e as Error).message };
  }
  return {
    objects: parsed.map((object) => {
      if (!isInputObject(object)) return { object };
      normalizeNamespace(object, opts.defaultNamespace);
      const refusal = manifestProblem(object, file, opts.validation);
      // A Pod is held as the cluster source holds it (slimPod): the same store and event log either way.
      const held = object.kind === 'Pod' ? slimPod(object) : object;
      return refusal ? { object: held, refusal } : { object: held };
    }),
  };
}
