// `turnpike diff A B`: what a change to the manifests (or between two points of an event log)
// does to statuses and proxy configuration. Exit 0 when the same, 1 when different, 2 on error.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { loadManifests, type ManifestValidation } from '@turnpike/engine';
import type { TranslateResult } from '@turnpike/translator';
import pc from 'picocolors';
import { CliError } from '../errors.js';
import { VALIDATE_HELP, validationFlag } from '../flags.js';
import { readLogMoment, stateAt } from '../log-state.js';
import { readLiveCluster } from '../live-cluster.js';
import { translateLive, translatePaths } from '../offline.js';
import {
  certificateLookup,
  digestKeyText,
  semanticDiff,
  type CertificateFacts,
  type CertificateLookup,
  type SemanticDiff,
  type SetChange,
} from '../semantic-diff.js';

/**
 * A side's translation, its Secrets' certificates (what a certificate change is said with), and the
 * DigestKey its Secret values are digested under (a log's run; none for files).
 */
interface Side {
  result: TranslateResult;
  certificates: CertificateLookup;
  digestKey?: string;
}

/** A side is a manifest file or directory, or `LOG@SEQ` (the state after event SEQ). */
export function loadSide(spec: string, validation: ManifestValidation = 'strict'): Side {
  const at = spec.lastIndexOf('@');
  if (at > 0 && !existsSync(spec)) {
    const { log, seq } = readLogMoment(spec);
    const state = stateAt(log, seq);
    const digestKey = digestKeyText(state.objects);
    return {
      result: state.result,
      certificates: certificateLookup(state.objects),
      ...(digestKey !== undefined ? { digestKey } : {}),
    };
  }
  const r = translatePaths([spec], '1970-01-01T00:00:00Z', validation);
  for (const e of r.errors) process.stderr.write(`turnpike: error: ${e}\n`);
  for (const w of r.warnings) process.stderr.write(`turnpike: warning: ${w}\n`);
  for (const m of r.skipped) process.stderr.write(`turnpike: warning: ${m}\n`);
  return { result: r.result, certificates: certificateLookup(r.resources) };
}

/**
 * A live cluster against the same cluster with the files applied on top (as `kubectl apply` merges
 * a manifest into a custom resource): what the change would do, before anyone applies it.
 */
async function liveSides(
  opts: { file: string[]; kubeconfig?: string; context?: string },
  validation: ManifestValidation,
): Promise<[Side, Side]> {
  const loaded = opts.file.length ? loadManifests(opts.file, { validation }) : undefined;
  for (const m of loaded?.invalid ?? []) process.stderr.write(`turnpike: error: ${m} (left out)\n`);
  for (const m of loaded?.skipped ?? []) process.stderr.write(`turnpike: warning: ${m}\n`);
  const now = '1970-01-01T00:00:00Z';
  // The cluster is listed once; both sides are translated from that one reading.
  const live = await readLiveCluster(opts);
  const before = translateLive(live, now);
  const after = loaded?.objects.length ? translateLive(live, now, loaded.objects) : before;
  // Said only where it matters: a referenced Secret or ConfigMap neither the record nor the files describe.
  const untold = new Set(
    [...(before.references ?? []), ...(after.references ?? [])]
      .filter((n) => n.judged === 'unknown' || n.notRecorded)
      .flatMap((n) => n.says),
  );
  for (const line of untold) process.stderr.write(`turnpike: note: ${line}\n`);
  return [
    { result: before.result, certificates: certificateLookup(before.resources) },
    { result: after.result, certificates: certificateLookup(after.resources) },
  ];
}

