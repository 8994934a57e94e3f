// The embedded default source: a directory of YAML manifests. fs events (a watcher per directory) name the files
// that changed; a periodic rescan compares each file's mtime and size as a safety net. Only files
// that changed are read and parsed again, and only the objects they define are compared and
// emitted, so an idle controller does (almost) nothing and one edit costs one file.
// A file that fails to parse keeps its previous objects and is reported, so one typo never deletes
// a Gateway. An object the API server would refuse is refused the same way (an update keeps the
// previous version), unless validation says otherwise. An object defined twice keeps the copy seen
// first. Objects get what an API server would give them: a creationTimestamp when first seen and a
// generation bumped on spec changes. A file that had objects and is found empty (a save that truncates
// it, then writes it) keeps its objects until it is written again or `emptiedFileHoldMs` passes with it
// still empty; only then are its objects deleted, so a rewrite never shows as a delete and a create.
import { CLUSTER_SCOPED, isInputObject, objectKey, type KubeObject } from '@turnpike/api';
import { Observable } from 'rxjs';
import { problem, remove, synced, upsert, type SourceEvent } from '../events.js';
import { DirectoryWatchers } from './directory-watch.js';
import { DEFAULT_QUIET_MS } from '../holdoff.js';
import { listManifestTree, type FileStamp, type ManifestValidation } from '../manifests.js';
import { prepareManifestChecks } from '../schema/manifest-validation.js';
import { deepFreeze } from '../store.js';
import { readManifestFile, type ManifestFileReading, type ManifestReadOptions } from './manifest-file.js';
import { manifestReadPoolAvailable, readManifestFiles, type ManifestReadPoolOptions } from './manifest-read-pool.js';

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
  /**
   * How long a file found empty (0 bytes) keeps the objects it had, waiting to be written again: a
   * save that truncates the file and then writes it must not delete and re-create its objects. The
   * quiet period of the holdoff (`--quiet-ms`) by default; 0 deletes at once.
   */
  emptiedFileHoldMs?: number;
  /** A file was found empty and keeps its objects for `emptiedFileHoldMs` (for tests and logs). */
  onHold?: (file: string) => void;
  /**
   * The first scan reads its files on worker threads when they hold `minBytes` or more together and the
   * compiled worker is present (not when running from TypeScript sources); `false`: on the main thread.
   */
  parallelRead?: false | (ManifestReadPoolOptions & { minBytes?: number });
}

/** Below this, starting workers costs more than it saves (a worker loads its modules in about 0.2 s). */
export const PARALLEL_READ_MIN_BYTES = 2 * 1024 * 1024;

/**
 * What was emitted for an object, to tell a real change from a re-read. Its JSON is worked out when a
 * re-read needs it, not when the object is first seen: a cold start of 50k objects skips 100k stringifies.
 */
interface Emitted {
  object: KubeObject;
  json?: string;
  specJson?: string;
}

