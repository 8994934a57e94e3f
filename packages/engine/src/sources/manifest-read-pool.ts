// Reads many manifest files at once on worker threads and the main thread. Parsing YAML and the API
// server's checks (schema and CEL rules) are most of a cold start on a large directory (10k routes: 4 s
// of CPU); spread over the machine's cores they take a fraction of that. What a worker reads costs the
// main thread its copy (structured clone: 0.5 s for all of 10k routes), so the main thread reads too,
// a file per turn of its event loop, beside one worker per other core (10k routes on 2 cores: 2 workers
// alone 3.4-3.65 s, as long as the main thread alone; one worker and the main thread 3.0 s).
// Used for the first scan of a directory; later scans read the few files that changed, inline.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { readManifestFile, type ManifestFileReading, type ManifestReadOptions } from './manifest-file.js';
import type { ManifestReadRequest } from './manifest-read-worker.js';

/** The compiled worker, beside this module; absent when this module runs from its TypeScript source. */
export const MANIFEST_READ_WORKER = new URL('./manifest-read-worker.js', import.meta.url);

export interface ManifestReadPoolOptions {
  /** Each reading as it comes in (on the main thread), while other files are still being read. */
  onReading?: (file: string, reading: ManifestFileReading) => void;
  /** Default: one per core but the main thread's, at most 3. */
  workers?: number;
  /** Does the main thread read files too (default: yes)? */
  mainThread?: boolean;
  workerUrl?: URL;
}

/**
 * A parsed file is kept whole until it is sent: with V8's default young generation most of it is
 * copied by several scavenges first. A larger one: 10k routes on two workers, 3.5 -> 3.0 s.
 */
const YOUNG_GENERATION_MB = 48;

/** Can files be read on workers here (is the compiled worker present)? */
export function manifestReadPoolAvailable(workerUrl: URL = MANIFEST_READ_WORKER): boolean {
  return workerUrl.protocol === 'file:' && existsSync(fileURLToPath(workerUrl));
}

/**
 * Reads the files on worker threads and the main thread, largest first, each taking the next file when
 * it is done. A worker that fails leaves its file to the main thread, so every file gets a reading. The
 * workers end with the call.
 */
export async function readManifestFiles(
  files: readonly { file: string; size: number }[],
  options: ManifestReadOptions,
  pool: ManifestReadPoolOptions = {},
): Promise<Map<string, ManifestFileReading>> {
  const taken = new Map<string, ManifestFileReading>();
  const readings = {
    set(file: string, reading: ManifestFileReading) {
      taken.set(file, reading);
      pool.onReading?.(file, reading);
    },
  };
  const queue = [...files].sort((a, b) => b.size - a.size).map((f) => f.file);
  const mainThread = pool.mainThread ?? true;
  const wanted = pool.workers ?? Math.min(availableParallelism() - (mainThread ? 1 : 0), 3);
  const count = Math.max(mainThread ? 0 : 1, Math.min(wanted, queue.length));
  const workerUrl = pool.workerUrl ?? MANIFEST_READ_WORKER;
  // A file per turn: the event loop (the xDS server, the workers' messages) keeps going meanwhile.
  const onMainThread = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      readings.set(file, readManifestFile(file, options));
      await new Promise((next) => setImmediate(next));
    }
  };
  await Promise.all([
    ...Array.from({ length: count }, () => readOnWorker(workerUrl, queue, options, readings)),
    ...(mainThread ? [onMainThread()] : []),
  ]);
  // Left by workers that failed, with no main thread reading.
  for (const file of queue.splice(0)) readings.set(file, readManifestFile(file, options));
  return taken;
}

/**
 * Files sent to a worker ahead of its answers: while the main thread reads a file of its own, a worker's
 * answer waits for it, and the worker must have its next file meanwhile.
 */
const IN_FLIGHT = 2;

/** One worker taking files from the queue until it is empty; what it held when it failed is read here. */
async function readOnWorker(
  workerUrl: URL,
  queue: string[],
  options: ManifestReadOptions,
  readings: { set(file: string, reading: ManifestFileReading): void },
): Promise<void> {
  const worker = new Worker(workerUrl, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
  const sent = new Set<string>();
  try {
    await new Promise<void>((done) => {
      const send = () => {
        while (sent.size < IN_FLIGHT) {
          const file = queue.shift();
          if (file === undefined) break;
          sent.add(file);
          worker.postMessage({ file, options } satisfies ManifestReadRequest);
        }
        if (!sent.size) done();
      };
      const fail = () => {
        for (const file of sent) readings.set(file, readManifestFile(file, options));
        sent.clear();
        done();
      };
      worker.on('message', (m: { file: string; reading: ManifestFileReading }) => {
        if (!sent.delete(m.file)) return;
        readings.set(m.file, m.reading);
        send();
      });
      worker.on('error', fail);
      worker.on('exit', fail);
      send();
    });
  } finally {
    worker.removeAllListeners('exit');
    worker.on('error', () => {});
    await worker.terminate();
  }
}
