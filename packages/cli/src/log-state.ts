// Rebuilding the controller's state from an event log, up to a chosen event.
import {
  applyEvents,
  EMPTY_SNAPSHOT,
  outputHash,
  sanitize,
  snapshotObjects,
  type LogCheckpoint,
  type LogHeader,
  type ParsedLog,
  type WatchEvent,
} from '@turnpike/engine';
import { existsSync } from 'node:fs';
import { readEventLog } from '@turnpike/engine';
import { CliError } from './errors.js';
import {
  snapshotFromObjects,
  Translator,
  type Snapshot,
  type TranslateOptions,
  type TranslateResult,
} from '@turnpike/translator';
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
  return new Translator(translateOptionsFor(header));
}

/**
 * The controller's translate options, from its log: where it placed the proxies, and whether it kept
 * loopback endpoints (`run --dir`, whose source is `dir:…`, does: its proxy runs beside its backends).
 */
export function translateOptionsFor(header: LogHeader): TranslateOptions {
  return {
    ...(header.proxyNamespace !== undefined ? { proxyNamespace: header.proxyNamespace } : {}),
    ...(header.source?.startsWith('dir:') ? { loopbackEndpoints: true } : {}),
  };
}

/** A checkpoint's store, as the engine would hold it had it taken every object as an upsert. */
export function checkpointStore(cp: LogCheckpoint): Snapshot {
  // Built directly (a 10k-route checkpoint is 50k objects): no draft, and not deep-frozen (a walk of every
  // field, a third of the cost): these objects were just parsed and nothing else holds them.
  return snapshotFromObjects(cp.objects.map(sanitize));
}

/** The store before the log's first event: its first checkpoint's (a segment), else empty (a version-1 log). */
export function storeBefore(log: ParsedLog): Snapshot {
  const first = log.checkpoints?.[0];
  return first ? checkpointStore(first) : EMPTY_SNAPSHOT;
}

/**
 * A restarted controller's first checkpoint: numbered after the last event the run before recorded, it
 * holds what the new run's recorder had then (nothing), not the store after that event, so the state
 * after that event (and an output there) is the run before's.
 */
function restartsAt(cp: LogCheckpoint): boolean {
  return cp.gap?.reason === 'restart';
}

/** Where a walk over the log starts again (a gap): the event index the checkpoint comes before. */
export function gapCheckpoints(log: ParsedLog): Map<number, LogCheckpoint> {
  const out = new Map<number, LogCheckpoint>();
  for (const cp of log.checkpoints?.slice(1) ?? []) if (cp.gap) out.set(cp.index, cp);
  return out;
}

/** The first event number a log can show the state after (earlier ones were pruned or never recorded). */
export function firstKnownSeq(log: ParsedLog): number {
  return log.checkpoints?.[0]?.seq ?? 0;
}

/**
 * A moment in a log: an event number, or a time (RFC 3339) meaning the last event at or before it.
 * `what` names the flag in messages.
 */
export function resolveMoment(log: ParsedLog, spec: string, what: string): number {
  if (/^\d+$/.test(spec)) return Number(spec);
  const t = Date.parse(spec);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(spec))
    throw new CliError(`${what} ${spec}: not an event number or a time (RFC 3339, e.g. 2026-12-06T14:02:00Z)`);
  let seq: number | undefined;
  for (const e of log.events) {
    if (Date.parse(e.at) > t) break;
    seq = e.seq;
  }
  if (seq === undefined) {
    const first = log.events[0];
    const base = log.checkpoints?.[0];
    if (base && Date.parse(base.at) <= t) return base.seq;
    throw new CliError(`${what} ${spec}: before the log's first event${first ? ` (${first.at})` : ''}`);
  }
  return seq;
}

/**
 * The store after event `until` (default: the end), from the nearest checkpoint at or before it: a
 * moment late in a long recording costs the events since its segment began, not the whole log.
 */
export function storeAt(log: ParsedLog, until?: number): { seq: number; snapshot: Snapshot } {
  let end = log.events.length;
  if (until !== undefined) {
    end = 0;
    while (end < log.events.length && log.events[end]!.seq <= until) end++;
    if (until < firstKnownSeq(log))
      throw new CliError(
        `event ${until} is before what the log holds: it starts from a checkpoint after event ${firstKnownSeq(log)}`,
      );
  }
  let start: LogCheckpoint | undefined;
  for (const cp of log.checkpoints ?? []) {
    if (cp.index > end || (until !== undefined && (cp.seq > until || (cp.seq === until && restartsAt(cp))))) break;
    start = cp;
  }
  const from = start?.index ?? 0;
  const snapshot = storeOf(start?.objects ?? [], lastPerObject(log.events.slice(from, end)));
  const seq = end > from ? log.events[end - 1]!.seq : (start?.seq ?? 0);
  return { seq, snapshot };
}

/**
 * The events that decide the store: the last one of each object, in order (an EndpointSlice updated a
 * thousand times since the checkpoint is applied once).
 */
