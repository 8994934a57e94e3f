// Reading event logs: a version-1 log (`run --record FILE`), one flight-recorder segment, a
// directory of segments, or a capture (segments concatenated, each a gzip member or plain text).
// Segments are put in order and joined; where one does not follow from the one before (pruned,
// recording paused, the controller restarted), its checkpoint marks a gap and the tools start
// again from it. See docs/event-log.md for the format.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { constants, gunzipSync } from 'node:zlib';
import type { KubeObject } from '@turnpike/api';
import type { WatchEvent } from './events.js';
import {
  LOG_FORMAT,
  LOG_VERSION,
  LogFormatError,
  SEGMENT_LOG_VERSION,
  type LogHeader,
  type OutputRecord,
} from './event-log.js';

/** Why the events before a checkpoint do not lead to it. */
export type GapReason = 'before-log' | 'pruned' | 'paused' | 'restart';

export interface LogGap {
  reason: GapReason;
  /** The last event before the gap (absent: the gap is before the first event the log holds). */
  afterSeq?: number;
  from?: string;
  /** The checkpoint that ends the gap. */
  toSeq: number;
  to: string;
}

/** The whole store at one moment (a segment's first record), Secrets redacted as in events. */
export interface LogCheckpoint {
  /** The index in `events` of the first event after the checkpoint. */
  index: number;
  /** The last event the store includes (0: none yet). */
  seq: number;
  at: string;
  objects: KubeObject[];
  /** Set where the events before do not lead here: a walk over the log starts again from this store. */
  gap?: LogGap;
}

export interface LogSegment {
  /** Where it was read from (file, or file#N for the N-th segment of a capture). */
  source: string;
  run: string;
  segment: number;
  /** The checkpoint's time, then the last record's. */
  from: string;
  to: string;
  firstSeq?: number;
  lastSeq?: number;
  events: number;
  /** It ends with its `end` record (closed by rotation or shutdown), not cut by a crash or a capture. */
  closed: boolean;
}

export interface ParsedLog {
  header: LogHeader;
  events: WatchEvent[];
  outputs: OutputRecord[];
  /** Version 2: every segment's checkpoint, in order (the first is the store before the first event). */
  checkpoints?: LogCheckpoint[];
  segments?: LogSegment[];
  /** What was left out while reading (a segment cut inside its checkpoint), to say, not to fail on. */
  warnings?: string[];
}

interface SegmentText {
  source: string;
  lines: string[];
  /** The first line's number in its file (for messages). */
  firstLine: number;
}

interface ParsedSegment {
  source: string;
  header: LogHeader;
  checkpoint?: { seq: number; at: string; objects: KubeObject[] };
  events: WatchEvent[];
  outputs: OutputRecord[];
  closed: boolean;
  lastAt?: string;
}

const isHeaderLine = (line: string) => line.startsWith(`{"format":"${LOG_FORMAT}"`);

function parseJson(line: string, where: string, lastLine: boolean): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    // A crash (or a capture of the open segment) can leave a torn last line; torn before it is corruption.
    if (lastLine) return undefined;
    throw new LogFormatError(`${where}: not a JSON line`);
  }
}

function checkHeader(v: Record<string, unknown>, where: string): LogHeader {
  if (v.format !== LOG_FORMAT)
    throw new LogFormatError(
      `${where}: not a turnpike event log (format is ${JSON.stringify(v.format)}, want ${LOG_FORMAT})`,
    );
  if (v.version !== LOG_VERSION && v.version !== SEGMENT_LOG_VERSION)
    throw new LogFormatError(
      `${where}: event log version ${String(v.version)} is not supported (want ${LOG_VERSION} or ${SEGMENT_LOG_VERSION})`,
    );
  if (v.version === SEGMENT_LOG_VERSION && (typeof v.run !== 'string' || typeof v.segment !== 'number'))
    throw new LogFormatError(`${where}: a version 2 segment header needs run and segment`);
  return v as unknown as LogHeader;
}

