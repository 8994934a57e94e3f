// The recorder directory's closed segments: gzipped off the event loop (zlib runs on the thread
// pool) and pruned, oldest first, to a byte and an age budget.
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { segmentFiles } from '../event-log-reader.js';

export interface PruneBudget {
  retainBytes: number;
  retainAgeMs: number;
}

/** `file` → `file.gz`, then the plain file is removed; on failure (a full disk) the plain file stays. */
export async function compressSegment(file: string): Promise<void> {
  const tmp = `${file}.gz.tmp`;
  try {
    await pipeline(createReadStream(file), createGzip({ level: 6 }), createWriteStream(tmp, { mode: 0o600 }));
    await rename(tmp, `${file}.gz`);
    await unlink(file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw new Error(`compressing ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/**
 * Removes the oldest closed segments while the directory holds more than `retainBytes`, those last
 * written before `retainAgeMs` ago, and at least `freeAtLeast` of them (to make room after a failed
 * write). The open segment is never removed. Returns what was removed.
 */
export async function pruneSegments(
  dir: string,
  budget: PruneBudget,
  nowMs: number,
  openFile: string | undefined,
  freeAtLeast = 0,
): Promise<string[]> {
  const files = await Promise.all(
    segmentFiles(dir).map(async (path) => {
      const s = await stat(path).catch(() => undefined);
      return { path, size: s?.size ?? 0, mtimeMs: s?.mtimeMs ?? 0 };
    }),
  );
  let total = files.reduce((n, f) => n + f.size, 0);
  const removed: string[] = [];
  for (const f of files) {
    if (f.path === openFile || f.path === `${openFile}.gz`) continue;
    const due = removed.length < freeAtLeast || total > budget.retainBytes || nowMs - f.mtimeMs > budget.retainAgeMs;
    if (!due) break;
    await unlink(f.path).catch(() => undefined);
    total -= f.size;
    removed.push(f.path);
  }
  return removed;
}
