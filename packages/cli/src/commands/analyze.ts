// `turnpike analyze -f FILE|DIR`: for CI. Translates the manifests offline and lists every
// problem a status would report, every backendRef that does not resolve, every manifest or
// translation error and everything skipped, one line each, naming the object, where in it and why;
// as warnings, what is not ours to judge (analyze-scope.ts), and each policy of a kind we do not read that
// targets what we serve (then served without it: a skipped object that matters). Exit codes in EXIT_CODES_HELP.
import type { Command } from 'commander';
import type { Condition } from '@turnpike/api';
import { ignoredPolicies } from '@turnpike/translator';
import { CliError } from '../errors.js';
import { liveOrFileInputOptions, textFormatFlag, validationFlag, type LiveOrFileInput } from '../flags.js';
import { translateLive, translatePaths, type OfflineResult } from '../offline.js';
import { format } from '../output.js';
import { isTrouble } from '../status-lines.js';
import { backendProblems, scopeWarnings } from '../analyze-scope.js';
import { kubeconfigPath, readLiveCluster } from '../live-cluster.js';
import { recordSummary } from '../live-references.js';

export interface Finding {
  object: string;
  where?: string;
  type: string;
  status: string;
  reason: string;
  message: string;
}

type AnyStatus = Record<string, unknown>;

export function findings(statuses: Iterable<[string, unknown]>, withEndpoints: boolean): Finding[] {
  const out: Finding[] = [];
  const scan = (object: string, where: string | undefined, list: unknown) => {
    for (const c of (list as Condition[] | undefined) ?? []) {
      // Without EndpointSlices in the manifests every backend looks unavailable: only when asked.
      if (isTrouble(c) && (withEndpoints || c.type !== 'BackendsAvailable'))
        out.push({
          object,
          ...(where ? { where } : {}),
          type: c.type,
          status: c.status,
          reason: c.reason,
          message: c.message,
        });
    }
  };
  for (const [key, st] of statuses) {
    const s = st as AnyStatus;
    scan(key, undefined, s.conditions);
    for (const l of (s.listeners as AnyStatus[] | undefined) ?? [])
      scan(key, `listener ${String(l.name)}`, l.conditions);
    for (const p of (s.parents as AnyStatus[] | undefined) ?? []) {
      const r = p.parentRef as Record<string, unknown>;
      const namespace = r.namespace ? `${String(r.namespace)}/` : '';
      const section = r.sectionName ? `/${String(r.sectionName)}` : '';
      scan(key, `parent ${namespace}${String(r.name)}${section}`, p.conditions);
    }
    for (const a of (s.ancestors as AnyStatus[] | undefined) ?? []) {
      const r = a.ancestorRef as Record<string, unknown>;
      scan(key, `ancestor ${String(r.namespace)}/${String(r.name)}`, a.conditions);
    }
  }
  return out;
}

export const EXIT_CODES_HELP =
  'Exit codes: 0 nothing to report; 1 a problem (a status condition that is not as it should be, a backendRef ' +
  'that does not resolve, an object the API server would refuse, a file or object skipped, such as a policy of a ' +
  'kind turnpike does not read that targets an object it serves); 3 only warnings ' +
  'about objects that are not ours to judge (a gatewayClassName or parent Gateway absent from the manifests, or ' +
  "another controller's); 2 the input could not be read.";

/** Objects of the namespace asked for (-n); cluster-scoped ones are always reported. */
function inNamespace(namespace: string | undefined): (object: string) => boolean {
  if (namespace === undefined) return () => true;
  return (object) => {
    const [, ns] = object.split('/');
    return ns === '' || ns === namespace;
  };
}

/** Files (-f), or a live cluster (--kubeconfig), translated. */
export async function analyzedInput(opts: LiveOrFileInput): Promise<OfflineResult> {
  if (opts.kubeconfig !== undefined && opts.file.length)
    throw new CliError('give -f FILE|DIR or --kubeconfig PATH, not both');
  // Without files, the cluster kubectl would talk to (as `kubectl turnpike analyze -A` expects).
  const kubeconfig = opts.file.length ? undefined : kubeconfigPath(opts.kubeconfig);
  if (kubeconfig !== undefined)
    return translateLive(await readLiveCluster({ ...opts, kubeconfig }), new Date().toISOString());
  if (!opts.file.length)
    throw new CliError('give -f FILE|DIR (repeatable), or a cluster: --kubeconfig PATH, $KUBECONFIG or ~/.kube/config');
  if (opts.context !== undefined || opts.namespace !== undefined)
    throw new CliError('--context and -n/--namespace are for --kubeconfig');
  return translatePaths(opts.file, new Date().toISOString(), validationFlag(opts.validate));
}