function checkEvent(v: Record<string, unknown>, where: string): WatchEvent {
  if (v.type !== 'upsert' && v.type !== 'delete' && v.type !== 'synced' && v.type !== 'problem')
    throw new LogFormatError(`${where}: unknown record type ${JSON.stringify(v.type)}`);
  if (typeof v.seq !== 'number' || typeof v.at !== 'string' || typeof v.kind !== 'string')
    throw new LogFormatError(`${where}: event needs seq, at and kind`);
  if (v.type === 'upsert' && (typeof v.object !== 'object' || v.object === null))
    throw new LogFormatError(`${where}: upsert event ${v.seq} has no object`);
  return v as unknown as WatchEvent;
}

/** One segment (or a version-1 log); undefined when it was cut inside its checkpoint (said in `warnings`). */
function parseSegment(text: SegmentText, warnings: string[]): ParsedSegment | undefined {
  const { lines, source } = text;
  let last = lines.length - 1;
  while (last >= 0 && !lines[last]!.trim()) last--;
  const where = (i: number) => `${source}:${text.firstLine + i}`;
  const header = checkHeader(parseJson(lines[0]!, where(0), false)!, where(0));
  const seg: ParsedSegment = { source, header, events: [], outputs: [], closed: false };
  let i = 1;
  if (header.version === SEGMENT_LOG_VERSION) {
    const cp = i <= last ? parseJson(lines[i]!, where(i), i === last) : undefined;
    if (!cp || cp.type !== 'checkpoint') {
      if (!cp && i >= last) {
        warnings.push(`${source}: segment ${header.segment} of run ${header.run} ends before its checkpoint; left out`);
        return undefined;
      }
      throw new LogFormatError(`${where(i)}: a version 2 segment's second line is its checkpoint`);
    }
    if (typeof cp.seq !== 'number' || typeof cp.at !== 'string' || typeof cp.objects !== 'number')
      throw new LogFormatError(`${where(i)}: checkpoint needs seq, at and objects`);
    const objects: KubeObject[] = [];
    for (let k = 0; k < cp.objects; k++) {
      const j = i + 1 + k;
      const v = j <= last ? parseJson(lines[j]!, where(j), j === last) : undefined;
      if (!v) {
        warnings.push(
          `${source}: segment ${header.segment} of run ${header.run} was cut inside its checkpoint ` +
            `(${k} of ${cp.objects} objects); left out`,
        );
        return undefined;
      }
      if (v.type !== 'object' || typeof v.object !== 'object' || v.object === null)
        throw new LogFormatError(`${where(j)}: checkpoint object ${k + 1} of ${cp.objects} expected`);
      objects.push(v.object as KubeObject);
    }
    seg.checkpoint = { seq: cp.seq, at: cp.at, objects };
    seg.lastAt = cp.at;
    i += 1 + cp.objects;
  }
  for (; i <= last; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    const v = parseJson(line, where(i), i === last);
    if (!v) break;
    if (v.type === 'output') {
      if (typeof v.seq !== 'number' || typeof v.hash !== 'string')
        throw new LogFormatError(`${where(i)}: output line needs seq and hash`);
      seg.outputs.push(v as unknown as OutputRecord);
      continue;
    }
    if (v.type === 'end') {
      seg.closed = true;
      if (typeof v.at === 'string') seg.lastAt = v.at;
      continue;
    }
    const e = checkEvent(v, where(i));
    // Events are numbered in the order they happened: a number going back means lines were
    // reordered or spliced from another log, and replaying it would not be what happened.
    const prev = seg.events.at(-1);
    if (prev && e.seq <= prev.seq)
      throw new LogFormatError(
        `${where(i)}: event ${e.seq} comes after event ${prev.seq}; event numbers must increase`,
      );
    seg.events.push(e);
    seg.lastAt = e.at;
  }
  return seg;
}

