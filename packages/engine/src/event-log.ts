// The event log: NDJSON. A header line names the format and version, then one line per event,
// and after each translation an output line naming the last event it saw and the hash of its
// whole output (written once the hash is read, soon after). Each line is written with one write(2)
// so a crash loses at most the last line and the output lines still waiting for their hash.
// Secrets are written without their private values (secret-redaction.ts), and the file is
// readable by its owner only.
import { closeSync, openSync, writeSync } from 'node:fs';
import type { WatchEvent } from './events.js';
import type { LaterHash } from './output-hash.js';
import { LogRedaction } from './secret-redaction.js';
import { OrderedOutputs } from './output-lines.js';

export const LOG_FORMAT = 'turnpike.events';
/** What `--record FILE` writes: one file from the controller's start, no checkpoint. */
export const LOG_VERSION = 1;
/** A flight-recorder segment (flight-recorder/): a header, a checkpoint of the store, then events and outputs. */
export const SEGMENT_LOG_VERSION = 2;

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
  /** Version 2: the controller process that wrote the segment (a new one after each restart). */
  run?: string;
  /** Version 2: the segment's number within its run (0, 1, 2, …). */
  segment?: number;
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
  private readonly outputs = new OrderedOutputs((record) => this.writeLine(record));

  private readonly redaction = new LogRedaction();

  event(e: WatchEvent): void {
    this.writeLine(this.redaction.event(e));
  }
  /**
   * `hash` may come later (the engine works it out once the sinks have pushed the output): the line then
   * comes after the events that arrive meanwhile, still in order with the other output lines.
   */
  output(seq: number, hash: string | LaterHash): void {
    this.outputs.add(seq, hash);
  }
  close(): void {
    this.outputs.settleAll();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