export function registerDiff(program: Command): void {
  program
    .command('diff')
    .description(
      'show what changes between two sets of manifests (or LOG@SEQ points), or what files would change in a live ' +
        'cluster (--kubeconfig K -f CHANGES), in statuses, xDS and infra',
    )
    .argument('[a]', 'manifest file/directory or LOG@SEQ')
    .argument('[b]', 'manifest file/directory or LOG@SEQ')
    .option(
      '-f, --file <path>',
      'with --kubeconfig: the changes, applied on top of the live objects (repeatable)',
      (value: string, earlier: string[]) => [...earlier, value],
      [] as string[],
    )
    .option('--kubeconfig <path>', "compare a live cluster's objects with those files applied (read-only)")
    .option('--context <name>', 'with --kubeconfig: the kubeconfig context to use')
    .option('-o, --output <format>', 'text or json', 'text')
    .option('--color', 'force colour')
    .option('--no-color', 'no colour')
    .option('--validate <mode>', VALIDATE_HELP, 'strict')
    .action(
      async (
        a: string | undefined,
        b: string | undefined,
        opts: {
          output: string;
          color?: boolean;
          validate: string;
          file: string[];
          kubeconfig?: string;
          context?: string;
        },
      ) => {
        const validation = validationFlag(opts.validate);
        let sides: [Side, Side];
        if (opts.kubeconfig !== undefined) {
          if (a !== undefined) throw new CliError('with --kubeconfig, give the changes with -f, not as A B');
          sides = await liveSides(opts, validation);
        } else {
          if (a === undefined || b === undefined)
            throw new CliError('diff needs A and B, or --kubeconfig K -f CHANGES');
          if (opts.file.length) throw new CliError('-f is for --kubeconfig; give A and B');
          sides = [loadSide(a, validation), loadSide(b, validation)];
        }
        const d = semanticDiff(sides[0].result, sides[1].result, {
          before: sides[0].certificates,
          after: sides[1].certificates,
          keysDiffer: sides[0].digestKey !== sides[1].digestKey,
        });
        if (opts.output === 'json') process.stdout.write(`${JSON.stringify(d, null, 2)}\n`);
        else if (opts.output === 'text')
          process.stdout.write(renderDiff(d, useColor(opts.color, process.stdout.isTTY === true, process.env)));
        else throw new CliError(`-o ${opts.output}: unknown format (text, json)`);
        process.exitCode = d.same ? 0 : 1;
      },
    );
}

/** A certificate as a diff says it: its fingerprint and validity (nothing of its key). */
function certText(c: CertificateFacts | undefined): string {
  return c ? `SHA-256 ${c.fingerprint}, valid ${c.notBefore} to ${c.notAfter}` : '(none)';
}

/** --color/--no-color decide; otherwise colour on a terminal, unless NO_COLOR is set (no-color.org). */
export function useColor(flag: boolean | undefined, isTTY: boolean, env: NodeJS.ProcessEnv): boolean {
  if (flag !== undefined) return flag;
  return isTTY && !env.NO_COLOR;
}

export function renderDiff(d: SemanticDiff, color: boolean): string {
  const c = pc.createColors(color);
  const note = d.note ? `note: ${d.note}\n` : '';
  if (d.same) return `no differences\n${note}`;
  const lines: string[] = [];
  const sym = (change: string) =>
    change === 'added' ? c.green('+') : change === 'removed' ? c.red('-') : c.yellow('~');
  if (d.objects.length) lines.push(c.bold('statuses'));
  for (const o of d.objects) {
    lines.push(`${sym(o.change)} ${o.object}`);
    for (const ch of o.conditions) {
      lines.push(
        `    ${ch.where ? ch.where + ' ' : ''}${ch.type}: ${ch.old ? c.red(ch.old) : '(none)'} → ` +
          `${ch.new ? c.green(ch.new) : '(none)'}`,
      );
    }
    for (const r of o.attachedRoutes)
      lines.push(`    listener ${r.listener} attachedRoutes: ${r.old ?? '(none)'} → ${r.new ?? '(none)'}`);
  }
  const set = (label: string, s: SetChange) => {
    for (const k of s.added) lines.push(`    ${c.green('+')} ${label} ${k}`);
    for (const k of s.removed) lines.push(`    ${c.red('-')} ${label} ${k}`);
    for (const k of s.changed) lines.push(`    ${c.yellow('~')} ${label} ${k}`);
  };
  if (d.xds.length) lines.push(c.bold('xds'));
  for (const g of d.xds) {
    lines.push(`${sym(g.change)} gateway ${g.gateway}`);
    set('listener', g.listeners);
    set('route', g.routes);
    set('cluster', g.clusters);
    for (const ch of g.certificates)
      lines.push(
        `    ${sym(ch.change)} certificate ${ch.secret}: ` +
          (ch.old || ch.new ? `${certText(ch.old)} → ${certText(ch.new)}` : 'what is served changed'),
      );
  }
  if (d.infra.length) lines.push(c.bold('infra'));
  for (const i of d.infra) {
    lines.push(`${sym(i.change)} gateway ${i.gateway}${i.fields.length ? `: ${i.fields.join(', ')}` : ''}`);
    if (i.held)
      lines.push(
        `    rollout held by ${i.held.by}: the Deployment keeps its pod template; ` +
          (i.held.pending.length ? `pending: ${i.held.pending.join(', ')}` : 'no change pending'),
      );
  }
  return `${lines.join('\n')}\n${note}`;
}
