// Reads many manifest files at once on worker threads. Parsing YAML and the API server's checks (schema
// and CEL rules) are most of a cold start on a large directory (10k routes: 3.5 s of CPU); spread over
// the machine's cores they take a fraction of that, and the main thread only receives the objects.
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
  /** Default: the machine's cores, at most 4. */
  workers?: number;
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
 * Reads the files on worker threads, largest first, each worker taking the next file when it is done.
 * A worker that fails leaves its file to the main thread, so every file gets a reading. The workers
 * end with the call.
 */
export async function readManifestFiles(
  files: readonly { file: string; size: number }[],
  options: ManifestReadOptions,
  pool: ManifestReadPoolOptions = {},
): Promise<Map<string, ManifestFileReading>> {
  const readings = new Map<string, ManifestFileReading>();
  const queue = [...files].sort((a, b) => b.size - a.size).map((f) => f.file);
  const count = Math.max(1, Math.min(pool.workers ?? Math.min(availableParallelism(), 4), queue.length));
  const workerUrl = pool.workerUrl ?? MANIFEST_READ_WORKER;
  await Promise.all(
    Array.from({ length: count }, async () => {
      const worker = new Worker(workerUrl, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
      // A worker's failure is handled where a read waits on it; between reads it must not be uncaught.
      worker.on('error', () => {});
      let failed = false;
      try {
        for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
          const at = file;
          const reading = failed
            ? readManifestFile(at, options)
            : await readOn(worker, at, options).catch(() => {
                failed = true;
                return readManifestFile(at, options);
              });
          readings.set(at, reading);
        }
      } finally {
        await worker.terminate();
      }
    }),
  );
  return readings;
}

function readOn(worker: Worker, file: string, options: ManifestReadOptions): Promise<ManifestFileReading> {
  return new Promise((resolve, reject) => {
    const done = () => {
      worker.off('message', onMessage);
      worker.off('error', reject);
      worker.off('exit', onExit);
    };
    const onMessage = (m: { file: string; reading: ManifestFileReading }) => {
      done();
      resolve(m.reading);
    };
    const onExit = (code: number) => {
      done();
      reject(new Error(`manifest read worker exited (${code})`));
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
    worker.once('exit', onExit);
    worker.postMessage({ file, options } satisfies ManifestReadRequest);
  });
}