function emittedJson(e: Emitted): { json: string; specJson: string } {
  e.json ??= JSON.stringify(e.object);
  e.specJson ??= JSON.stringify(e.object.spec ?? null);
  return { json: e.json, specJson: e.specJson };
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
  private readonly holdMs: number;
  /** Files found empty that keep their objects: the number of their wait, or true once it is over. */
  private readonly held = new Map<string, number | true>();
  private holds = 0;

  constructor(
    private readonly dir: string,
    private readonly opts: DirectorySourceOptions,
    private readonly emit: (event: SourceEvent) => void,
    /** Starts wait `id` of a file found empty; `holdOver(file, id)` and a scan naming it are to follow. */
    private readonly hold: (file: string, id: number) => void = () => {},
  ) {
    this.now = opts.now ?? (() => new Date().toISOString());
    this.holdMs = opts.emptiedFileHoldMs ?? DEFAULT_QUIET_MS;
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

  /** Wait `id` of a file found empty is over: the next reading of it, if it is still empty, deletes. */
  holdOver(file: string, id: number): void {
    if (this.held.get(file) === id) this.held.set(file, true);
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
      const before = known?.objects;
      const after = this.read(file, stamp);
      const define = (key: string) => {
        const definers = this.definers.get(key);
        // Most keys are defined by one file, and at a first scan by none yet: no arrays to filter then.
        if (!definers) {
          if (after.has(key)) this.definers.set(key, [file]);
        } else {
          const owners = definers.filter((f) => f !== file || after.has(key));
          if (after.has(key) && !owners.includes(file)) owners.push(file);
          this.setDefiners(key, owners);
        }
        affected.add(key);
      };
      for (const key of after.keys()) define(key);
      for (const key of before?.keys() ?? []) if (!after.has(key)) define(key);
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
      this.held.delete(file);
      this.reported.delete(file);
      for (const key of [...this.open.keys()])
        if (key === file || key.startsWith(`${file}#`)) this.fix(key, `${file}: removed, and its problem with it`);
    }
    // A reading made ahead for a file this scan did not read (gone since it was listed) is of no use now.
    this.preread.clear();
    // Objects first seen in one scan are created at one moment (the clock read once, not per object).
    let now: string | undefined;
    const created = () => (now ??= this.now());
    for (const key of [...affected].sort()) this.settle(key, created);
  }

  private setDefiners(key: string, owners: string[]): void {
    if (owners.length) this.definers.set(key, owners);
    else this.definers.delete(key);
  }

  /** Readings made ahead of a scan (on workers), by file, used when the file's stamp has not changed since. */
  private readonly preread = new Map<string, { stamp: FileStamp; reading: ManifestFileReading }>();

  /** The files a first scan would read, with their stamps; undefined when the tree cannot be listed. */
  listFiles(): Map<string, FileStamp> | undefined {
    try {
      return listManifestTree(this.dir, () => {});
    } catch {
      return undefined;
    }
  }

  preload(stamps: ReadonlyMap<string, FileStamp>, readings: ReadonlyMap<string, ManifestFileReading>): void {
    for (const [file, reading] of readings) {
      const stamp = stamps.get(file);
      if (stamp) this.preread.set(file, { stamp, reading });
    }
  }

  readOptions(): ManifestReadOptions {
    return { defaultNamespace: this.opts.defaultNamespace ?? 'default', validation: this.opts.validation ?? 'strict' };
  }

  /** Reads one file; on a parse error keeps what it had. Returns the objects it defines now. */
  private read(file: string, stamp: FileStamp): Map<string, KubeObject> {
    const before = this.files.get(file)?.objects;
    const ahead = this.preread.get(file);
    this.preread.delete(file);
    const reading =
      ahead && ahead.stamp.mtimeMs === stamp.mtimeMs && ahead.stamp.size === stamp.size
        ? ahead.reading
        : readManifestFile(file, this.readOptions());
    if ('error' in reading) {
      this.raise(file, `${reading.error} (keeping this file's previous objects)`);
      this.files.set(file, { stamp, objects: before ?? new Map() });
      return before ?? new Map();
    }
    if (this.open.size) this.fix(file, `${file}: parses again`);
    if (stamp.size === 0 && reading.objects.length === 0 && before?.size && this.holdMs > 0) {
      // Truncated, and perhaps being written: keep what it had until it is, or until the hold is over.
      const wait = this.held.get(file);
      if (wait === undefined) {
        const id = ++this.holds;
        this.held.set(file, id);
        this.hold(file, id);
        this.opts.onHold?.(file);
      }
      if (wait !== true) {
        this.files.set(file, { stamp, objects: before });
        return before;
      }
    }
    this.held.delete(file);
    const objects = new Map<string, KubeObject>();
    for (const { object, refusal } of reading.objects) {
      if (!isInputObject(object)) {
        if (!this.unknownKinds.has(object.kind))
          this.opts.onWarning?.(`ignoring kind ${object.kind} (first seen in ${file}): not a kind turnpike reads`);
        this.unknownKinds.add(object.kind);
        continue;
      }
      const key = objectKey(object.kind, object.metadata.namespace, object.metadata.name);
      if (objects.has(key)) {
        this.report(`${file}: ${key} is defined twice in this file; ignoring the later copy`, `${file}#${key}`);
        continue;
      }
      if (refusal && this.opts.validation !== 'warn') {
        // As the API server refuses an update: the version accepted before stays.
        const previous = before?.get(key);
        this.raise(`${file}#${key}`, `${refusal} (${previous ? 'keeping its previous version' : 'not loaded'})`);
        if (previous) objects.set(key, previous);
        continue;
      }
      // (Only when some problem is open: the key and message are not built for each of 50 000 objects.)
      if (this.open.size) this.fix(`${file}#${key}`, `${file}: ${key} is accepted now`);
      if (refusal) this.opts.onWarning?.(refusal);
      objects.set(key, object);
    }
    this.files.set(file, { stamp, objects });
    return objects;
  }

  /** Emits what changed for one object key, given who defines it now (the first file to). */
  private settle(key: string, created: () => string): void {
    const owners = this.definers.get(key) ?? [];
    const owner = owners[0];
    for (let i = 1; i < owners.length; i++)
      this.report(
        `${owners[i]}: ${key} is defined twice (first in ${owner}); ignoring this copy`,
        `${owners[i]}#${key}`,
      );
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
    meta.creationTimestamp ??= previous?.object.metadata.creationTimestamp ?? created();
    if (!previous) {
      meta.generation = 1;
      this.emitted.set(key, { object: copy });
      this.emit(upsert(DIRECTORY_SOURCE, copy));
      return;
    }
    const before = emittedJson(previous);
    const specJson = JSON.stringify(copy.spec ?? null);
    meta.generation =
      before.specJson === specJson
        ? previous.object.metadata.generation
        : (previous.object.metadata.generation ?? 1) + 1;
    const json = JSON.stringify(copy);
    if (before.json === json) return;
    this.emitted.set(key, { json, specJson, object: copy });
    this.emit(upsert(DIRECTORY_SOURCE, copy));
  }
}

