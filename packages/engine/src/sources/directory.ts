// The embedded default source: a directory of YAML manifests. fs events (recursive) name the files
// that changed; a periodic rescan compares each file's mtime and size as a safety net. Only files
// that changed are read and parsed again, and only the objects they define are compared and
// emitted, so an idle controller does (almost) nothing and one edit costs one file.
// A file that fails to parse keeps its previous objects and is reported, so one typo never deletes
// a Gateway. An object the API server would refuse is refused the same way (an update keeps the
// previous version), unless validation says otherwise. An object defined twice keeps the copy seen first. Objects get what an API server
// would give them: a creationTimestamp when first seen and a generation bumped on spec changes.
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_SCOPED, isWatchedKind, objectKey, type KubeObject } from '@turnpike/api';
import { Observable } from 'rxjs';
import { remove, synced, upsert, type SourceEvent } from '../events.js';
import {
  listManifestTree,
  manifestProblem,
  normalizeNamespace,
  parseManifests,
  type FileStamp,
  type ManifestValidation,
} from '../manifests.js';

export interface DirectorySourceOptions {
  /** Rescan (stat only) this often, besides fs events. */
  pollMs?: number;
  defaultNamespace?: string;
  /** Default `strict`: see ManifestValidation. */
  validation?: ManifestValidation;
  now?: () => string;
  onError?: (message: string) => void;
  onWarning?: (message: string) => void;
}

/** What was emitted for an object, to tell a real change from a re-read. */
interface Emitted {
  json: string;
  specJson: string;
  object: KubeObject;
}

interface FileState {
  stamp: FileStamp;
  objects: Map<string, KubeObject>;
}

export const DIRECTORY_SOURCE = 'dir';

