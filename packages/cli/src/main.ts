#!/usr/bin/env node
// The turnpike command.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerAnalyze } from './commands/analyze.js';
import { registerBisect } from './commands/bisect.js';
import { registerBootstrap } from './commands/bootstrap.js';
import { registerConsole } from './commands/console.js';
import { registerDiff } from './commands/diff.js';
import { registerExplain } from './commands/explain.js';
import { registerProxyConfig } from './commands/proxy-config.js';
import { registerProxyStatus } from './commands/proxy-status.js';
import { registerReplay } from './commands/replay.js';
import { registerRun } from './commands/run.js';
import { registerTranslate } from './commands/translate.js';
import { reportError } from './errors.js';

/** The version of this package (its package.json sits one level above dist/). */
function cliVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}

export function buildProgram(): Command {
  const program = new Command('turnpike')
    .description('Turnpike: a Kubernetes Gateway API controller')
    .version(cliVersion(), '--version', 'print the version')
    .option('--debug', 'print stack traces on errors')
    .exitOverride()
    .showHelpAfterError(false);
  registerTranslate(program);
  registerRun(program);
  registerReplay(program);
  registerDiff(program);
  registerBisect(program);
  registerConsole(program);
  registerExplain(program);
  registerBootstrap(program);
  registerAnalyze(program);
  registerProxyStatus(program);
  registerProxyConfig(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    return reportError(e, argv.includes('--debug'));
  }
}

process.exitCode = await main(process.argv);
