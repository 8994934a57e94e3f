// `turnpike replay LOG`: re-runs a recorded event log through the same engine on the log's own
// clock (virtual time, same holdoff) and prints the outputs at the chosen point. `--verify`
// recomputes every recorded output hash and stops at the first divergence.
import type { Command } from 'commander';
import { readEventLog, replaySource, type EngineOutput, type WatchEvent } from '@turnpike/engine';
import { VirtualTimeScheduler } from 'rxjs';
import { startController } from '../controller.js';
import { CliError } from '../errors.js';
import { gapCheckpoints, resolveMoment, stateAt, translateOptionsFor, verifyLog } from '../log-state.js';
import { withStatuses } from '../offline.js';
import { format, parseFormat } from '../output.js';
import { progressBar } from '../progress.js';

interface ReplayOptions {
  until?: string;
  verify?: boolean;
  output: string;
  to: string;
  timeline?: boolean;
}

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('re-run a recorded event log and print the outputs at a chosen event')
    .argument('<log>', 'event log (run --record), recorder directory or capture (turnpike capture)')
    .option(
      '--until <moment>',
      'stop after this event, or the last one at or before a time (RFC 3339); default: the end',
    )
    .option('--verify', 'recompute every recorded output hash; exit 1 at the first divergence')
    .option('--timeline', 'list when the engine translated (virtual time) instead of printing outputs')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .option('--to <what>', 'resources, ir or all', 'all')
    .action((path: string, opts: ReplayOptions) => {
      const fmt = parseFormat(opts.output);
      if (!['resources', 'ir', 'all'].includes(opts.to))
        throw new CliError(`--to ${opts.to}: unknown target (resources, ir, all)`);
      const log = readEventLog(path);
      for (const w of log.warnings ?? []) process.stderr.write(`turnpike: warning: ${w}\n`);
      const until = opts.until === undefined ? undefined : resolveMoment(log, opts.until, '--until');
      if (opts.verify) {
        const bar = progressBar('verifying');
        const r = verifyLog(log, bar);
        bar.end();
        if (r.divergence) {
          const d = r.divergence;
          const ev = d.event
            ? ` (${d.event.type} ${d.event.kind} ` +
              `${d.event.namespace ? d.event.namespace + '/' : ''}${d.event.name ?? ''})`
            : '';
          process.stderr.write(
            `turnpike: replay diverges at the output after event ${d.output.seq}${ev}: recorded ` +
              `${d.output.hash.slice(0, 16)}, replayed ${d.replayed.slice(0, 16)}\n`,
          );
          process.exitCode = 1;
          return;
        }
        const unknown = r.unknown
          ? `; ${r.unknown} output(s) the log holds no events for (before its first checkpoint or in a gap) not checked`
          : '';
        process.stderr.write(
          `turnpike: verified ${r.checked} output(s) over ${log.events.length} event(s): identical${unknown}\n`,
        );
        return;
      }
      if (opts.timeline) {
        const bar = progressBar('replaying');
        const timeline = engineTimeline(log, until, bar);
        bar.end();
        for (const o of timeline) process.stdout.write(`${JSON.stringify(o)}\n`);
        process.stderr.write(`turnpike: ${timelineSummary(log, timeline, until)}\n`);
        return;
      }
      const state = stateAt(log, until);
      const resources = withStatuses(
        state.objects,
        state.result,
        log.events.find((e) => e.seq === state.seq)?.at ?? log.header.createdAt,
      );
      const out =
        opts.to === 'resources'
          ? { seq: state.seq, resources }
          : opts.to === 'ir'
            ? { seq: state.seq, xdsIR: state.result.xdsIR, infraIR: state.result.infraIR }
            : { seq: state.seq, hash: state.hash, resources, xdsIR: state.result.xdsIR, infraIR: state.result.infraIR };
      process.stdout.write(format(out, fmt));
    });
}

export interface TimelineEntry {
  at: string;
  seq: number;
  hash: string;
  changed: boolean;
  /** The hash the log recorded for a translation after this event, or null if it recorded none there. */
  recorded: string | null;
}

