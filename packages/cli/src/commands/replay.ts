// `turnpike replay LOG`: re-runs a recorded event log through the same engine on the log's own
// clock (virtual time, same holdoff) and prints the outputs at the chosen point. `--verify`
// recomputes every recorded output hash and stops at the first divergence.
import type { Command } from 'commander';
import { readEventLog, replaySource, runEngine, type EngineOutput } from '@turnpike/engine';
import { VirtualTimeScheduler } from 'rxjs';
import { CliError } from '../errors.js';
import { stateAt, verifyLog } from '../log-state.js';
import { withStatuses } from '../offline.js';
import { format, parseFormat } from '../output.js';
import { progressBar } from '../progress.js';

interface ReplayOptions { until?: string; verify?: boolean; output: string; to: string; timeline?: boolean }

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('re-run a recorded event log and print the outputs at a chosen event')
    .argument('<log>', 'event log written by run --record')
    .option('--until <seq>', 'stop after this event (default: the end of the log)')
    .option('--verify', 'recompute every recorded output hash; exit 1 at the first divergence')
    .option('--timeline', 'list when the engine translated (virtual time) instead of printing outputs')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .option('--to <what>', 'resources, ir or all', 'all')
    .action((path: string, opts: ReplayOptions) => {
      const fmt = parseFormat(opts.output);
      if (!['resources', 'ir', 'all'].includes(opts.to)) throw new CliError(`--to ${opts.to}: unknown target (resources, ir, all)`);
      const log = readEventLog(path);
      const until = opts.until === undefined ? undefined : Number(opts.until);
      if (until !== undefined && (!Number.isInteger(until) || until < 0)) throw new CliError(`--until ${opts.until}: not an event number`);
      if (opts.verify) {
        const bar = progressBar('verifying');
        const r = verifyLog(log, bar);
        bar.end();
        if (r.divergence) {
          const d = r.divergence;
          const ev = d.event ? ` (${d.event.type} ${d.event.kind} ${d.event.namespace ? d.event.namespace + '/' : ''}${d.event.name ?? ''})` : '';
          process.stderr.write(`turnpike: replay diverges at the output after event ${d.output.seq}${ev}: recorded ${d.output.hash.slice(0, 16)}, replayed ${d.replayed.slice(0, 16)}\n`);
          process.exitCode = 1;
          return;
        }
        process.stderr.write(`turnpike: verified ${r.checked} output(s) over ${log.events.length} event(s): identical\n`);
        return;
      }
      if (opts.timeline) {
        for (const o of engineTimeline(log, until)) process.stdout.write(`${JSON.stringify(o)}\n`);
        return;
      }
      const state = stateAt(log, until);
      const resources = withStatuses(state.objects, state.result, log.events.find((e) => e.seq === state.seq)?.at ?? log.header.createdAt);
      const out = opts.to === 'resources' ? { seq: state.seq, resources }
        : opts.to === 'ir' ? { seq: state.seq, xdsIR: state.result.xdsIR, infraIR: state.result.infraIR }
        : { seq: state.seq, hash: state.hash, resources, xdsIR: state.result.xdsIR, infraIR: state.result.infraIR };
      process.stdout.write(format(out, fmt));
    });
}

/** The translations the engine makes over the log, on virtual time with the recorded holdoff. */
export function engineTimeline(log: ReturnType<typeof readEventLog>, until?: number): { at: string; seq: number; hash: string; changed: boolean }[] {
  const events = until === undefined ? log.events : log.events.filter((e) => e.seq <= until);
  if (!events.length) return [];
  const scheduler = new VirtualTimeScheduler();
  const start = Date.parse(events[0]!.at);
  const sources = [...new Set(events.filter((e) => e.type === 'synced' && e.kind === '*').map((e) => e.source))];
  const outputs: { at: string; seq: number; hash: string; changed: boolean }[] = [];
  runEngine({
    sources: [replaySource(events, scheduler, start)],
    sourceNames: sources,
    quietMs: log.header.quietMs,
    maxDelayMs: log.header.maxDelayMs,
    scheduler,
  }).subscribe((o: EngineOutput) => outputs.push({ at: new Date(start + scheduler.now()).toISOString(), seq: o.seq, hash: o.hash, changed: o.changed }));
  scheduler.flush();
  return outputs;
}