/** Splits text that may hold several segments (a capture) at each header line. */
function splitSegments(text: string | string[], source: string): SegmentText[] {
  const lines = typeof text === 'string' ? text.split('\n') : text;
  const out: SegmentText[] = [];
  let start = -1;
  for (let i = 0; i <= lines.length; i++) {
    if (i < lines.length && !isHeaderLine(lines[i]!)) continue;
    if (start >= 0) out.push({ source, lines: lines.slice(start, i), firstLine: start + 1 });
    start = i;
  }
  if (!out.length) {
    const first = lines.findIndex((l) => l.trim());
    if (first < 0) throw new LogFormatError(`${source}: empty event log`);
    // Not a header: checkHeader names what it is instead.
    checkHeader(parseJson(lines[first]!, `${source}:${first + 1}`, false)!, `${source}:${first + 1}`);
  } else if (lines.slice(0, out[0]!.firstLine - 1).some((l) => l.trim())) {
    throw new LogFormatError(`${source}:1: not a turnpike event log (it does not start with a header line)`);
  }
  return out;
}

function gapReason(prev: ParsedSegment, next: ParsedSegment): GapReason | undefined {
  if (prev.header.run !== next.header.run) return 'restart';
  const lastSeq = prev.events.at(-1)?.seq ?? prev.checkpoint?.seq ?? 0;
  if (next.checkpoint && next.checkpoint.seq === lastSeq && next.header.segment === (prev.header.segment ?? 0) + 1)
    return undefined;
  return next.checkpoint && next.checkpoint.seq > lastSeq && prev.header.segment! + 1 === next.header.segment
    ? 'paused'
    : 'pruned';
}

/** Joins segments (and a version-1 log, which must be alone) into one log. */
export function joinSegments(texts: SegmentText[], warnings: string[] = []): ParsedLog {
  const parsed = texts.map((t) => parseSegment(t, warnings)).filter((s): s is ParsedSegment => s !== undefined);
  if (!parsed.length) throw new LogFormatError(`${texts[0]?.source ?? 'log'}: no segment could be read`);
  if (parsed.some((s) => s.header.version === LOG_VERSION)) {
    if (parsed.length > 1)
      throw new LogFormatError(`${texts[0]!.source}: a version 1 event log cannot be joined with other logs`);
    const only = parsed[0]!;
    return {
      header: only.header,
      events: only.events,
      outputs: only.outputs,
      ...(warnings.length ? { warnings } : {}),
    };
  }
  // In the order they were written: runs by their first checkpoint's time, segments by number.
  const runStart = new Map<string, string>();
  for (const s of parsed) {
    const at = runStart.get(s.header.run!);
    if (at === undefined || s.header.createdAt < at) runStart.set(s.header.run!, s.header.createdAt);
  }
  const startOf = (s: ParsedSegment) => `${runStart.get(s.header.run!)}\0${s.header.run}`;
  parsed.sort((a, b) =>
    startOf(a) === startOf(b) ? a.header.segment! - b.header.segment! : startOf(a) < startOf(b) ? -1 : 1,
  );
  const events: WatchEvent[] = [];
  const outputs: OutputRecord[] = [];
  const checkpoints: LogCheckpoint[] = [];
  const segments: LogSegment[] = [];
  parsed.forEach((seg, k) => {
    const cp = seg.checkpoint!;
    const prev = parsed[k - 1];
    const reason = prev ? gapReason(prev, seg) : cp.seq > 0 || cp.objects.length ? 'before-log' : undefined;
    const checkpoint: LogCheckpoint = { index: events.length, seq: cp.seq, at: cp.at, objects: cp.objects };
    if (reason) {
      const lastSeq = events.at(-1)?.seq;
      checkpoint.gap = {
        reason,
        ...(lastSeq !== undefined ? { afterSeq: lastSeq } : {}),
        ...(prev?.lastAt !== undefined ? { from: prev.lastAt } : {}),
        toSeq: cp.seq,
        to: cp.at,
      };
    }
    const prevSeq = events.at(-1)?.seq;
    const firstSeq = seg.events[0]?.seq;
    if (prevSeq !== undefined && firstSeq !== undefined && firstSeq <= prevSeq)
      throw new LogFormatError(
        `${seg.source}: segment ${seg.header.segment} of run ${seg.header.run} starts at event ` +
          `${firstSeq}, after event ${prevSeq}; event numbers must increase (segments of two controllers mixed?)`,
      );
    checkpoints.push(checkpoint);
    segments.push({
      source: seg.source,
      run: seg.header.run!,
      segment: seg.header.segment!,
      from: cp.at,
      to: seg.lastAt ?? cp.at,
      ...(firstSeq !== undefined ? { firstSeq, lastSeq: seg.events.at(-1)!.seq } : {}),
      events: seg.events.length,
      closed: seg.closed,
    });
    events.push(...seg.events);
    outputs.push(...seg.outputs);
  });
  return {
    header: parsed[0]!.header,
    events,
    outputs: dedupeOutputs(outputs),
    checkpoints,
    segments,
    ...(warnings.length ? { warnings } : {}),
  };
}

