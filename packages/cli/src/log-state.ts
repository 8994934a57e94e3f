// Rebuilding the controller's state from an event log, up to a chosen event.
import {
  applyEvents,
  EMPTY_SNAPSHOT,
  outputHash,
  snapshotObjects,
  type LogHeader,
  type ParsedLog,
  type WatchEvent,
} from '@turnpike/engine';
import { Translator, type Snapshot, type TranslateResult } from '@turnpike/translator';
import type { KubeObject } from '@turnpike/api';

export interface StateAt {
  seq: number;
  snapshot: Snapshot;
  objects: KubeObject[];
  result: TranslateResult;
  hash: string;
}

/** A translator set up as the controller that wrote the log was (where it placed the proxies). */
export function translatorFor(header: LogHeader): Translator {
  return new Translator(header.proxyNamespace !== undefined ? { proxyNamespace: header.proxyNamespace } : {});
}

export function stateAt(log: ParsedLog, until?: number, translator = translatorFor(log.header)): StateAt {
  let snapshot = EMPTY_SNAPSHOT;
  let seq = 0;
  const batch: WatchEvent[] = [];
  for (const e of log.events) {
    if (until !== undefined && e.seq > until) break;
    batch.push(e);
    seq = e.seq;
  }
  snapshot = applyEvents(snapshot, batch).snapshot;
  const result = translator.translate(snapshot);
  return { seq, snapshot, objects: snapshotObjects(snapshot), result, hash: outputHash(result) };
}

export interface Divergence {
  output: { seq: number; hash: string };
  replayed: string;
  event?: WatchEvent;
}

/** Recomputes every recorded output hash; returns the first divergence, if any. */
export function verifyLog(
  log: ParsedLog,
  progress?: (done: number, total: number) => void,
): { checked: number; divergence?: Divergence } {
  const translator = translatorFor(log.header);
  let snapshot = EMPTY_SNAPSHOT;
  let i = 0;
  let checked = 0;
  for (const out of log.outputs) {
    const batch: WatchEvent[] = [];
    while (i < log.events.length && log.events[i]!.seq <= out.seq) batch.push(log.events[i++]!);
    snapshot = applyEvents(snapshot, batch).snapshot;
    const hash = outputHash(translator.translate(snapshot));
    checked++;
    progress?.(i, log.events.length);
    if (hash !== out.hash) {
      const event = log.events.find((e) => e.seq === out.seq);
      return { checked, divergence: event ? { output: out, replayed: hash, event } : { output: out, replayed: hash } };
    }
  }
  return { checked };
}
