// `turnpike bisect LOG --object KIND/NS/NAME --condition TYPE[=STATUS] [--all]`: the first event
// after which an object's condition differs from its value at the start (or reaches STATUS), exact
// for any history: a change that reverts at the next event is found too. The log is walked event by
// event with one incremental translator (an event that touches nothing the object depends on costs
// next to nothing), and every change is kept: `--all` lists them. Prints the event, the condition
// before and after, and the semantic diff of that event. Exit 0 when found, 1 when the condition
// never changes (or never reaches STATUS), 2 on error.
import type { Command } from 'commander';
import { objectKey } from '@turnpike/api';
import { applyEvents, EMPTY_SNAPSHOT, readEventLog, type ParsedLog, type WatchEvent } from '@turnpike/engine';
import type { TranslateResult } from '@turnpike/translator';
import { translatorFor } from '../log-state.js';
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

export function bisectLog(log: ParsedLog, key: string, type: string, status?: string): BisectResult {
  const lo = baselineIndex(log);
  const translator = translatorFor(log.header);
  // The walk applies every event once: the baseline state is the log's first lo + 1 events.
  let snapshot = applyEvents(EMPTY_SNAPSHOT, log.events.slice(0, lo + 1)).snapshot;
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
  for (let index = lo + 1; index < log.events.length; index++) {
    const event = log.events[index]!;
    snapshot = applyEvents(snapshot, [event]).snapshot;
    const previous = result;
    result = translator.translate(snapshot);
    translations++;
    const after = conditionOf(result, key, type);
    if (text(after) === text(before)) continue;
    out.changes.push({ event, before, after });
    if (!out.found && reached(after)) out.found = { event, before, after, diff: semanticDiff(previous, result) };
    before = after;
  }
  return { ...out, translations };
}

function describeEvent(e: WatchEvent): string {
  const name = `${e.namespace ? `${e.namespace}/` : ''}${e.name ?? ''}`;
  return `event ${e.seq} at ${e.at}: ${e.type} ${e.kind}${name ? ` ${name}` : ''} (source ${e.source})`;
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
    .argument('<log>', 'event log (turnpike run --record)')
    .requiredOption('--object <ref>', 'KIND/NAMESPACE/NAME (or KIND/NAME for cluster-scoped kinds)')
    .requiredOption('--condition <spec>', 'TYPE or TYPE=STATUS, e.g. ResolvedRefs=False')
    .option('--all', 'list every change of the condition, not only the first')
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .option('--color', 'force colour')
    .option('--no-color', 'no colour')
    .action(
      (path: string, opts: { object: string; condition: string; output: string; color?: boolean; all?: boolean }) => {
        opts.output = textFormatFlag(opts.output);
        const ref = parseObjectRef(opts.object);
        const { type, status } = parseCondition(opts.condition);
        const log = readEventLog(path);
        const r = bisectLog(log, objectKey(ref.kind, ref.namespace, ref.name), type, status);
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
          describeEvent(f.event),
          `${opts.object} ${type}: ${describeValue(f.before)} → ${describeValue(f.after)}`,
          ...f.after.filter((c) => c.message).map((c) => `  ${c.where ? `${c.where}: ` : ''}${c.message}`),
          `found in ${cost}`,
          ...(opts.all
            ? [
                '',
                `every change (${r.changes.length}):`,
                ...r.changes.map(
                  (c) => `  ${describeEvent(c.event)}: ${describeValue(c.before)} → ${describeValue(c.after)}`,
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
