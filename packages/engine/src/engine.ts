// The pipeline: every source merges into one stream; events are numbered and stamped, folded
// into the store, and after the holdoff the whole snapshot goes to the translator. Outputs that
// hash the same as the previous one are not passed on. An output's hash is worked out when read.
import type { KubeObject } from '@turnpike/api';
import { Translator, type OutputChanges, type Snapshot, type TranslateResult } from '@turnpike/translator';
import { asyncScheduler, connectable, filter, map, merge, Observable, type SchedulerLike, Subject, take } from 'rxjs';
import type { SourceEvent, WatchEvent } from './events.js';
import { DEFAULT_MAX_DELAY_MS, DEFAULT_QUIET_MS, holdoff, LEADING_GAP_MS } from './holdoff.js';
import { OutputHashSequence, type SequencedHash } from './output-hash.js';
import { OutputHashing } from './output-hashing.js';
import { applyEvents, EMPTY_SNAPSHOT, isRelevantChange, storable } from './store.js';

export interface EngineOptions {
  /** Sources; each emits `synced` with kind `*` once it has listed everything. */
  sources: Observable<SourceEvent | WatchEvent>[];
  /** Names of the sources that must be synced before the first translation. */
  sourceNames: string[];
  /**
   * Sources fed by the translations themselves (the plugin fetch worker): outputs before these
   * are synced too are marked incomplete, for the sinks that must not act on them (the proxies
   * would be served routes without their plugins). Becoming complete translates again.
   */
  completeAfter?: string[];
  quietMs?: number;
  maxDelayMs?: number;
  /** A change on an idle stream is translated at once (holdoff `leading`); later ones coalesce. */
  leadingEdge?: boolean;
  /**
   * With leadingEdge: the trailing quiet period follows what translations cost (4x the last one,
   * 5 ms to quietMs). It depends on wall time, so replay (virtual time) leaves it off.
   */
  adaptiveQuiet?: boolean;
  scheduler?: SchedulerLike;
  /**
   * The number before the first event (default 0). A controller restarted beside its flight recorder's
   * earlier segments goes on from the last number recorded, so one Pod's log never numbers back.
   */
  firstSeq?: number;
  /** Stamps `at`; replay keeps the recorded stamps. */
  clock?: () => string;
  translator?: Translator;
  onEvent?: (e: WatchEvent) => void;
  onError?: (e: Error) => void;
}

export interface EngineOutput {
  /** The last event the translation saw. */
  seq: number;
  /** The hash of the whole output (output-hash.ts), worked out when first read. */
  readonly hash: string;
  /** False when the output equals the previous one (recorded, not passed to sinks). */
  readonly changed: boolean;
  /** The hash once the engine has worked it out, a moment after the sinks ran: for logs, which need not wait. */
  readonly hashed: Promise<string>;
  result: TranslateResult;
  /** The output keys whose value differs from the previous translation's (all of them at first). */
  changes: OutputChanges;
  snapshot: Snapshot;
  /** Wall time the translation took, in milliseconds (for metrics; not part of the output). */
  durationMs: number;
  /** When the earliest event this translation is the first to see arrived (`at`): where config latency starts. */
  since: string;
  /** Every `completeAfter` source was synced before this translation. */
  complete: boolean;
}

interface State {
  snapshot: Snapshot;
  seq: number;
  changed: boolean;
  synced: Set<string>;
  ready: boolean;
  becameReady: boolean;
  complete: boolean;
  becameComplete: boolean;
  /** The `at` of the first relevant event no translation has seen yet. */
  pendingSince?: string;
  /**
   * The events not yet folded into the snapshot, applied in one batch when a translation reads it
   * (or when this many pile up: UNAPPLIED_LIMIT): the initial listing (tens of thousands of
   * objects) at once when the sources are synced, and later the events of one holdoff window.
   * One structural copy per event copied a namespace's whole shard each time (10 000 routes, and
   * every status write's echo among them).
   */
  unapplied: WatchEvent[];
  /** After the first translation: the newest version of each object in `unapplied` (null: deleted). */
  overlay: Map<string, KubeObject | null>;
}

/** Past this many unapplied events the snapshot is brought up to date anyway (bounded memory). */
const UNAPPLIED_LIMIT = 1024;

/** The shortest trailing quiet period of the adaptive holdoff. */
const MIN_ADAPTIVE_QUIET_MS = 5;

let lastNow = Number.NaN;
let lastIso = '';

/** The scheduler's time as RFC 3339; formatted once per millisecond (a listing stamps thousands of events in one). */
export function isoNow(scheduler: SchedulerLike): string {
  const now = scheduler.now();
  if (now !== lastNow) {
    lastIso = new Date(now).toISOString();
    lastNow = now;
  }
  return lastIso;
}

