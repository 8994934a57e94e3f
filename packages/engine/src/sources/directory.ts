// The embedded default source: a directory of YAML manifests. fs events (a watcher per directory) name the files
// that changed; a periodic rescan compares each file's mtime and size as a safety net. Only files
// that changed are read and parsed again, and only the objects they define are compared and
// emitted, so an idle controller does (almost) nothing and one edit costs one file.
// A file that fails to parse keeps its previous objects and is reported, so one typo never deletes
// a Gateway. An object the API server would refuse is refused the same way (an update keeps the
// previous version), unless validation says otherwise. An object defined twice keeps the copy seen
// first. Objects get what an API server would give them: a creationTimestamp when first seen and a
// generation bumped on spec changes.
import { readFileSync } from 'node:fs';
import { CLUSTER_SCOPED, isInputObject, objectKey, type KubeObject } from '@turnpike/api';
import { Observable } from 'rxjs';
import { problem, remove, synced, upsert, type SourceEvent } from '../events.js';
import { DirectoryWatchers } from './directory-watch.js';
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
  /** A problem reported through onError is over (the file parses again, the object is accepted). */
  onFixed?: (message: string) => void;
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

/**
 * What a directory holds, file by file, and what was emitted for each object: a scan reads the
 * files that changed and emits, in key order, the upserts and deletes that follow.
 */
class ManifestDirectory {
  private readonly files = new Map<string, FileState>();
  /** Object key → the files defining it, in the order they were first seen defining it. */
  private readonly definers = new Map<string, string[]>();
  private readonly emitted = new Map<string, Emitted>();
  /** Problems already reported (by file, or file and object), so each is said once. */
  private readonly reported = new Set<string>();
  /** Problems that keep input out (a file that does not parse, a refused object), by key, until fixed. */
  private readonly open = new Map<string, string>();
  private readonly unknownKinds = new Set<string>();
  private readonly now: () => string;

  constructor(
    private readonly dir: string,
    private readonly opts: DirectorySourceOptions,
    private readonly emit: (event: SourceEvent) => void,
  ) {
    this.now = opts.now ?? (() => new Date().toISOString());
  }

  /** A problem that keeps input out: said once, and recorded as a `problem` event until it is fixed. */
  private raise(key: string, message: string): void {
    if (this.open.get(key) === message) return;
    this.open.set(key, message);
    this.opts.onError?.(message);
    this.emit(problem(DIRECTORY_SOURCE, key, message));
  }

  /** The problem under `key`, if any, is over: said, and recorded. */
  private fix(key: string, message: string): void {
    if (!this.open.delete(key)) return;
    this.opts.onFixed?.(message);
    this.emit(problem(DIRECTORY_SOURCE, key, message, true));
  }

  private report(message: string, key = message): void {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.opts.onError?.(message);
  }

  /** The directories of the tree at the last scan (empty when the root is a file). */
  directories = new Set<string>();

  /** Stats every file; reads those that changed (or that an fs event named); emits what follows. */
  scan(named: ReadonlySet<string> = new Set()): void {
    let tree: Map<string, FileStamp>;
    const directories = new Set<string>();
    try {
      tree = listManifestTree(this.dir, (m) => this.report(`${m}; skipped`), directories);
      this.directories = directories;
    } catch (e) {
      this.report((e as Error).message);
      return;
    }
    const affected = new Set<string>();
    for (const [file, stamp] of tree) {
      const known = this.files.get(file);
      if (known && !named.has(file) && known.stamp.mtimeMs === stamp.mtimeMs && known.stamp.size === stamp.size)
        continue;
      const before = new Set(known?.objects.keys() ?? []);
      const after = this.read(file, stamp);
      for (const key of new Set([...before, ...after.keys()])) {
        const owners = (this.definers.get(key) ?? []).filter((f) => f !== file || after.has(key));
        if (after.has(key) && !owners.includes(file)) owners.push(file);
        this.setDefiners(key, owners);
        affected.add(key);
      }
    }
    for (const file of [...this.files.keys()]) {
      if (tree.has(file)) continue;
      for (const key of this.files.get(file)!.objects.keys()) {
        this.setDefiners(
          key,
          (this.definers.get(key) ?? []).filter((f) => f !== file),
        );
        affected.add(key);
      }
      this.files.delete(file);
      this.reported.delete(file);
      for (const key of [...this.open.keys()])
        if (key === file || key.startsWith(`${file}#`)) this.fix(key, `${file}: removed, and its problem with it`);
    }
    for (const key of [...affected].sort()) this.settle(key);
  }

  private setDefiners(key: string, owners: string[]): void {
    if (owners.length) this.definers.set(key, owners);
    else this.definers.delete(key);
  }