export function directorySource(dir: string, opts: DirectorySourceOptions = {}): Observable<SourceEvent> {
  return new Observable<SourceEvent>((subscriber) => {
    // A file found empty is read again when its hold is over, whether or not it changed since.
    const holds = new Set<NodeJS.Timeout>();
    const hold = (file: string, id: number) => {
      const timer = setTimeout(() => {
        holds.delete(timer);
        directory.holdOver(file, id);
        schedule(file);
      }, opts.emptiedFileHoldMs ?? DEFAULT_QUIET_MS);
      holds.add(timer);
    };
    const directory = new ManifestDirectory(dir, opts, (event) => subscriber.next(event), hold);
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
    let poll: NodeJS.Timeout | undefined;
    let preparing: (() => void) | undefined;
    let closed = false;
    const start = () => {
      if (closed) return;
      scan();
      if (!directory.directories.size) watchers.watchFile(dir);
      subscriber.next(synced(DIRECTORY_SOURCE));
      poll = setInterval(() => scan(), opts.pollMs ?? 1000);
    };
    const ahead = filesToReadAhead(directory, opts.parallelRead);
    if (ahead) {
      readManifestFiles(
        [...ahead].map(([file, stamp]) => ({ file, size: stamp.size })),
        directory.readOptions(),
        {
          ...opts.parallelRead,
          // Frozen as each file comes in, while the other files are read, rather than when the store takes
          // the objects after the last file (0.2 s of the way to the first translation at 50 000 objects).
          // Nothing changes a parsed object after reading: what the store adds goes on a copy (settle).
          onReading: (_file, reading) => {
            if ('objects' in reading) for (const { object } of reading.objects) deepFreeze(object);
          },
        },
      ).then(
        (readings) => {
          directory.preload(ahead, readings);
          start();
          // The main thread checks the files edited from now on: it gets the rest of its checks ready, a
          // rule at a time, after the first scan (not while it and the workers read).
          if (!closed && directory.readOptions().validation !== 'ignore') preparing = prepareManifestChecks().stop;
        },
        // Cannot start workers: the scan reads each file itself.
        () => start(),
      );
    } else start();
    return () => {
      closed = true;
      preparing?.();
      if (poll) clearInterval(poll);
      if (pending) clearTimeout(pending);
      for (const timer of holds) clearTimeout(timer);
      watchers.close();
    };
  });
}

/** The files of a first scan worth reading on workers, if they are many and large enough together. */
function filesToReadAhead(
  directory: ManifestDirectory,
  parallelRead: DirectorySourceOptions['parallelRead'],
): Map<string, FileStamp> | undefined {
  if (parallelRead === false || !manifestReadPoolAvailable(parallelRead?.workerUrl)) return undefined;
  const files = directory.listFiles();
  if (!files || files.size < 2) return undefined;
  let bytes = 0;
  for (const stamp of files.values()) bytes += stamp.size;
  return bytes >= (parallelRead?.minBytes ?? PARALLEL_READ_MIN_BYTES) ? files : undefined;
}