/** An output written into the next segment (its hash came after the rotation) is kept once, in seq order. */
function dedupeOutputs(outputs: OutputRecord[]): OutputRecord[] {
  const bySeq = new Map<number, OutputRecord>();
  for (const o of outputs) bySeq.set(o.seq, o);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

export function parseEventLog(text: string, path = 'log'): ParsedLog {
  return joinSegments(splitSegments(text, path));
}

/**
 * The lines of a file that may be gzip (one member or several: a capture; a cut-off end keeps what
 * came). Split from the bytes, line by line: a capture's text can be larger than a string may be.
 */
export function readLogLines(path: string): string[] {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (e) {
    throw new LogFormatError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (buf[0] === 0x1f && buf[1] === 0x8b) {
    try {
      buf = gunzipSync(buf, { finishFlush: constants.Z_SYNC_FLUSH });
    } catch (e) {
      throw new LogFormatError(`${path}: not a readable gzip file (${(e as Error).message})`);
    }
  }
  const lines: string[] = [];
  for (let start = 0; start <= buf.length;) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    lines.push(buf.toString('utf8', start, end));
    start = end + 1;
  }
  return lines;
}

/** The segment files of a recorder directory, oldest first (their names sort by time). */
export function segmentFiles(dir: string): string[] {
  const names = new Set(readdirSync(dir).filter((f) => /^segment-.*\.ndjson(\.gz)?$/.test(f)));
  // Caught between compressing and removing the plain file: the two are the same segment.
  return [...names]
    .filter((f) => !names.has(`${f}.gz`))
    .sort()
    .map((f) => join(dir, f));
}

/** The last event number the newest segment of a recorder directory holds (0 when there is none). */
export function lastRecordedSeq(dir: string): number {
  let files: string[];
  try {
    files = segmentFiles(dir);
  } catch {
    return 0;
  }
  for (const f of files.reverse()) {
    try {
      const log = joinSegments(splitSegments(readLogLines(f), f));
      const cp = log.checkpoints?.at(-1)?.seq ?? 0;
      return Math.max(cp, log.events.at(-1)?.seq ?? 0, log.outputs.at(-1)?.seq ?? 0);
    } catch {
      // Unreadable (cut in its checkpoint): the one before it.
    }
  }
  return 0;
}

/** A log file (version 1 or 2), a capture, or a recorder directory. */
export function readEventLog(path: string): ParsedLog {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch (e) {
    throw new LogFormatError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (!isDir) return joinSegments(splitSegments(readLogLines(path), path));
  const files = segmentFiles(path);
  if (!files.length) throw new LogFormatError(`${path}: no segment files (segment-*.ndjson[.gz]) in the directory`);
  const warnings: string[] = [];
  const texts: SegmentText[] = [];
  for (const f of files) {
    const lines = readLogLines(f);
    if (!lines.some((l) => l.trim())) continue; // a segment just opened, nothing written yet
    texts.push(...splitSegments(lines, f));
  }
  return joinSegments(texts, warnings);
}
