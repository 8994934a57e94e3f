// The event log: NDJSON. A header line names the format and version, then one line per event,
// and after each translation an output line naming the last event it saw and the hash of its
// whole output (written once the hash is read, soon after). Each line is written with one write(2)
// so a crash loses at most the last line and the output lines still waiting for their hash.
// Secrets are written without their private values (secret-redaction.ts), and the file is
// readable by its owner only.
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { WatchEvent } from './events.js';
import type { LaterHash } from './output-hash.js';
import { redactForLog } from './secret-redaction.js';

export const LOG_FORMAT = 'turnpike.events';
export const LOG_VERSION = 1;

export interface LogHeader {
  format: typeof LOG_FORMAT;
  version: number;
  createdAt: string;
  quietMs: number;
  maxDelayMs: number;
  source?: string;
  /**
   * Sources whose synced made the controller's translations complete (EngineOptions.completeAfter).
   * Absent in logs written before: every synced source then gated the first translation.
   */
  completeAfter?: string[];
  /**
   * The namespace every proxy was placed in (TranslateOptions.proxyNamespace); absent: beside each
   * Gateway. Replay translates with it, so statuses and the infra IR come out the same.
   */
  proxyNamespace?: string;
  /**
   * The holdoff translated a change that found the stream idle at once (a leading edge); absent in
   * logs of controllers that always waited out the quiet period. Replay batches events the same way.
   */
  leadingEdge?: boolean;
}
export interface OutputRecord {
  type: 'output';
  seq: number;
  hash: string;
}
export type LogRecord = WatchEvent | OutputRecord;

export class LogFormatError extends Error {}

export class EventLogWriter {
  private fd: number | undefined;
  constructor(
    readonly path: string,
    header: Omit<LogHeader, 'format' | 'version'>,
  ) {
    this.fd = openSync(path, 'w', 0o600);
    this.writeLine({ format: LOG_FORMAT, version: LOG_VERSION, ...header });
  }
  private writeLine(v: unknown): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, `${JSON.stringify(v)}\n`);
  }
  /** Output lines waiting for their hash (or for one before them): written in order as the hashes come. */
  private later: { seq: number; read: () => string; hash?: string }[] = [];

  private writeSettled(): void {
    for (let next = this.later[0]; next?.hash !== undefined; next = this.later[0]) {
      this.later.shift();
      this.writeLine({ type: 'output', seq: next.seq, hash: next.hash } satisfies OutputRecord);
    }
  }

  event(e: WatchEvent): void {
    this.writeLine(e.object?.kind === 'Secret' ? { ...e, object: redactForLog(e.object) } : e);
  }
  /**
   * `hash` may come later (the engine works it out once the sinks have pushed the output): the line then
   * comes after the events that arrive meanwhile, still in order with the other output lines.
   */
  output(seq: number, hash: string | LaterHash): void {
    if (typeof hash === 'string') {
      this.later.push({ seq, read: () => hash, hash });
      this.writeSettled();
      return;
    }
    const line: (typeof this.later)[number] = { seq, read: hash.read };
    this.later.push(line);
    void hash.settled.then((h) => {
      line.hash = h;
      this.writeSettled();
    });
  }
  close(): void {
    // Hashes not yet worked out are worked out now: the log is complete when closed.
    for (const line of this.later) line.hash ??= line.read();
    this.writeSettled();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

export interface ParsedLog {
  header: LogHeader;
  events: WatchEvent[];
  outputs: OutputRecord[];
}

export function parseEventLog(text: string, path = 'log'): ParsedLog {
  const lines = text.split('\n');
  let header: LogHeader | undefined;
  const events: WatchEvent[] = [];
  const outputs: OutputRecord[] = [];
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(line) as Record<string, unknown>;
    } catch {
      // A crash can leave a torn last line; anything torn before it is corruption.
      if (i === lines.length - 1 || (i === lines.length - 2 && lines[lines.length - 1] === '')) return;
      throw new LogFormatError(`${path}:${i + 1}: not a JSON line`);
    }
    if (!header) {
      if (v.format !== LOG_FORMAT)
        throw new LogFormatError(
          `${path}:1: not a turnpike event log (format is ${JSON.stringify(v.format)}, want ${LOG_FORMAT})`,
        );
      if (v.version !== LOG_VERSION)
        throw new LogFormatError(
          `${path}:1: event log version ${String(v.version)} is not supported (want ${LOG_VERSION})`,
        );
      header = v as unknown as LogHeader;
      return;
    }
    if (v.type === 'output') {
      if (typeof v.seq !== 'number' || typeof v.hash !== 'string')
        throw new LogFormatError(`${path}:${i + 1}: output line needs seq and hash`);
      outputs.push(v as unknown as OutputRecord);
      return;
    }
    if (v.type !== 'upsert' && v.type !== 'delete' && v.type !== 'synced' && v.type !== 'problem')
      throw new LogFormatError(`${path}:${i + 1}: unknown record type ${JSON.stringify(v.type)}`);
    if (typeof v.seq !== 'number' || typeof v.at !== 'string' || typeof v.kind !== 'string')
      throw new LogFormatError(`${path}:${i + 1}: event needs seq, at and kind`);
    if (v.type === 'upsert' && (typeof v.object !== 'object' || v.object === null))
      throw new LogFormatError(`${path}:${i + 1}: upsert event ${v.seq} has no object`);
    // Events are numbered in the order they happened: a number going back means lines were
    // reordered or spliced from another log, and replaying it would not be what happened.
    const prev = events[events.length - 1];
    if (prev && (v.seq as number) <= prev.seq)
      throw new LogFormatError(
        `${path}:${i + 1}: event ${v.seq} comes after event ${prev.seq}; event numbers must increase`,
      );
    events.push(v as unknown as WatchEvent);
  });
  if (!header) throw new LogFormatError(`${path}: empty event log`);
  return { header, events, outputs };
}

export function readEventLog(path: string): ParsedLog {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new LogFormatError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseEventLog(text, path);
}