export function registerAnalyze(program: Command): void {
  liveOrFileInputOptions(
    program
      .command('analyze')
      .description(
        'list every problem the statuses of these manifests (or of a live cluster) would report; exit 1 if there ' +
          'is any (for CI)',
      )
      .addHelpText('after', `\n${EXIT_CODES_HELP}`),
  )
    .option('--endpoints', 'also report backends without ready endpoints (when the manifests include EndpointSlices)')
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .action(async (opts: LiveOrFileInput & { endpoints?: boolean; output: string }) => {
      opts.output = textFormatFlag(opts.output);
      const r = await analyzedInput(opts);
      const wanted = inNamespace(opts.allNamespaces ? undefined : opts.namespace);
      const found = findings(
        [...r.result.statuses.sortedKeys()].map((k) => [k, r.result.statuses.get(k)]),
        !!opts.endpoints || opts.file.length === 0,
      ).filter((f) => wanted(f.object));
      const inputs = r.resources;
      // ResolvedRefs names the first; the others are reported on their own.
      const said = (b: { object: string; where: string }) =>
        found.some((f) => f.object === b.object && f.type === 'ResolvedRefs' && f.message.startsWith(`${b.where}: `));
      for (const b of backendProblems(inputs, r.translator).filter((b) => !said(b) && wanted(b.object)))
        found.push({
          object: b.object,
          where: b.where,
          type: 'BackendRef',
          status: 'False',
          reason: b.reason,
          message: b.message,
        });
      const errors = [
        ...r.errors.map((e) => ({ level: 'error', message: e })),
        ...r.skipped.map((m) => ({ level: 'error', message: m })),
        ...r.warnings.map((w) => ({ level: 'warning', message: w })),
        ...r.result.diagnostics.map((d) => ({ level: d.level, message: `${d.object}: ${d.message}` })),
      ];
      const outOfScope = scopeWarnings(inputs).filter((w) => wanted(w.object));
      // A policy of a kind we skip whose target we serve: the target is served without it.
      const ignored = ignoredPolicies(r.foreignPolicies ?? [], r.translator, r.result).filter(
        (p) => wanted(p.object) || wanted(p.target),
      );
      // Live: what was not read (Secrets, ConfigMaps), what stood for it, and what cannot be told here.
      const references = (r.references ?? []).filter((n) => n.referrers.some((x) => wanted(x.from)));
      const notes = r.record
        ? [
            recordSummary(r.record, r.references ?? []),
            ...references.filter((n) => n.judged === 'unknown' || n.notRecorded).flatMap((n) => n.says),
          ]
        : [];
      if (opts.output === 'text') {
        for (const e of errors) process.stdout.write(`${e.level}: ${e.message}\n`);
        for (const p of ignored) process.stdout.write(`warning: ${p.object} ${p.where}: ${p.message}\n`);
        for (const n of notes) process.stdout.write(`note: ${n}\n`);
        for (const w of outOfScope) process.stdout.write(`warning: ${w.object} ${w.where}: ${w.message}\n`);
        for (const f of found)
          process.stdout.write(
            `${f.object}${f.where ? ` ${f.where}` : ''}: ${f.type}=${f.status} (${f.reason}): ${f.message}\n`,
          );
        process.stdout.write(
          `${found.length} problem(s) in ${r.result.statuses.size} ` +
            `status(es)${errors.length ? `, ${errors.length} manifest or translation message(s)` : ''}` +
            `${ignored.length ? `, ${ignored.length} target(s) served without a policy turnpike does not read` : ''}` +
            `${outOfScope.length ? `, ${outOfScope.length} warning(s) about objects not ours to judge` : ''}\n`,
        );
      } else {
        process.stdout.write(
          format(
            {
              problems: found,
              messages: errors,
              ignoredPolicies: ignored,
              notJudged: outOfScope,
              ...(r.record ? { notes, references } : {}),
            },
            opts.output as 'json' | 'yaml',
          ),
        );
      }
      process.exitCode =
        found.length || ignored.length || errors.some((e) => e.level === 'error') ? 1 : outOfScope.length ? 3 : 0;
    });
}
