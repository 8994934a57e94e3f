// The flight recorder: the event log as bounded segments in a directory. Each segment begins with a
// checkpoint (the whole store, Secrets redacted) so it replays on its own; segments rotate by size
// and age, closed ones are gzipped off the event loop, and the oldest are pruned to keep the total
// under a byte and an age budget. Recording must never cost the controller its work: a write that
// fails (a full disk) closes the segment, frees the oldest one and pauses recording with a warning;
// it starts again later with a fresh checkpoint, and the gap shows in every tool. The checkpoint of
// a large store is written in slices between events (the engine's events wait in memory meanwhile,
// up to a bound).
import { randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { basename, join } from 'node:path';
import type { KubeObject } from '@turnpike/api';
import type { WatchEvent } from '../events.js';
import { SEGMENT_LOG_VERSION, LOG_FORMAT, type LogHeader } from '../event-log.js';
import type { LaterHash } from '../output-hash.js';
import { LogRedaction } from '../secret-redaction.js';
import { OrderedOutputs } from '../output-lines.js';
import { compressSegment, pruneSegments, type PruneBudget } from './segment-files.js';

/** The few file operations the recorder makes synchronously; a test replaces them to make writes fail. */
export interface RecorderFs {
  openSync(path: string, flags: string, mode: number): number;
  writeSync(fd: number, text: string): number;
  closeSync(fd: number): void;
}

export interface FlightRecorderOptions {
  dir: string;
  /** The controller's settings every segment header repeats (a segment replays alone). */
  header: Omit<LogHeader, 'format' | 'version' | 'run' | 'segment' | 'createdAt'>;
  /** Rotate once the open segment holds this much (default 32 MiB). */
  segmentBytes?: number;
  /** Rotate once the open segment is this old (default 1 h). */
  segmentAgeMs?: number;
  /** Keep at most this much in closed segments and the open one (default 512 MiB). */
  retainBytes?: number;
  /** Remove closed segments older than this (default 24 h). */
  retainAgeMs?: number;
  /** Gzip closed segments (default true). */
  compress?: boolean;
  /** Events waiting while a checkpoint is written, at most (default 32 MiB); beyond, the segment is given up. */
  maxPendingBytes?: number;
  /** Checkpoint text written per turn of the event loop (default 1 MiB). */
  checkpointSliceBytes?: number;
  /** The last event number an earlier run recorded here (lastRecordedSeq): the first checkpoint's. */
  firstSeq?: number;
  now?: () => number;
  fs?: RecorderFs;
  /** Told when recording stops or starts again, and of files it could not compress or prune. */
  log?: (level: 'info' | 'warn', message: string) => void;
}

export interface FlightRecorderStats {
  recording: boolean;
  bytesWritten: number;
  segmentsOpened: number;
  segmentsPruned: number;
  writeFailures: number;
  /** Milliseconds the last checkpoint took from start to its last object (written in slices). */
  lastCheckpointMs: number;
  lastCheckpointObjects: number;
  lastCheckpointBytes: number;
}

type State = 'recording' | 'checkpointing' | 'paused' | 'closed';

const MiB = 1024 * 1024;

function timeName(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace('.', '');
}

function objectKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

export class FlightRecorder {
  readonly run = randomBytes(4).toString('hex');
  readonly stats: FlightRecorderStats = {
    recording: false,
    bytesWritten: 0,
    segmentsOpened: 0,
    segmentsPruned: 0,
    writeFailures: 0,
    lastCheckpointMs: 0,
    lastCheckpointObjects: 0,
    lastCheckpointBytes: 0,
  };
  /** The store as the log has it (Secrets redacted): what the next checkpoint holds. */
  private readonly store = new Map<string, KubeObject>();
  private readonly redaction = new LogRedaction();
  private lastSeq = 0;
  private lastAt = '';
  private state: State = 'paused';
  private fd: number | undefined;
  private file: string | undefined;
  private segment = -1;
  private segmentStart = 0;
  private segmentBytesWritten = 0;
  private pending: string[] = [];
  private pendingBytes = 0;
  private resumeAt = 0;
  private backoffMs = 5_000;
  private readonly outputs = new OrderedOutputs((record) => this.writeLine(JSON.stringify(record)));
  private work: Promise<void> = Promise.resolve();
  private readonly fs: RecorderFs;
  private readonly now: () => number;
  private readonly budget: PruneBudget;
  private readonly segmentBytes: number;
  private readonly segmentAgeMs: number;
  private readonly maxPendingBytes: number;
  private readonly sliceBytes: number;
  private readonly ageTimer: NodeJS.Timeout;

  constructor(private readonly o: FlightRecorderOptions) {
    this.fs = o.fs ?? nodeFs;
    this.now = o.now ?? Date.now;
    this.segmentBytes = o.segmentBytes ?? 32 * MiB;
    this.segmentAgeMs = o.segmentAgeMs ?? 3_600_000;
    this.budget = { retainBytes: o.retainBytes ?? 512 * MiB, retainAgeMs: o.retainAgeMs ?? 86_400_000 };
    this.maxPendingBytes = o.maxPendingBytes ?? 32 * MiB;
    this.sliceBytes = o.checkpointSliceBytes ?? MiB;
    this.lastSeq = o.firstSeq ?? 0;
    nodeFs.mkdirSync(o.dir, { recursive: true, mode: 0o700 });
    // Segments an earlier run left open (a crash, a container restart) are closed evidence now.
    if (o.compress !== false) for (const f of this.plainSegments()) this.enqueue(() => this.compress(f));
    this.enqueue(() => this.prune());
    this.startSegment();
    // An idle controller still closes a segment when it is due, so its age bounds what a capture waits for.
    this.ageTimer = setInterval(() => this.rotateIfDue(), Math.min(60_000, Math.max(1_000, this.segmentAgeMs / 4)));
    this.ageTimer.unref();
  }

  /** The segment being written (a capture reads it too). */
  get openSegment(): string | undefined {
    return this.file;
  }

  event(e: WatchEvent): void {
    if (this.state === 'closed') return;
    // Resumed before the store takes the event: the checkpoint is the store the event applies to.
    if (this.state === 'paused' && this.now() >= this.resumeAt) this.startSegment();
    // The store keeps the DigestKey too: every checkpoint carries the key its Secrets were digested with.
    const logged = this.redaction.event(e);
    if (e.name && (e.type === 'upsert' || e.type === 'delete')) {
      const key = objectKey(e.kind, e.namespace, e.name);
      if (e.type === 'delete') this.store.delete(key);
      else if (logged.object) this.store.set(key, logged.object);
    }
    this.lastSeq = e.seq;
    this.lastAt = e.at;
    this.writeLine(JSON.stringify(logged));
    this.rotateIfDue();
  }

  /** As EventLogWriter.output: a hash to come is written once known, after the events meanwhile. */
  output(seq: number, hash: string | LaterHash): void {
    if (this.state === 'closed') return;
    this.outputs.add(seq, hash);
  }

  /** Finishes the open segment (its checkpoint too) and waits for compression and pruning already begun. */
  close(): void {
    if (this.state === 'closed') return;
    clearInterval(this.ageTimer);
    this.outputs.settleAll();
    if (this.state === 'checkpointing') this.finishCheckpointNow();
    this.endSegment();
    this.state = 'closed';
    this.stats.recording = false;
  }

  /** Compression and pruning begun so far are done (tests, shutdown). */
  idle(): Promise<void> {
    return this.work;
  }

  private writeLine(line: string): void {
    const text = `${line}\n`;
    if (this.state === 'checkpointing') {
      this.pending.push(text);
      this.pendingBytes += text.length;
      if (this.pendingBytes > this.maxPendingBytes)
        this.fail(new Error(`more than ${this.maxPendingBytes} bytes of events waited for the checkpoint`));
      return;
    }
    if (this.state === 'recording') this.write(text);
  }

  /** One write(2) per line: a crash loses at most the line being written. */
  private write(text: string): boolean {
    if (this.fd === undefined) return false;
    try {
      this.fs.writeSync(this.fd, text);
    } catch (e) {
      this.fail(e as Error);
      return false;
    }
    const bytes = Buffer.byteLength(text);
    this.stats.bytesWritten += bytes;
    this.segmentBytesWritten += bytes;
    return true;
  }

  private rotateIfDue(): void {
    if (this.state !== 'recording') return;
    const age = this.now() - this.segmentStart;
    if (this.segmentBytesWritten < this.segmentBytes && age < this.segmentAgeMs) return;
    this.endSegment();
    this.startSegment();
  }

  private startSegment(): void {
    const now = this.now();
    this.segment++;
    this.segmentStart = now;
    this.segmentBytesWritten = 0;
    this.file = join(
      this.o.dir,
      `segment-${timeName(now)}-${this.run}-${String(this.segment).padStart(6, '0')}.ndjson`,
    );
    try {
      this.fd = this.fs.openSync(this.file, 'wx', 0o600);
    } catch (e) {
      this.fd = undefined;
      this.fail(e as Error);
      return;
    }
    this.stats.segmentsOpened++;
    const header: LogHeader = {
      format: LOG_FORMAT,
      version: SEGMENT_LOG_VERSION,
      createdAt: new Date(now).toISOString(),
      ...this.o.header,
      run: this.run,
      segment: this.segment,
    };
    const objects = [...this.store.values()];
    const at = this.lastAt || header.createdAt;
    this.state = 'recording';
    if (
      !this.write(
        `${JSON.stringify(header)}\n${JSON.stringify({ type: 'checkpoint', seq: this.lastSeq, at, objects: objects.length })}\n`,
      )
    )
      return;
    this.state = 'checkpointing';
    this.stats.recording = true;
    this.writeCheckpoint(objects, now);
  }

  /** The checkpoint's objects, a slice per turn of the event loop; events meanwhile wait in `pending`. */
  private checkpointLeft: { objects: KubeObject[]; next: number; started: number; bytes: number } | undefined;

  private writeCheckpoint(objects: KubeObject[], started: number): void {
    this.checkpointLeft = { objects, next: 0, started, bytes: 0 };
    const step = () => {
      if (this.state !== 'checkpointing' || this.checkpointLeft?.objects !== objects) return;
      if (this.writeCheckpointSlice(this.sliceBytes)) setImmediate(step);
    };
    if (this.writeCheckpointSlice(this.sliceBytes)) setImmediate(step);
  }

  /** Writes up to `budget` bytes of checkpoint; true while more is left. */
  private writeCheckpointSlice(budget: number): boolean {
    const cp = this.checkpointLeft!;
    const parts: string[] = [];
    let size = 0;
    while (cp.next < cp.objects.length && size < budget) {
      const line = `${JSON.stringify({ type: 'object', object: cp.objects[cp.next++] })}\n`;
      parts.push(line);
      size += line.length;
    }
    if (parts.length && !this.write(parts.join(''))) return false;
    cp.bytes += size;
    if (cp.next < cp.objects.length) return true;
    this.stats.lastCheckpointMs = this.now() - cp.started;
    this.stats.lastCheckpointObjects = cp.objects.length;
    this.stats.lastCheckpointBytes = cp.bytes;
    this.checkpointLeft = undefined;
    this.state = 'recording';
    this.backoffMs = 5_000;
    // A segment's size counts its events: a store larger than the size would otherwise rotate at every event.
    this.segmentBytesWritten = 0;
    const waiting = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    if (waiting) this.write(waiting);
    return false;
  }

  private finishCheckpointNow(): void {
    while (this.state === 'checkpointing' && this.writeCheckpointSlice(Number.MAX_SAFE_INTEGER));
  }

  private endSegment(): void {
    if (this.fd === undefined) return;
    if (this.state === 'recording')
      this.write(`${JSON.stringify({ type: 'end', seq: this.lastSeq, at: this.lastAt })}\n`);
    const file = this.file!;
    try {
      this.fs.closeSync(this.fd);
    } catch {
      // Closing cannot lose what write(2) already took.
    }
    this.fd = undefined;
    if (this.o.compress !== false) this.enqueue(() => this.compress(file));
    this.enqueue(() => this.prune());
  }

  /** A write failed: the segment ends here (it still reads), the oldest is freed, recording pauses. */
  private fail(e: Error): void {
    this.stats.writeFailures++;
    this.stats.recording = false;
    const file = this.file;
    this.pending = [];
    this.pendingBytes = 0;
    this.checkpointLeft = undefined;
    if (this.fd !== undefined) {
      try {
        this.fs.closeSync(this.fd);
      } catch {
        // Nothing more to keep.
      }
      this.fd = undefined;
    }
    this.state = 'paused';
    this.resumeAt = this.now() + this.backoffMs;
    this.o.log?.(
      'warn',
      `event log: writing ${file ? basename(file) : 'a segment'} failed (${(e as NodeJS.ErrnoException).code ?? e.message}); ` +
        `recording paused for ${Math.round(this.backoffMs / 1000)} s, the oldest segment freed; ` +
        'the controller goes on, and the log shows the gap',
    );
    this.backoffMs = Math.min(this.backoffMs * 2, 300_000);
    this.enqueue(() => this.prune(1));
  }

  private plainSegments(): string[] {
    return nodeFs
      .readdirSync(this.o.dir)
      .filter((f) => /^segment-.*\.ndjson$/.test(f))
      .map((f) => join(this.o.dir, f));
  }

  private enqueue(job: () => Promise<void>): void {
    this.work = this.work.then(job).catch((e: Error) => this.o.log?.('warn', `event log: ${e.message}`));
  }

  private async compress(file: string): Promise<void> {
    await compressSegment(file);
  }

  private async prune(freeAtLeast = 0): Promise<void> {
    const pruned = await pruneSegments(this.o.dir, this.budget, this.now(), this.file, freeAtLeast);
    this.stats.segmentsPruned += pruned.length;
  }
}