/** The store and the sources' progress after one event. */
function nextState(
  state: State,
  event: WatchEvent,
  required: ReadonlySet<string>,
  completing: ReadonlySet<string>,
): State {
  const synced = state.synced;
  // Sources only ever become synced: readiness and completeness change only with a `synced` event.
  const newlySynced = event.type === 'synced' && event.kind === '*';
  if (newlySynced) synced.add(event.source);
  const ready = state.ready || (newlySynced && [...required].every((source) => synced.has(source)));
  let snapshot = state.snapshot;
  let relevant: boolean;
  if (!state.ready && !ready) {
    // Nothing reads the snapshot before the first translation: keep the event for one batch.
    state.unapplied.push(event);
    relevant = event.type !== 'synced' && event.type !== 'problem';
  } else if (!state.ready) {
    // The sources are synced: the whole listing in one batch.
    ({ snapshot, relevant } = applyEvents(state.snapshot, [...state.unapplied.splice(0), event]));
  } else {
    relevant = deferEvent(state, event);
    if (state.unapplied.length >= UNAPPLIED_LIMIT) snapshot = materialize(state).snapshot;
  }
  const complete = state.complete || (newlySynced && [...completing].every((source) => synced.has(source)));
  const pendingSince = state.pendingSince ?? (relevant ? event.at : undefined);
  return {
    snapshot,
    seq: event.seq,
    changed: relevant,
    synced,
    ready,
    becameReady: ready && !state.ready,
    complete,
    becameComplete: complete && !state.complete,
    ...(pendingSince ? { pendingSince } : {}),
    unapplied: state.unapplied,
    overlay: state.overlay,
  };
}

/**
 * Queues one event for the snapshot and says whether it matters to the translator, judged against
 * the newest version of its object (queued or in the snapshot), as applyEvents would.
 */
function deferEvent(state: State, e: WatchEvent): boolean {
  if (e.type === 'synced' || e.type === 'problem' || !e.name) return false;
  const ns = e.namespace ?? '';
  const key = `${e.kind}/${ns}/${e.name}`;
  const queued = state.overlay.get(key);
  const prev = queued !== undefined ? (queued ?? undefined) : state.snapshot.get(e.kind)?.get(ns)?.get(e.name);
  let relevant: boolean;
  if (e.type === 'delete') {
    relevant = prev !== undefined;
    state.overlay.set(key, null);
  } else {
    if (!e.object) return false;
    const obj = storable(e.object);
    relevant = isRelevantChange(prev, obj);
    state.overlay.set(key, obj);
  }
  state.unapplied.push(e);
  return relevant;
}

/** Folds the queued events into the snapshot (one structural copy for them all). */
function materialize(state: State): State {
  if (!state.unapplied.length) return state;
  state.snapshot = applyEvents(state.snapshot, state.unapplied.splice(0)).snapshot;
  state.overlay.clear();
  return state;
}

/**
 * Builds the engine's output stream. Subscribing starts the sources; every translation is
 * emitted (with `changed` telling whether it differs from the previous one).
 */
