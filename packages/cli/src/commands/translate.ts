// `turnpike translate -f FILE|DIR`: offline translation of manifests.
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { translatePaths } from '../offline.js';
import { format, parseFormat } from '../output.js';

export function registerTranslate(program: Command): void {
  program
    .command('translate')
    .description('translate manifests offline and print statuses, the xDS IR and the infra IR')
    .requiredOption('-f, --file <path>', 'manifest file or directory (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('-o, --output <format>', 'json or yaml', 'json')
    .option('--to <what>', 'resources, ir, xds or all', 'all')
    .option('--now <time>', 'timestamp for lastTransitionTime (RFC 3339); default: now')
    .action((opts: { file: string[]; output: string; to: string; now?: string }) => {
      const fmt = parseFormat(opts.output);
      const now = opts.now ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const r = translatePaths(opts.file, now);
      for (const w of r.warnings) process.stderr.write(`turnpike: warning: ${w}\n`);
      for (const d of r.result.diagnostics) process.stderr.write(`turnpike: ${d.level}: ${d.object}: ${d.message}\n`);
      let out: unknown;
      switch (opts.to) {
        case 'all': out = { resources: r.resources, xdsIR: r.result.xdsIR, infraIR: r.result.infraIR }; break;
        case 'resources': out = { resources: r.resources }; break;
        case 'ir': out = { xdsIR: r.result.xdsIR, infraIR: r.result.infraIR }; break;
        default: throw new CliError(`--to ${opts.to}: unknown target (resources, ir, all)`);
      }
      process.stdout.write(format(out, fmt));
    });
}