  /** Reads one file; on a parse error keeps what it had. Returns the objects it defines now. */
  private read(file: string, stamp: FileStamp): Map<string, KubeObject> {
    const before = this.files.get(file)?.objects;
    let parsed: KubeObject[];
    try {
      parsed = parseManifests(readFileSync(file, 'utf8'), file);
      this.fix(file, `${file}: parses again`);
    } catch (e) {
      this.raise(file, `${(e as Error).message} (keeping this file's previous objects)`);
      this.files.set(file, { stamp, objects: before ?? new Map() });
      return before ?? new Map();
    }
    const objects = new Map<string, KubeObject>();
    for (const object of parsed) {
      if (!isInputObject(object)) {
        if (!this.unknownKinds.has(object.kind))
          this.opts.onWarning?.(`ignoring kind ${object.kind} (first seen in ${file}): not a kind turnpike reads`);
        this.unknownKinds.add(object.kind);
        continue;
      }
      normalizeNamespace(object, this.opts.defaultNamespace ?? 'default');
      const key = objectKey(object.kind, object.metadata.namespace, object.metadata.name);
      if (objects.has(key)) {
        this.report(`${file}: ${key} is defined twice in this file; ignoring the later copy`, `${file}#${key}`);
        continue;
      }
      const refusal = manifestProblem(object, file, this.opts.validation ?? 'strict');
      if (refusal && this.opts.validation !== 'warn') {
        // As the API server refuses an update: the version accepted before stays.
        const previous = before?.get(key);
        this.raise(`${file}#${key}`, `${refusal} (${previous ? 'keeping its previous version' : 'not loaded'})`);
        if (previous) objects.set(key, previous);
        continue;
      }
      this.fix(`${file}#${key}`, `${file}: ${key} is accepted now`);
      if (refusal) this.opts.onWarning?.(refusal);
      objects.set(key, object);
    }
    this.files.set(file, { stamp, objects });
    return objects;
  }

  /** Emits what changed for one object key, given who defines it now (the first file to). */
  private settle(key: string): void {
    const owners = this.definers.get(key) ?? [];
    const owner = owners[0];
    for (const other of owners.slice(1))
      this.report(`${other}: ${key} is defined twice (first in ${owner}); ignoring this copy`, `${other}#${key}`);
    const object = owner ? this.files.get(owner)?.objects.get(key) : undefined;
    const previous = this.emitted.get(key);
    if (!object) {
      if (!previous) return;
      this.emitted.delete(key);
      const gone = previous.object;
      const namespace = CLUSTER_SCOPED.has(gone.kind) ? undefined : gone.metadata.namespace;
      this.emit(remove(DIRECTORY_SOURCE, gone.kind, namespace, gone.metadata.name));
      return;
    }
    // What the API server adds: a creationTimestamp when first seen, a generation bumped on spec changes.
    // A shallow copy: only metadata is written; parsed objects are never changed after reading, and
    // the store freezes what it holds (a deep clone of every object cost a second at 50k objects).
    const copy = { ...object, metadata: { ...object.metadata } };
    const meta = copy.metadata;
    const specJson = JSON.stringify(copy.spec ?? null);
    meta.creationTimestamp ??= previous?.object.metadata.creationTimestamp ?? this.now();
    meta.generation = previous
      ? previous.specJson === specJson
        ? previous.object.metadata.generation
        : (previous.object.metadata.generation ?? 1) + 1
      : 1;
    const json = JSON.stringify(copy);
    if (previous && previous.json === json) return;
    this.emitted.set(key, { json, specJson, object: copy });
    this.emit(upsert(DIRECTORY_SOURCE, copy));
  }
}

export function directorySource(dir: string, opts: DirectorySourceOptions = {}): Observable<SourceEvent> {
  return new Observable<SourceEvent>((subscriber) => {
    const directory = new ManifestDirectory(dir, opts, (event) => subscriber.next(event));
    // fs events say which files to read again, even when an edit keeps the mtime and size.
    const named = new Set<string>();
    let pending: NodeJS.Timeout | undefined;
    const watchers = new DirectoryWatchers((file) => schedule(file));
    const scan = (batch?: ReadonlySet<string>) => {
      directory.scan(batch);
      if (directory.directories.size) watchers.sync(directory.directories);
    };
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
    scan();
    if (!directory.directories.size) watchers.watchFile(dir);
    subscriber.next(synced(DIRECTORY_SOURCE));

    const poll = setInterval(() => scan(), opts.pollMs ?? 1000);
    return () => {
      clearInterval(poll);
      if (pending) clearTimeout(pending);
      watchers.close();
    };
  });
}