function lastPerObject(events: readonly WatchEvent[]): WatchEvent[] {
  const last = new Map<string, number>();
  events.forEach((e, i) => {
    if (e.name && (e.type === 'upsert' || e.type === 'delete')) last.set(`${e.kind}/${e.namespace ?? ''}/${e.name}`, i);
  });
  return events.filter((e, i) => e.name !== undefined && last.get(`${e.kind}/${e.namespace ?? ''}/${e.name}`) === i);
}

/**
 * A checkpoint's objects with the events after it applied, into maps of its own: nothing else holds
 * them, so they are filled in place (the engine's copy-on-write store costs seconds at 10k routes).
 */
function storeOf(objects: readonly KubeObject[], events: readonly WatchEvent[]): Snapshot {
  const store = snapshotFromObjects(objects.map(sanitize)) as Map<string, Map<string, Map<string, KubeObject>>>;
  for (const e of events) {
    const ns = e.namespace ?? '';
    if (e.type === 'delete') {
      const byNs = store.get(e.kind);
      const shard = byNs?.get(ns);
      shard?.delete(e.name!);
      if (shard?.size === 0) byNs!.delete(ns);
    } else if (e.type === 'upsert' && e.object) {
      let byNs = store.get(e.kind);
      if (!byNs) store.set(e.kind, (byNs = new Map()));
      let shard = byNs.get(ns);
      if (!shard) byNs.set(ns, (shard = new Map()));
      shard.set(e.name!, sanitize(e.object));
    }
  }
  return store;
}

export function stateAt(log: ParsedLog, until?: number, translator = translatorFor(log.header)): StateAt {
  const { seq, snapshot } = storeAt(log, until);
  const result = translator.translate(snapshot);
  return { seq, snapshot, objects: snapshotObjects(snapshot), result, hash: outputHash(result) };
}

export interface Divergence {
  output: { seq: number; hash: string };
  replayed: string;
  event?: WatchEvent;
}

/**
 * Recomputes every recorded output hash; returns the first divergence, if any. A segment's log starts
 * from its checkpoint and starts again at each gap: an output whose events the log does not hold
 * (before the first checkpoint, inside a gap) cannot be recomputed and is counted as `unknown`.
 */
export function verifyLog(
  log: ParsedLog,
  progress?: (done: number, total: number) => void,
): { checked: number; unknown: number; divergence?: Divergence } {
  const translator = translatorFor(log.header);
  const gaps = gapCheckpoints(log);
  let snapshot = storeBefore(log);
  /** The event the store is after; -1 inside a gap that the next checkpoint closes. */
  let at = firstKnownSeq(log);
  let i = 0;
  let checked = 0;
  let unknown = 0;
  for (const out of log.outputs) {
    while (i < log.events.length && log.events[i]!.seq <= out.seq) {
      const gap = gaps.get(i);
      if (gap) snapshot = checkpointStore(gap);
      snapshot = applyEvents(snapshot, [log.events[i++]!]).snapshot;
      at = log.events[i - 1]!.seq;
    }
    const next = gaps.get(i);
    const takesNext = next && (next.seq < out.seq || (next.seq === out.seq && !restartsAt(next)));
    if (next && takesNext) {
      // The output is at (or in the gap before) the checkpoint that ends a gap.
      snapshot = checkpointStore(next);
      gaps.delete(i);
      at = next.seq;
    }
    if (out.seq < firstKnownSeq(log) || (next && !takesNext && out.seq > at) || out.seq < at) {
      unknown++;
      continue;
    }
    const hash = outputHash(translator.translate(snapshot));
    checked++;
    progress?.(i, log.events.length);
    if (hash !== out.hash) {
      const event = log.events.find((e) => e.seq === out.seq);
      return {
        checked,
        unknown,
        divergence: event ? { output: out, replayed: hash, event } : { output: out, replayed: hash },
      };
    }
  }
  return { checked, unknown };
}

/**
 * `LOG`, `LOG@SEQ` or `LOG@TIME` (a file, capture or recorder directory): the log and the moment
 * (undefined: its end). A path that exists as given is the log itself, even with an @ in it.
 */
export function readLogMoment(spec: string): { log: ParsedLog; seq?: number; path: string } {
  const at = spec.lastIndexOf('@');
  if (existsSync(spec) || at <= 0) return { log: readEventLog(spec), path: spec };
  const path = spec.slice(0, at);
  if (!existsSync(path)) throw new CliError(`${spec}: no event log at ${path}`);
  const log = readEventLog(path);
  const seq = resolveMoment(log, spec.slice(at + 1), spec);
  const last = log.events.at(-1)?.seq ?? firstKnownSeq(log);
  // Past the end is a mistake, not the last state: the state asked for was never recorded.
  if (seq > last) throw new CliError(`${spec}: the log ends at event ${last}`);
  return { log, seq, path };
}
