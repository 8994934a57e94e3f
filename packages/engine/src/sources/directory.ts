// The embedded default source: a directory of YAML manifests. Files are rescanned when they
// change (fs.watch, with a periodic rescan as a safety net) and the difference is emitted as
// upsert/delete events. A file that fails to parse keeps its previous objects and is reported,
// so one typo never deletes a Gateway. Objects get what an API server would give them: a
// creationTimestamp when first seen and a generation bumped on every spec change.
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { CLUSTER_SCOPED, isWatchedKind, objectKey, type KubeObject } from '@turnpike/api';
import { Observable } from 'rxjs';
import { remove, synced, upsert, type SourceEvent } from '../events.js';
import { listManifestFiles, normalizeNamespace, parseManifests } from '../manifests.js';

export interface DirectorySourceOptions {
  pollMs?: number;
  defaultNamespace?: string;
  now?: () => string;
  onError?: (message: string) => void;
  onWarning?: (message: string) => void;
}

interface Known { json: string; specJson: string; object: KubeObject; file: string }

export const DIRECTORY_SOURCE = 'dir';

export function directorySource(dir: string, opts: DirectorySourceOptions = {}): Observable<SourceEvent> {
  return new Observable<SourceEvent>((subscriber) => {
    const known = new Map<string, Known>();
    const lastGood = new Map<string, KubeObject[]>();
    const reported = new Set<string>();
    const unknownKinds = new Set<string>();
    const now = opts.now ?? (() => new Date().toISOString());

    const scan = () => {
      let files: string[];
      try {
        files = listManifestFiles(dir);
      } catch (e) {
        report(`${(e as Error).message}`);
        return;
      }
      const objects = new Map<string, { object: KubeObject; file: string }>();
      for (const file of files) {
        let parsed: KubeObject[];
        try {
          parsed = parseManifests(readFileSync(file, 'utf8'), file);
          reported.delete(file);
          lastGood.set(file, parsed);
        } catch (e) {
          report(`${(e as Error).message} (keeping this file's previous objects)`, file);
          parsed = lastGood.get(file) ?? [];
        }
        for (const o of parsed) {
          if (!isWatchedKind(o.kind)) {
            if (!unknownKinds.has(o.kind)) opts.onWarning?.(`ignoring kind ${o.kind} (first seen in ${file}): not a kind turnpike reads`);
            unknownKinds.add(o.kind);
            continue;
          }
          const copy = structuredClone(o);
          normalizeNamespace(copy, opts.defaultNamespace ?? 'default');
          const key = objectKey(copy.kind, copy.metadata.namespace, copy.metadata.name);
          const first = objects.get(key);
          if (first) {
            report(`${file}: ${key} is defined twice (first in ${first.file}); ignoring this copy`, `${file}#${key}`);
            continue;
          }
          objects.set(key, { object: copy, file });
        }
      }
      for (const key of [...objects.keys()].sort()) {
        const { object, file } = objects.get(key)!;
        const prev = known.get(key);
        const specJson = JSON.stringify(object.spec ?? null);
        const meta = object.metadata;
        delete meta.generation;
        meta.creationTimestamp ??= prev?.object.metadata.creationTimestamp ?? now();
        meta.generation = prev ? (prev.specJson === specJson ? prev.object.metadata.generation : (prev.object.metadata.generation ?? 1) + 1) : 1;
        const json = JSON.stringify(object);
        if (prev && prev.json === json) continue;
        known.set(key, { json, specJson, object, file });
        subscriber.next(upsert(DIRECTORY_SOURCE, object));
      }
      for (const key of [...known.keys()].sort()) {
        if (objects.has(key)) continue;
        const { object } = known.get(key)!;
        known.delete(key);
        subscriber.next(remove(DIRECTORY_SOURCE, object.kind, CLUSTER_SCOPED.has(object.kind) ? undefined : object.metadata.namespace, object.metadata.name));
      }
    };

    const report = (message: string, key = message) => {
      if (reported.has(key)) return;
      reported.add(key);
      opts.onError?.(message);
    };

    scan();
    subscriber.next(synced(DIRECTORY_SOURCE));

    let pendingScan: NodeJS.Timeout | undefined;
    const schedule = () => {
      if (pendingScan) return;
      pendingScan = setTimeout(() => {
        pendingScan = undefined;
        scan();
      }, 20);
    };
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(dir, { recursive: true }, schedule);
      watcher.on('error', () => undefined);
    } catch {
      watcher = undefined;
    }
    const poll = setInterval(scan, opts.pollMs ?? 1000);
    return () => {
      clearInterval(poll);
      if (pendingScan) clearTimeout(pendingScan);
      watcher?.close();
    };
  });
}