export function directorySource(dir: string, opts: DirectorySourceOptions = {}): Observable<SourceEvent> {
  return new Observable<SourceEvent>((subscriber) => {
    const files = new Map<string, FileState>();
    /** Object key → the files defining it, in the order they were first seen defining it. */
    const definers = new Map<string, string[]>();
    const emitted = new Map<string, Emitted>();
    const reported = new Set<string>();
    const unknownKinds = new Set<string>();
    const now = opts.now ?? (() => new Date().toISOString());
    const report = (message: string, key = message) => {
      if (reported.has(key)) return;
      reported.add(key);
      opts.onError?.(message);
    };

    /** Reads one file; on a parse error keeps what it had. Returns the object keys it defines now. */
    const read = (file: string, stamp: FileStamp): Map<string, KubeObject> => {
      const before = files.get(file)?.objects;
      let parsed: KubeObject[];
      try {
        parsed = parseManifests(readFileSync(file, 'utf8'), file);
        reported.delete(file);
      } catch (e) {
        report(`${(e as Error).message} (keeping this file's previous objects)`, file);
        files.set(file, { stamp, objects: before ?? new Map() });
        return before ?? new Map();
      }
      const objects = new Map<string, KubeObject>();
      for (const o of parsed) {
        if (!isWatchedKind(o.kind)) {
          if (!unknownKinds.has(o.kind))
            opts.onWarning?.(`ignoring kind ${o.kind} (first seen in ${file}): not a kind turnpike reads`);
          unknownKinds.add(o.kind);
          continue;
        }
        normalizeNamespace(o, opts.defaultNamespace ?? 'default');
        const key = objectKey(o.kind, o.metadata.namespace, o.metadata.name);
        if (objects.has(key)) {
          report(`${file}: ${key} is defined twice in this file; ignoring the later copy`, `${file}#${key}`);
          continue;
        }
        const problem = manifestProblem(o, file, opts.validation ?? 'strict');
        if (problem && opts.validation !== 'warn') {
          // As the API server refuses an update: the version accepted before stays.
          const previous = before?.get(key);
          report(`${problem} (${previous ? 'keeping its previous version' : 'not loaded'})`);
          if (previous) objects.set(key, previous);
          continue;
        }
        if (problem) opts.onWarning?.(problem);
        objects.set(key, o);
      }
      files.set(file, { stamp, objects });
      return objects;
    };

    /** Emits what changed for one object key, given who defines it now. */
    const settle = (key: string) => {
      const owners = definers.get(key) ?? [];
      const owner = owners[0];
      for (const other of owners.slice(1))
        report(`${other}: ${key} is defined twice (first in ${owner}); ignoring this copy`, `${other}#${key}`);
      const object = owner ? files.get(owner)?.objects.get(key) : undefined;
      const prev = emitted.get(key);
      if (!object) {
        if (!prev) return;
        emitted.delete(key);
        const o = prev.object;
        subscriber.next(
          remove(
            DIRECTORY_SOURCE,
            o.kind,
            CLUSTER_SCOPED.has(o.kind) ? undefined : o.metadata.namespace,
            o.metadata.name,
          ),
        );
        return;
      }
      const copy = structuredClone(object);
      const meta = copy.metadata;
      const specJson = JSON.stringify(copy.spec ?? null);
      meta.creationTimestamp ??= prev?.object.metadata.creationTimestamp ?? now();
      meta.generation = prev
        ? prev.specJson === specJson
          ? prev.object.metadata.generation
          : (prev.object.metadata.generation ?? 1) + 1
        : 1;
      const json = JSON.stringify(copy);
      if (prev && prev.json === json) return;
      emitted.set(key, { json, specJson, object: copy });
      subscriber.next(upsert(DIRECTORY_SOURCE, copy));
    };

    /** Stats every file; reads those that changed (or that an fs event named); emits what follows. */
    const scan = (named: ReadonlySet<string> = new Set()) => {
      let tree: Map<string, FileStamp>;
      try {
        tree = listManifestTree(dir, (m) => report(`${m}; skipped`));
      } catch (e) {
        report((e as Error).message);
        return;
      }
      const affected = new Set<string>();
      for (const [file, stamp] of tree) {
        const known = files.get(file);
        if (known && !named.has(file) && known.stamp.mtimeMs === stamp.mtimeMs && known.stamp.size === stamp.size)
          continue;
        const before = new Set(known?.objects.keys() ?? []);
        const after = read(file, stamp);
        for (const key of new Set([...before, ...after.keys()])) {
          const owners = (definers.get(key) ?? []).filter((f) => f !== file || after.has(key));
          if (after.has(key) && !owners.includes(file)) owners.push(file);
          if (owners.length) definers.set(key, owners);
          else definers.delete(key);
          affected.add(key);
        }
      }
      for (const file of [...files.keys()]) {
        if (tree.has(file)) continue;
        for (const key of files.get(file)!.objects.keys()) {
          const owners = (definers.get(key) ?? []).filter((f) => f !== file);
          if (owners.length) definers.set(key, owners);
          else definers.delete(key);
          affected.add(key);
        }
        files.delete(file);
        reported.delete(file);
      }
      for (const key of [...affected].sort()) settle(key);
    };

    scan();
    subscriber.next(synced(DIRECTORY_SOURCE));

    // fs events say which files to read again, even when an edit keeps the mtime and size.
    const named = new Set<string>();
    let pending: NodeJS.Timeout | undefined;
    const schedule = (file?: string) => {
      if (file) named.add(file);
      if (pending) return;
      pending = setTimeout(() => {
        pending = undefined;
        const batch = new Set(named);
        named.clear();
        scan(batch);
      }, 20);
    };
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(dir, { recursive: true }, (_event, name) => schedule(name ? join(dir, String(name)) : undefined));
      watcher.on('error', () => undefined);
    } catch {
      watcher = undefined;
    }
    const poll = setInterval(() => scan(), opts.pollMs ?? 1000);
    return () => {
      clearInterval(poll);
      if (pending) clearTimeout(pending);
      watcher?.close();
    };
  });
}