/**
 * The translations the engine makes over the log, on virtual time with the recorded holdoff, each
 * beside what the log recorded at the same event.
 */
export function engineTimeline(
  log: ReturnType<typeof readEventLog>,
  until?: number,
  progress?: (done: number, total: number) => void,
): TimelineEntry[] {
  let events = until === undefined ? log.events : log.events.filter((e) => e.seq <= until);
  // A recording replays from the checkpoint after its last gap (or its first): the engine is given
  // that store as upserts at the checkpoint's moment, then the events after it.
  const from = [...(log.checkpoints?.slice(0, 1) ?? []), ...gapCheckpoints(log).values()]
    .filter((c) => c.index <= events.length)
    .at(-1);
  if (from) {
    const base = from.objects.map((object): WatchEvent => ({
      seq: from.seq,
      at: from.at,
      source: 'checkpoint',
      type: 'upsert',
      kind: object.kind,
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      name: object.metadata.name,
      object,
    }));
    events = [...base, ...events.slice(from.index)];
  }
  if (!events.length) return [];
  const recorded = new Map(log.outputs.map((o) => [o.seq, o.hash]));
  const position = new Map(events.map((e, i) => [e.seq, i + 1]));
  const scheduler = new VirtualTimeScheduler();
  const start = Date.parse(events[0]!.at);
  const synced = [...new Set(events.filter((e) => e.type === 'synced' && e.kind === '*').map((e) => e.source))];
  // The gate the controller ran with: its completing sources (plugins) do not gate translation.
  const completeAfter = log.header.completeAfter ?? [];
  const sources = synced.filter((s) => !completeAfter.includes(s));
  const outputs: TimelineEntry[] = [];
  let failure: string | undefined;
  // The same composition root as run: the log is the source, and there are no sinks (only the timeline).
  const controller = startController({
    sources: [replaySource(events, scheduler, start)],
    sourceNames: sources,
    completeAfter,
    sinks: [],
    translateOptions: translateOptionsFor(log.header),
    quietMs: log.header.quietMs,
    maxDelayMs: log.header.maxDelayMs,
    ...(log.header.leadingEdge ? { leadingEdge: true } : {}),
    scheduler,
    onTranslation: (o: EngineOutput) => {
      const at = new Date(start + scheduler.now()).toISOString();
      outputs.push({ at, seq: o.seq, hash: o.hash, changed: o.changed, recorded: recorded.get(o.seq) ?? null });
      progress?.(position.get(o.seq) ?? 0, events.length);
    },
    onError: (where, e) => {
      failure ??= `replaying the log: ${where} failed: ${e.message}`;
    },
  });
  scheduler.flush();
  void controller.stop();
  if (failure) throw new CliError(failure);
  return outputs;
}

/**
 * Counts as the log has them: events read, translations recorded, translations replayed, and where
 * the two differ (a live holdoff also waits on wall-clock time the log's stamps only approximate).
 */
export function timelineSummary(
  log: ReturnType<typeof readEventLog>,
  timeline: readonly TimelineEntry[],
  until?: number,
): string {
  const events = until === undefined ? log.events.length : log.events.filter((e) => e.seq <= until).length;
  const recorded = until === undefined ? log.outputs : log.outputs.filter((o) => o.seq <= until);
  const replayedAt = new Set(timeline.map((t) => t.seq));
  const onlyRecorded = recorded.filter((o) => !replayedAt.has(o.seq)).length;
  const onlyReplayed = timeline.filter((t) => t.recorded === null).length;
  const differentHash = timeline.filter((t) => t.recorded !== null && t.recorded !== t.hash).length;
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const head = `${plural(events, 'event')}, ${plural(recorded.length, 'translation')} recorded, ${timeline.length} replayed`;
  if (!onlyRecorded && !onlyReplayed && !differentHash) return `${head}: the same`;
  const parts = [
    onlyReplayed ? `${onlyReplayed} replayed at an event where the log recorded none` : '',
    onlyRecorded ? `${onlyRecorded} recorded at an event where the replay made none` : '',
    differentHash ? `${differentHash} with another output hash (see --verify)` : '',
  ].filter(Boolean);
  return `${head}: ${parts.join('; ')}`;
}
