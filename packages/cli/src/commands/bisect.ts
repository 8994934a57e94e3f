// `turnpike bisect LOG --object KIND/NS/NAME --condition TYPE[=STATUS] [--all]`: the first event
// after which an object's condition differs from its value at the start (or reaches STATUS), exact
// for any history: a change that reverts at the next event is found too. The log is walked event by
// event with one incremental translator (an event that touches nothing the object depends on costs
// next to nothing), and every change is kept: `--all` lists them. Prints the event, the condition
// before and after, and the semantic diff of that event. Exit 0 when found, 1 when the condition
// never changes (or never reaches STATUS), 2 on error.
import type { Command } from 'commander';
import { objectKey } from '@turnpike/api';
import { applyEvents, readEventLog, type LogGap, type ParsedLog, type WatchEvent } from '@turnpike/engine';
import type { TranslateResult } from '@turnpike/translator';
import { checkpointStore, gapCheckpoints, resolveMoment, storeAt, translatorFor } from '../log-state.js';
import { textFormatFlag } from '../flags.js';
import { CliError } from '../errors.js';
import { format } from '../output.js';
import { semanticDiff, type SemanticDiff } from '../semantic-diff.js';
import { parseObjectRef } from './explain.js';
import { renderDiff, useColor } from './diff.js';
import { conditionRows, type ConditionRow } from '../status-conditions.js';

export interface ConditionChange {
  event: WatchEvent;
  before: ConditionRow[];
  after: ConditionRow[];
  /** The log has a gap just before `event` (time it did not record): the change happened in it or at the event. */
  gap?: LogGap;
}

export interface BisectResult {
  /** The first event after which the condition differed from the baseline (or reached STATUS). */
  found?: ConditionChange & { diff: SemanticDiff };
  /** Every event after which the condition changed, in log order. */
  changes: ConditionChange[];
  /** The state the search started from (the controller's first translation, when the log has one). */
  baseline: { seq: number; value: ConditionRow[] };
  translations: number;
  events: number;
}

/** The condition wherever the object's status carries it (itself, listeners, parents, ancestors). */
export function conditionOf(result: TranslateResult, key: string, type: string): ConditionRow[] {
  return conditionRows(result.statuses.get(key)).filter((c) => c.type === type);
}

/** Where the search starts: the first translation the controller made (after its initial sync). */
function baselineIndex(log: ParsedLog): number {
  const first = log.outputs[0]?.seq ?? log.events.find((e) => e.type === 'synced')?.seq;
  const index = first === undefined ? 0 : log.events.findIndex((e) => e.seq >= first);
  return Math.max(0, index);
}

export interface BisectRange {
  /** Search from the first event at or after this one (default: the controller's first translation). */
  since?: number;
  /** Search up to this event (default: the end of the log). */
  until?: number;
}

export function bisectLog(
  log: ParsedLog,
  key: string,
  type: string,
  status?: string,
  range: BisectRange = {},
): BisectResult {
  let lo = baselineIndex(log);
  if (range.since !== undefined)
    lo = Math.max(
      lo,
      log.events.findIndex((e) => e.seq >= range.since!),
    );
  if (lo < 0) lo = log.events.length;
  let end = log.events.length;
  if (range.until !== undefined) {
    const past = log.events.findIndex((e) => e.seq > range.until!);
    if (past >= 0) end = past;
  }
  const translator = translatorFor(log.header);
  const gaps = gapCheckpoints(log);
  // The walk applies every event once, from the nearest checkpoint before the baseline.
  let snapshot = storeAt(log, log.events[lo]?.seq ?? log.events.at(-1)?.seq).snapshot;
  let result = translator.translate(snapshot);
  let translations = 1;
  const baseline = conditionOf(result, key, type);
  const text = (v: ConditionRow[]) => JSON.stringify(v);
  const reached = (v: ConditionRow[]) =>
    status === undefined ? text(v) !== text(baseline) : v.some((c) => c.status === status);
  const out: BisectResult = {
    changes: [],
    baseline: { seq: log.events[lo]?.seq ?? 0, value: baseline },
    translations: 0,
    events: log.events.length,
  };
  // Reached at the start: there is no event after which it was first reached.
  if (!log.events.length || (status !== undefined && reached(baseline))) return { ...out, translations };
  let before = baseline;
  for (let index = lo + 1; index < end; index++) {
    const event = log.events[index]!;
    const gap = gaps.get(index);
    if (gap) snapshot = checkpointStore(gap);
    snapshot = applyEvents(snapshot, [event]).snapshot;
    const previous = result;
    result = translator.translate(snapshot);
    translations++;
    const after = conditionOf(result, key, type);
    if (text(after) === text(before)) continue;
    const change: ConditionChange = { event, before, after, ...(gap?.gap ? { gap: gap.gap } : {}) };
    out.changes.push(change);
    if (!out.found && reached(after)) out.found = { ...change, diff: semanticDiff(previous, result) };
    before = after;
  }
  return { ...out, translations };
}

