// What the console shows, computed on demand from an event log (a file, or the running controller's
// own events): any moment's statuses, an object's conditions over time, explain trace and xDS, and
// the semantic diff of two moments. A moment is an event (by seq). States come from checkpoints
// (LogCheckpoints) and one Translator, whose memo reuses what two probed states share; the last
// translations are kept, so moving the timeline back and forth costs little.
import { DIGEST_KEY_KIND, DIGEST_KEY_NAME, digestKeyOf } from '@turnpike/api';
import { applyEvents, type ParsedLog, type WatchEvent } from '@turnpike/engine';
import { explain, Translator, type Snapshot, type TranslateResult } from '@turnpike/translator';
import { LogCheckpoints } from '../log-checkpoints.js';
import { translatorFor } from '../log-state.js';
import { semanticDiff, type SemanticDiff } from '../semantic-diff.js';
import { conditionRows, type ConditionRow } from '../status-conditions.js';
import type {
  Density,
  EventSummary,
  History,
  HistoryChange,
  LogSummary,
  ObjectDetail,
  ObjectSummary,
  Page,
} from './console-api.js';

export type { EventSummary, HistoryChange, ObjectSummary } from './console-api.js';

const KEPT_RESULTS = 24;

const compact = (rows: readonly ConditionRow[]) =>
  rows.map((r) => `${r.where ? `${r.where} ` : ''}${r.type}=${r.status}/${r.reason}`);

export class ConsoleData {
  private checkpoints?: LogCheckpoints;
  private firstSeq?: number;
  private translator?: Translator;
  private readonly results = new Map<number, TranslateResult>();
  /** Histories computed, by key, for the log as it was (a growing log computes them again). */
  private readonly histories = new Map<string, { events: number; last: number | undefined; history: History }>();

  /**
   * `log` is read again on every request: a running controller's log grows (and, past its cap, drops
   * its oldest events into `base`, the store before its first event).
   */
  constructor(
    private readonly log: () => ParsedLog,
    private readonly base: () => Snapshot | undefined = () => undefined,
  ) {}
  private baseGiven?: Snapshot;

  private current(): { log: ParsedLog; checkpoints: LogCheckpoints } {
    const log = this.log();
    const base = this.base();
    const firstSeq = log.events[0]?.seq;
    if (
      !this.checkpoints ||
      this.baseGiven !== base ||
      this.firstSeq !== firstSeq ||
      log.events.length < this.checkpoints.length
    ) {
      this.checkpoints = new LogCheckpoints(log, 1000, base);
      this.baseGiven = base;
      this.firstSeq = firstSeq;
      this.results.clear();
    } else if (log.events.length > this.checkpoints.length) {
      this.checkpoints.extend(log);
    }
    return { log, checkpoints: this.checkpoints };
  }

