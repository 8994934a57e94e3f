// `turnpike analyze -f FILE|DIR`: for CI. Translates the manifests offline and lists every
// problem a status would report (and every manifest or translation error), one line each, naming
// the object, where in it, the condition and why. Exits 1 when there is any, 0 when there is none.
import type { Command } from 'commander';
import type { Condition } from '@turnpike/api';
import { fileInputOptions, textFormatFlag, validationFlag } from '../flags.js';
import { translatePaths } from '../offline.js';
import { format } from '../output.js';
import { isTrouble } from '../status-lines.js';

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

export function registerAnalyze(program: Command): void {
  fileInputOptions(
    program
      .command('analyze')
      .description('list every problem the statuses of these manifests would report; exit 1 if there is any (for CI)'),
  )
    .option('--endpoints', 'also report backends without ready endpoints (when the manifests include EndpointSlices)')
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .action((opts: { file: string[]; endpoints?: boolean; output: string; validate: string }) => {
      textFormatFlag(opts.output);
      const r = translatePaths(opts.file, new Date().toISOString(), validationFlag(opts.validate));
      const found = findings(
        [...r.result.statuses.sortedKeys()].map((k) => [k, r.result.statuses.get(k)]),
        !!opts.endpoints,
      );
      const errors = [
        ...r.errors.map((e) => ({ level: 'error', message: e })),
        ...r.warnings.map((w) => ({ level: 'warning', message: w })),
        ...r.result.diagnostics.map((d) => ({ level: d.level, message: `${d.object}: ${d.message}` })),
      ];
      if (opts.output === 'text') {
        for (const e of errors) process.stdout.write(`${e.level}: ${e.message}\n`);
        for (const f of found)
          process.stdout.write(
            `${f.object}${f.where ? ` ${f.where}` : ''}: ${f.type}=${f.status} (${f.reason}): ${f.message}\n`,
          );
        process.stdout.write(
          `${found.length} problem(s) in ${r.result.statuses.size} ` +
            `status(es)${errors.length ? `, ${errors.length} manifest or translation message(s)` : ''}\n`,
        );
      } else {
        process.stdout.write(format({ problems: found, messages: errors }, opts.output as 'json' | 'yaml'));
      }
      process.exitCode = found.length || errors.some((e) => e.level === 'error') ? 1 : 0;
    });
}
