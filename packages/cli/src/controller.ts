// The composition root. Every way of running Turnpike is the same pipeline: sources → one engine
// (store, holdoff, translator) → sinks, with the event log recording both ends. `run --dir`,
// `run --kubeconfig` and `replay` differ only in the sources and sinks they pass here.
import {
  everyKeyOf,
  runEngine,
  withChanges,
  type EngineOutput,
  type SourceEvent,
  type WatchEvent,
} from '@turnpike/engine';
import type { EventRecorder } from './console/live-log.js';
import type { Observable, SchedulerLike } from 'rxjs';
import { Translator, type OutputChanges, type TranslateOptions } from '@turnpike/translator';

/** Where a translation's output goes: the xDS cache, the status writer, the infra applier, stdout… */
export interface Sink {
  readonly name: string;
  /**
   * A translation whose output differs from the one before; `out.changes` says which entries. A
   * sink sees every such output in order, so it may apply the changes to what it kept.
   */
  accept(out: EngineOutput): void;
  close?(): Promise<void> | void;
  /**
   * Also takes the translations made before the `completeAfter` sources synced (the plugin fetch
   * worker, which those translations feed). Other sinks start at the first complete one, told
   * every key of it as changed.
   */
  beforeComplete?: boolean;
}

export interface ControllerOptions {
  sources: Observable<SourceEvent | WatchEvent>[];
  /** Sources that must have listed everything before the first translation. */
  sourceNames: string[];
  /** Sources fed by the translations (plugins) that must be synced before most sinks act on one. */
  completeAfter?: string[];
  sinks: Sink[];
  /** The translator's options (where proxies are placed); the event log's header records them. */
  translateOptions?: TranslateOptions;
  quietMs: number;
  maxDelayMs: number;
  /** Translate a change that finds the stream idle at once (recorded in the log header as leadingEdge). */
  leadingEdge?: boolean;
  /** The trailing quiet period follows what translations cost (wall time: not for replay). */
  adaptiveQuiet?: boolean;
  scheduler?: SchedulerLike;
  /** The number before the first event (a flight recording's last, after a restart). */
  firstSeq?: number;
  /** The event log file, the console's in-memory log, or both (teeRecorder). */
  recorder?: EventRecorder;
  /** Also told of every event (metrics). */
  onEvent?: (e: WatchEvent) => void;
  /** Also told of every translation, changed or not (metrics, readiness). */
  onTranslation?: (out: EngineOutput) => void;
  onError: (where: string, e: Error) => void;
}

export interface Controller {
  /** Stops the engine, then closes the sinks and the event log. */
  stop(): Promise<void>;
}

function changedAnything(out: EngineOutput): boolean {
  // The changes first: they are at hand, the hash is worked out when read.
  return Object.values(out.changes).some((keys) => keys.length > 0) || out.changed;
}

export function startController(o: ControllerOptions): Controller {
  const started = new Set<Sink>();
  const sub = runEngine({
    sources: o.sources,
    sourceNames: o.sourceNames,
    ...(o.completeAfter ? { completeAfter: o.completeAfter } : {}),
    quietMs: o.quietMs,
    maxDelayMs: o.maxDelayMs,
    ...(o.leadingEdge ? { leadingEdge: true } : {}),
    ...(o.adaptiveQuiet ? { adaptiveQuiet: true } : {}),
    ...(o.scheduler ? { scheduler: o.scheduler } : {}),
    ...(o.firstSeq ? { firstSeq: o.firstSeq } : {}),
    ...(o.translateOptions ? { translator: new Translator(o.translateOptions) } : {}),
    onEvent: (e) => {
      o.recorder?.event(e);
      o.onEvent?.(e);
    },
    onError: (e) => o.onError('translation', e),
  }).subscribe((out) => {
    // Recorded with its hash to come, once the sinks have pushed it (the recorder keeps the order).
    o.recorder?.output(out.seq, { read: () => out.hash, settled: out.hashed });
    o.onTranslation?.(out);
    let changed: boolean | undefined;
    let everyKey: OutputChanges | undefined;
    for (const sink of o.sinks) {
      try {
        if (sink.beforeComplete || started.has(sink)) {
          if ((changed ??= changedAnything(out))) sink.accept(out);
        } else if (out.complete) {
          started.add(sink);
          sink.accept(withChanges(out, (everyKey ??= everyKeyOf(out.result))));
        }
      } catch (e) {
        // One failing sink must not keep the others (or the next translation) from running.
        o.onError(`sink ${sink.name}`, e as Error);
      }
    }
  });
  return {
    async stop() {
      sub.unsubscribe();
      o.recorder?.close();
      await Promise.all(o.sinks.map((s) => s.close?.()));
    },
  };
}