  /** The index of the last event with this seq or before it (-1: before the first). */
  indexOf(seq: number): number {
    const events = this.current().log.events;
    let lo = 0;
    let hi = events.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (events[mid]!.seq <= seq) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  private resultAt(index: number): TranslateResult {
    const hit = this.results.get(index);
    if (hit) {
      this.results.delete(index);
      this.results.set(index, hit);
      return hit;
    }
    const { log, checkpoints } = this.current();
    this.translator ??= translatorFor(log.header);
    const r = this.translator.translate(checkpoints.after(index));
    this.results.set(index, r);
    if (this.results.size > KEPT_RESULTS) this.results.delete(this.results.keys().next().value!);
    return r;
  }

  summary(): LogSummary {
    const { log } = this.current();
    const first = log.events[0];
    const last = log.events.at(-1);
    return {
      ...(log.header.source ? { source: log.header.source } : {}),
      createdAt: log.header.createdAt,
      events: log.events.length,
      translations: log.outputs.length,
      ...(first ? { first: first.at, firstSeq: first.seq } : {}),
      ...(last ? { last: last.at, lastSeq: last.seq } : {}),
      ...(log.segments
        ? {
            segments: log.segments.map(({ run, segment, from, to, closed }) => ({ run, segment, from, to, closed })),
            gaps: (log.checkpoints ?? [])
              .filter((c) => c.gap)
              .map((c) => ({
                reason: c.gap!.reason,
                ...(c.gap!.from ? { from: c.gap!.from } : {}),
                to: c.gap!.to,
                seq: c.seq,
              })),
          }
        : {}),
    };
  }

  /** The event at or before `seq` (the moment the console shows), with its index; undefined before the first. */
  eventAt(seq: number): EventSummary | undefined {
    const index = this.indexOf(seq);
    const { log } = this.current();
    const e = log.events[index];
    return e ? this.describe(e, index, new Set(log.outputs.map((o) => o.seq))) : undefined;
  }

  /** Events in order, a page at a time. */
  events(offset: number, limit: number): Page<EventSummary> {
    const { log } = this.current();
    const outputs = new Set(log.outputs.map((o) => o.seq));
    const items = log.events
      .slice(Math.max(0, offset), Math.max(0, offset) + limit)
      .map((e, i) => this.describe(e, Math.max(0, offset) + i, outputs));
    return { total: log.events.length, items };
  }

  /** The log's clock in `buckets` equal slices: events and translations in each, for the timeline bar. */
  density(buckets: number): Density {
    const { log } = this.current();
    const times = log.events.map((e) => Date.parse(e.at));
    const starts = (log.segments ?? []).map((g) => Date.parse(g.from));
    const known = [...times.slice(0, 1), ...starts];
    const from = known.length ? Math.min(...known) : 0;
    const to = Math.max(times.at(-1) ?? from, ...(log.segments ?? []).map((g) => Date.parse(g.to)));
    const span = Math.max(1, to - from);
    const slot = (t: number) => Math.min(buckets - 1, Math.floor(((t - from) / span) * buckets));
    const events = new Array<number>(buckets).fill(0);
    const translations = new Array<number>(buckets).fill(0);
    const firstIndex = new Array<number>(buckets).fill(-1);
    times.forEach((t, i) => {
      const b = slot(t);
      events[b]!++;
      if (firstIndex[b] === -1) firstIndex[b] = i;
    });
    const atOf = new Map(log.events.map((e) => [e.seq, Date.parse(e.at)]));
    for (const o of log.outputs) translations[slot(atOf.get(o.seq) ?? from)]!++;
    const gaps = new Array<number>(buckets).fill(0);
    for (const c of log.checkpoints ?? []) {
      if (!c.gap?.from) continue;
      for (let b = slot(Date.parse(c.gap.from)); b <= slot(Date.parse(c.gap.to)); b++) gaps[b] = 1;
    }
    const boundaries = new Array<number>(buckets).fill(0);
    for (const start of starts.slice(1)) boundaries[slot(start)] = 1;
    return {
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      events,
      translations,
      firstIndex,
      gaps,
      boundaries,
    };
  }

  private describe(e: WatchEvent, index: number, outputs: ReadonlySet<number>): EventSummary {
    const object = `${e.namespace ? `${e.namespace}/` : ''}${e.name ?? ''}`;
    return {
      index,
      seq: e.seq,
      at: e.at,
      source: e.source,
      type: e.type,
      kind: e.kind,
      object,
      translated: outputs.has(e.seq),
    };
  }

  /** Every object with a status after event `seq`, filtered and paged. */
  objects(
    seq: number,
    opts: { filter?: string; trouble?: boolean; offset?: number; limit?: number } = {},
  ): Page<ObjectSummary> {
    const result = this.resultAt(this.indexOf(seq));
    const needle = opts.filter?.toLowerCase();
    const all: ObjectSummary[] = [];
    for (const key of result.statuses.sortedKeys()) {
      if (needle && !key.toLowerCase().includes(needle)) continue;
      const rows = conditionRows(result.statuses.get(key));
      const trouble = rows.some((r) => r.trouble);
      if (opts.trouble && !trouble) continue;
      all.push({
        key,
        trouble,
        conditions: rows.map(({ message: _message, ...row }) => row),
      });
    }
    const offset = Math.max(0, opts.offset ?? 0);
    return { total: all.length, items: all.slice(offset, offset + (opts.limit ?? 100)) };
  }

  /** One object after event `seq`: its conditions, the explain trace, and the xDS it takes part in. */
  object(key: string, seq: number): ObjectDetail {
    const index = this.indexOf(seq);
    const result = this.resultAt(index);
    const [kind = '', namespace = '', name = ''] = key.split('/');
    const trace = explain(this.current().checkpoints.after(index), kind, namespace || undefined, name);
    return {
      key,
      found: trace.found,
      conditions: conditionRows(result.statuses.get(key)),
      explain: trace.lines,
      xds: xdsOf(result, kind, namespace, name),
    };
  }

  /**
   * An object's conditions over the whole log: every change, exact even when a value comes back (as
   * `bisect --all`), at each translation the controller recorded (what it could have written), or
   * after each event in a log that records none. One incremental translator walks the log; a moment
   * that touches nothing the object depends on costs little.
   */
  async history(key: string): Promise<History> {
    const { log, checkpoints } = this.current();
    const cached = this.histories.get(key);
    if (cached && cached.events === log.events.length && cached.last === log.events.at(-1)?.seq) return cached.history;
    const n = log.events.length;
    if (!n) return { changes: [], probes: 0 };
    const outputs = new Set(log.outputs.map((o) => o.seq));
    const moment = (i: number) => outputs.size === 0 || outputs.has(log.events[i]!.seq) || i === n - 1;
    const translator = translatorFor(log.header);
    let snapshot = checkpoints.after(0);
    let before = compact(conditionRows(translator.translate(snapshot).statuses.get(key)));
    let probes = 1;
    const changes: HistoryChange[] = before.length ? [this.change(log, 0, [], before)] : [];
    let pending: WatchEvent[] = [];
    for (let i = 1; i < n; i++) {
      // A gap in a recording: the store is the checkpoint after it, whatever came before.
      const reset = checkpoints.resetAt(i);
      if (reset) {
        snapshot = reset;
        pending = [];
      }
      pending.push(log.events[i]!);
      if (!moment(i)) continue;
      if (probes % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
      const batchStart = snapshot;
      snapshot = applyEvents(snapshot, pending).snapshot;
      const after = compact(conditionRows(translator.translate(snapshot).statuses.get(key)));
      probes++;
      if (after.join('\n') !== before.join('\n')) {
        const searched = pending.length > 1;
        const cause = searched ? causeInBatch(translator, key, batchStart, pending, after) : undefined;
        changes.push(this.change(log, i, before, after, cause, pending.length));
        // The search moved the translator off this moment: back to it, so the next step is incremental.
        if (searched) translator.translate(snapshot);
      }
      pending = [];
      before = after;
    }
    const history = { changes, probes };
    this.histories.set(key, { events: n, last: log.events.at(-1)?.seq, history });
    if (this.histories.size > KEPT_RESULTS) this.histories.delete(this.histories.keys().next().value!);
    return history;
  }

  /**
   * A change at the moment after event `index`, named by the event that caused it: `cause` where the
   * translation took several events at once (`batch`), the moment's own event otherwise.
   */
  private change(
    log: ParsedLog,
    index: number,
    before: string[],
    after: string[],
    cause?: WatchEvent,
    batch = 1,
  ): HistoryChange {
    const m = log.events[index]!;
    const e = cause ?? m;
    const object = `${e.namespace ? `${e.namespace}/` : ''}${e.name ?? ''}`;
    const others = batch > 1 ? ` (translated with ${batch - 1} other event${batch > 2 ? 's' : ''})` : '';
    return { seq: m.seq, at: m.at, event: `${e.type} ${e.kind}${object ? ` ${object}` : ''}${others}`, before, after };
  }

  /** What changes from the moment after event `a` to the moment after event `b`. */
  diff(a: number, b: number): SemanticDiff {
    const [ia, ib] = [this.indexOf(a), this.indexOf(b)];
    // Across a controller restart the Secrets' digests are under two keys: not compared as such.
    const keyAt = (index: number) => {
      const snapshot = this.current().checkpoints.after(index);
      return digestKeyOf(snapshot.get(DIGEST_KEY_KIND)?.get('')?.get(DIGEST_KEY_NAME))?.toString('base64');
    };
    return semanticDiff(this.resultAt(ia), this.resultAt(ib), { keysDiffer: keyAt(ia) !== keyAt(ib) });
  }
}

/** A Gateway's whole xDS IR; for a route, the IR routes it produced on each Gateway. */
function xdsOf(result: TranslateResult, kind: string, namespace: string, name: string): unknown {
  if (kind === 'Gateway') return result.xdsIR.gateways.get(`${namespace}/${name}`) ?? null;
  const marker = `${kind.toLowerCase()}/${namespace}/${name}/`;
  const out: Record<string, unknown[]> = {};
  for (const gw of result.xdsIR.gateways.sortedKeys()) {
    const found: unknown[] = [];
    const visit = (node: unknown) => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      if (typeof o.name === 'string' && o.name.startsWith(marker)) found.push(o);
      else for (const v of Object.values(o)) visit(v);
    };
    visit(result.xdsIR.gateways.get(gw));
    if (found.length) out[gw] = found;
  }
  return out;
}

/** How many prefixes of one translation's batch are translated to find what changed an object. */
const CAUSE_SEARCH_LIMIT = 64;

/**
 * Which event of a batch the controller translated at once made an object's conditions what they became:
 * the last event after which they are what the whole batch gives, with the events before it giving
 * something else. A batch also holds events the object does not depend on (the proxy Service the controller
 * just wrote beside the delete that broke a route); naming the batch's last event would blame one of those.
 * Undefined when the search would take more than CAUSE_SEARCH_LIMIT translations.
 */
function causeInBatch(
  translator: Translator,
  key: string,
  start: Snapshot,
  batch: readonly WatchEvent[],
  after: string[],
): WatchEvent | undefined {
  const prefixes: Snapshot[] = [start];
  for (const e of batch) prefixes.push(applyEvents(prefixes.at(-1)!, [e]).snapshot);
  const want = after.join('\n');
  // prefixes[k]: the first k events applied; prefixes[batch.length] gives `after`.
  for (let k = batch.length - 1, tried = 0; k >= 0 && tried < CAUSE_SEARCH_LIMIT; k--, tried++) {
    const rows = compact(conditionRows(translator.translate(prefixes[k]!).statuses.get(key)));
    if (rows.join('\n') !== want) return batch[k];
  }
  return undefined;
}