function describeEvent(e: WatchEvent, gap?: LogGap): string {
  const name = `${e.namespace ? `${e.namespace}/` : ''}${e.name ?? ''}`;
  const where = `event ${e.seq} at ${e.at}: ${e.type} ${e.kind}${name ? ` ${name}` : ''} (source ${e.source})`;
  if (!gap) return where;
  return `${where}, or in the gap before it (not recorded, ${gap.reason}: ${gap.from ?? 'before the log'} – ${gap.to})`;
}

function describeValue(value: ConditionRow[]): string {
  if (!value.length) return '(none)';
  return value.map((c) => `${c.where ? `${c.where} ` : ''}${c.status}/${c.reason}`).join(', ');
}

function parseCondition(spec: string): { type: string; status?: string } {
  const [type, status, extra] = spec.split('=');
  if (!type || extra !== undefined || (status !== undefined && !['True', 'False', 'Unknown'].includes(status))) {
    throw new CliError(`--condition ${spec}: use TYPE or TYPE=STATUS (True, False or Unknown)`);
  }
  return status === undefined ? { type } : { type, status };
}

export function registerBisect(program: Command): void {
  program
    .command('bisect')
    .description(
      "find the first event after which an object's condition changed (or reached STATUS), exact for any history",
    )
    .argument('<log>', 'event log (run --record), recorder directory or capture (turnpike capture)')
    .option('--since <moment>', 'search from this event or time (RFC 3339)')
    .option('--until <moment>', 'search up to this event or time (RFC 3339)')
    .requiredOption('--object <ref>', 'KIND/NAMESPACE/NAME (or KIND/NAME for cluster-scoped kinds)')
    .requiredOption('--condition <spec>', 'TYPE or TYPE=STATUS, e.g. ResolvedRefs=False')
    .option('--all', 'list every change of the condition, not only the first')
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .option('--color', 'force colour')
    .option('--no-color', 'no colour')
    .action(
      (
        path: string,
        opts: {
          object: string;
          condition: string;
          output: string;
          color?: boolean;
          all?: boolean;
          since?: string;
          until?: string;
        },
      ) => {
        opts.output = textFormatFlag(opts.output);
        const ref = parseObjectRef(opts.object);
        const { type, status } = parseCondition(opts.condition);
        const log = readEventLog(path);
        for (const w of log.warnings ?? []) process.stderr.write(`turnpike: warning: ${w}\n`);
        const range = {
          ...(opts.since !== undefined ? { since: resolveMoment(log, opts.since, '--since') } : {}),
          ...(opts.until !== undefined ? { until: resolveMoment(log, opts.until, '--until') } : {}),
        };
        const r = bisectLog(log, objectKey(ref.kind, ref.namespace, ref.name), type, status, range);
        process.exitCode = r.found ? 0 : 1;
        if (opts.output !== 'text') {
          process.stdout.write(format(r, opts.output as 'json' | 'yaml'));
          return;
        }
        const what = `${opts.object} ${type}${status ? `=${status}` : ''}`;
        const cost = `${r.translations} translation(s) over ${r.events} event(s)`;
        if (!r.found) {
          const since = `from event ${r.baseline.seq} (${describeValue(r.baseline.value)})`;
          process.stdout.write(
            `${what}: ${status ? 'never reached' : 'never changed'} ${since} to the end of the log; ${cost}\n`,
          );
          return;
        }
        const f = r.found;
        const lines = [
          describeEvent(f.event, f.gap),
          `${opts.object} ${type}: ${describeValue(f.before)} → ${describeValue(f.after)}`,
          ...f.after.filter((c) => c.message).map((c) => `  ${c.where ? `${c.where}: ` : ''}${c.message}`),
          `found in ${cost}`,
          ...(opts.all
            ? [
                '',
                `every change (${r.changes.length}):`,
                ...r.changes.map(
                  (c) => `  ${describeEvent(c.event, c.gap)}: ${describeValue(c.before)} → ${describeValue(c.after)}`,
                ),
              ]
            : []),
          '',
          `what event ${f.event.seq} changed:`,
        ];
        process.stdout.write(
          `${lines.join('\n')}\n${renderDiff(f.diff, useColor(opts.color, process.stdout.isTTY === true, process.env))}`,
        );
      },
    );
}