export function runEngine(opts: EngineOptions): Observable<EngineOutput> {
  const scheduler = opts.scheduler ?? asyncScheduler;
  const clock = opts.clock ?? (() => isoNow(scheduler));
  const translator = opts.translator ?? new Translator();
  const required = new Set(opts.sourceNames);
  const completing = new Set(opts.completeAfter ?? []);
  let seq = opts.firstSeq ?? 0;

  const events$ = merge(...opts.sources).pipe(
    map((e): WatchEvent => {
      const w = e as WatchEvent;
      if (typeof w.seq === 'number' && typeof w.at === 'string') {
        seq = Math.max(seq, w.seq);
        return w;
      }
      return { seq: ++seq, at: clock(), ...e };
    }),
  );

  let state: State = {
    snapshot: EMPTY_SNAPSHOT,
    seq: 0,
    changed: false,
    synced: new Set(),
    ready: required.size === 0,
    becameReady: false,
    complete: completing.size === 0,
    becameComplete: false,
    unapplied: [],
    overlay: new Map(),
  };
  // Connected only after every consumer subscribed, so synchronous sources lose nothing.
  const state$ = connectable(
    events$.pipe(
      map((event) => {
        opts.onEvent?.(event);
        state = nextState(state, event, required, completing);
        return state;
      }),
    ),
    { connector: () => new Subject<State>(), resetOnDisconnect: false },
  );

  const ready$ = state$.pipe(
    filter((s) => s.ready),
    take(1),
  );
  let lastCycleMs = Number.POSITIVE_INFINITY;
  const hashes = new OutputHashSequence();
  // Idle work after an output, in slices: its hash, then what the next translation would do first.
  const hashing = new OutputHashing(hashes, scheduler, (deadline) => translator.prepare(deadline));
  let last: TranslateResult | undefined;
  // After a failed translation the translator starts over: the next output's changes then cover
  // every key of the last output too, so sinks drop what is gone.
  let restarted = false;
  const outputs$ = state$.pipe(
    filter((s) => s.changed || s.becameReady || (s.ready && s.becameComplete)),
    holdoff<State>({
      quietMs: opts.quietMs ?? DEFAULT_QUIET_MS,
      maxDelayMs: opts.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
      leading: opts.leadingEdge ?? false,
      // With the leading edge, the trailing quiet period follows what a translation costs: waiting
      // 100 ms for a burst to end is pointless when translating it takes 2 ms (never under 5 ms).
      // Under a steady stream of changes (endpoint churn) a quiet period never comes: then a batch
      // goes out once it waited 4x a cycle (never under LEADING_GAP_MS), not after maxDelayMs, so
      // the lag follows the cost and the translations take about a quarter of the time.
      ...(opts.leadingEdge && opts.adaptiveQuiet
        ? {
            quietNow: () => Math.max(MIN_ADAPTIVE_QUIET_MS, 4 * lastCycleMs),
            maxDelayNow: () => Math.max(LEADING_GAP_MS, 4 * lastCycleMs),
          }
        : {}),
      ready: required.size ? ready$ : undefined,
      scheduler,
    }),
    map((s) => {
      // Translate the latest snapshot (level-triggered), not only the batch that woke us.
      const current = materialize(state);
      const since = current.pendingSince ?? isoNow(scheduler);
      state = { ...state, pendingSince: undefined };
      let translated: { result: TranslateResult; changes: OutputChanges };
      const t0 = performance.now();
      try {
        translated = translator.translateWithChanges(current.snapshot);
      } catch (e) {
        restarted = true;
        opts.onError?.(e as Error);
        return undefined;
      }
      const restart = restarted;
      if (restarted && last) translated.changes = everyKey(last, translated.result);
      restarted = false;
      last = translated.result;
      const hashed = hashes.add(translated.result, translated.changes, restart);
      // Worked out a moment later, off the path to the proxies, in slices that leave the event loop
      // to the writes of a push, unless someone reads it first.
      hashing.queued();
      void s;
      const durationMs = performance.now() - t0;
      return lazyOutput(
        {
          seq: current.seq,
          ...translated,
          snapshot: current.snapshot,
          durationMs,
          since,
          complete: current.complete,
        },
        hashed,
      );
    }),
    filter((o): o is EngineOutput => o !== undefined),
  );
  return new Observable<EngineOutput>((subscriber) => {
    // A cycle is the translation and what the subscriber does with it at once (the sinks: building
    // and pushing xDS); its cost sets the adaptive holdoff.
    const sub = outputs$.subscribe({
      next: (o) => {
        const t0 = performance.now();
        subscriber.next(o);
        lastCycleMs = o.durationMs + (performance.now() - t0);
      },
      error: (e) => subscriber.error(e),
      complete: () => subscriber.complete(),
    });
    const connection = state$.connect();
    return () => {
      sub.unsubscribe();
      connection.unsubscribe();
    };
  });
}

type OutputFields = Omit<EngineOutput, 'hash' | 'changed' | 'hashed'>;

function lazyOutput(fields: OutputFields, hashed: SequencedHash): EngineOutput {
  return {
    ...fields,
    get hash() {
      return hashed.hash();
    },
    get changed() {
      return hashed.changed();
    },
    get hashed() {
      return hashed.settled();
    },
  };
}

/** The output with other changes (for a sink that saw none of the outputs before); its hash is still read lazily. */
export function withChanges(out: EngineOutput, changes: OutputChanges): EngineOutput {
  const { seq, result, snapshot, durationMs, since, complete } = out;
  return lazyOutput(
    { seq, result, changes, snapshot, durationMs, since, complete },
    { hash: () => out.hash, changed: () => out.changed, settled: () => out.hashed },
  );
}

/** Every key of one output, as changes: what a sink that saw none of the outputs before needs. */
export function everyKeyOf(result: TranslateResult): OutputChanges {
  return everyKey(result, result);
}

/** Every key of either output, as changes (what a sink needs to resynchronise). */
function everyKey(a: TranslateResult, b: TranslateResult): OutputChanges {
  const keys = (x: ReadonlyMap<string, unknown>, y: ReadonlyMap<string, unknown>) =>
    (x === y ? [...x.keys()] : [...new Set([...x.keys(), ...y.keys()])]).sort();
  return {
    statuses: keys(a.statuses, b.statuses),
    gateways: keys(a.xdsIR.gateways, b.xdsIR.gateways),
    endpoints: keys(a.xdsIR.endpoints, b.xdsIR.endpoints),
    infra: keys(a.infraIR.gateways, b.infraIR.gateways),
    pluginFetches: keys(a.pluginFetches, b.pluginFetches),
  };
}
