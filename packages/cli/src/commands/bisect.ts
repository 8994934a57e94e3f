// `turnpike bisect LOG --object KIND/NS/NAME --condition TYPE[=STATUS]`: the event after which an
// object's condition changed (or reached STATUS), found as git bisect finds a commit: by halving the
// range between a state where it had not and one where it had, so a log of n events costs about
// log2(n) translations. Like git bisect it assumes one change; if the condition flips back and forth,
// the event found is one where it changed. Prints the event, the condition before and after, and the
// semantic diff of that event. Exit 0 when found, 1 when the condition never changes, 2 on error.
import type { Command } from 'commander';
import { objectKey } from '@turnpike/api';
import { readEventLog, type ParsedLog, type WatchEvent } from '@turnpike/engine';
import { Translator, type TranslateResult } from '@turnpike/translator';
import { textFormatFlag } from '../flags.js';
import { CliError } from '../errors.js';
import { LogCheckpoints } from '../log-checkpoints.js';
import { format } from '../output.js';
import { semanticDiff, type SemanticDiff } from '../semantic-diff.js';
import { parseObjectRef } from './explain.js';
import { renderDiff, useColor } from './diff.js';
import { conditionRows, type ConditionRow } from '../status-conditions.js';

export interface BisectResult {
  /** The event after which the condition changed, and the values either side of it. */
  found?: { event: WatchEvent; before: ConditionRow[]; after: ConditionRow[]; diff: SemanticDiff };
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
  const checkpoints = new LogCheckpoints(log);
  const results = new Map<number, TranslateResult>();
  const resultAfter = (index: number): TranslateResult => {
    let r = results.get(index);
    if (!r) results.set(index, (r = new Translator().translate(checkpoints.after(index))));
    return r;
  };
  const valueAfter = (index: number) => conditionOf(resultAfter(index), key, type);
  const lo0 = baselineIndex(log);
  const baseline = valueAfter(lo0);
  const same = (a: ConditionRow[], b: ConditionRow[]) => JSON.stringify(a) === JSON.stringify(b);
  const reached = (index: number) => {
    const value = valueAfter(index);
    return status === undefined ? !same(value, baseline) : value.some((c) => c.status === status);
  };
  const base = { baseline: { seq: log.events[lo0]?.seq ?? 0, value: baseline }, events: log.events.length };
  let lo = lo0;
  let hi = log.events.length - 1;
  if (hi < 0 || (status !== undefined && reached(lo)) || !reached(hi)) return { ...base, translations: results.size };
  // Invariant: not reached after event lo, reached after event hi.
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (reached(mid)) hi = mid;
    else lo = mid;
  }
  const found = {
    event: log.events[hi]!,
    before: valueAfter(hi - 1),
    after: valueAfter(hi),
    diff: semanticDiff(resultAfter(hi - 1), resultAfter(hi)),
  };
  return { ...base, found, translations: results.size };
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
      "find the event after which an object's condition changed (or reached STATUS), in about log2(n) translations",
    )
    .argument('<log>', 'event log (turnpike run --record)')
    .requiredOption('--object <ref>', 'KIND/NAMESPACE/NAME (or KIND/NAME for cluster-scoped kinds)')
    .requiredOption('--condition <spec>', 'TYPE or TYPE=STATUS, e.g. ResolvedRefs=False')
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .option('--color', 'force colour')
    .option('--no-color', 'no colour')
    .action((path: string, opts: { object: string; condition: string; output: string; color?: boolean }) => {
      textFormatFlag(opts.output);
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
        '',
        `what event ${f.event.seq} changed:`,
      ];
      process.stdout.write(
        `${lines.join('\n')}\n${renderDiff(f.diff, useColor(opts.color, process.stdout.isTTY === true, process.env))}`,
      );
    });
}
