// A capture: the recorder's segments from a moment on, written as one stream of gzip members (one
// per segment; `cat` of segment files is a capture too). Closed segments go as they are stored; the
// open one (and any not compressed yet) is gzipped as far as it is written, so a capture taken while
// the controller records ends in a segment that may be cut mid-line, which every reader tolerates.
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Writable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { segmentFiles } from '../event-log-reader.js';

/** When a segment file began, from its name (segment-20261206T140203123Z-run-000001.ndjson[.gz]). */
export function segmentStart(file: string): number {
  const m = /^segment-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-/.exec(basename(file));
  if (!m) return 0;
  const [, y, mo, d, h, mi, s, ms] = m;
  return Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
}

export interface CaptureInfo {
  segments: string[];
  bytes: number;
}

/** The segments that cover `sinceMs` onwards: the last one begun at or before it, and every later one. */
export function segmentsSince(dir: string, sinceMs: number): string[] {
  const files = segmentFiles(dir);
  let first = 0;
  files.forEach((f, i) => {
    if (segmentStart(f) <= sinceMs) first = i;
  });
  return files.slice(first);
}

export interface SegmentListing {
  file: string;
  startedAt: string;
  bytes: number;
  compressed: boolean;
}

export async function listSegments(dir: string): Promise<SegmentListing[]> {
  const out: SegmentListing[] = [];
  for (const f of segmentFiles(dir)) {
    const s = await stat(f).catch(() => undefined);
    if (!s) continue;
    out.push({
      file: basename(f),
      startedAt: new Date(segmentStart(f)).toISOString(),
      bytes: s.size,
      compressed: f.endsWith('.gz'),
    });
  }
  return out;
}

/** Writes the capture to `out` (not ended); a segment pruned or compressed meanwhile is read as it now is. */
export async function writeCapture(dir: string, sinceMs: number, out: Writable): Promise<CaptureInfo> {
  const info: CaptureInfo = { segments: [], bytes: 0 };
  for (const file of segmentsSince(dir, sinceMs)) {
    for (const candidate of file.endsWith('.gz') ? [file] : [file, `${file}.gz`]) {
      const s = await stat(candidate).catch(() => undefined);
      if (!s) continue;
      if (!s.size) break; // just opened: nothing written yet
      // As far as it is written now: the open segment keeps growing behind the read.
      const read = createReadStream(candidate, { start: 0, end: s.size - 1 });
      const source = candidate.endsWith('.gz') ? read : read.pipe(createGzip({ level: 1 }));
      try {
        // Written by hand: a pipeline per segment would add its listeners to `out` each time.
        for await (const chunk of source as AsyncIterable<Buffer>) {
          info.bytes += chunk.length;
          if (!out.write(chunk)) await once(out, 'drain');
        }
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw e;
      }
      info.segments.push(basename(candidate));
      break;
    }
  }
  return info;
}
