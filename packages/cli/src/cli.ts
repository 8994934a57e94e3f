#!/usr/bin/env node
// The turnpike command.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerAnalyze } from './commands/analyze.js';
import { registerBisect } from './commands/bisect.js';
import { registerBootstrap } from './commands/bootstrap.js';
import { registerCapture } from './commands/capture.js';
import { registerConsole } from './commands/console.js';
import { registerDiff } from './commands/diff.js';
import { registerExplain } from './commands/explain.js';
import { registerProxyConfig } from './commands/proxy-config.js';
import { registerProxyDrain } from './commands/proxy-drain.js';
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

/** `kubectl turnpike ...` runs us as kubectl-turnpike (a kubectl plugin): help then names it so. */
function programName(): string {
  return basename(process.argv[1] ?? '') === 'kubectl-turnpike' ? 'kubectl turnpike' : 'turnpike';
}

export function buildProgram(): Command {
  const program = new Command(programName())
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
  registerCapture(program);
  registerExplain(program);
  registerBootstrap(program);
  registerAnalyze(program);
  registerProxyStatus(program);
  registerProxyConfig(program);
  registerProxyDrain(program);
  return program;
}

/** The exit code, and whether the command failed (then the process ends even with listeners still open). */
async function main(argv: string[]): Promise<{ code: number; failed: boolean }> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return { code: typeof process.exitCode === 'number' ? process.exitCode : 0, failed: false };
  } catch (e) {
    if (e instanceof CommanderError) return { code: e.exitCode === 0 ? 0 : 2, failed: e.exitCode !== 0 };
    return { code: reportError(e, argv.includes('--debug')), failed: true };
  }
}

const result = await main(process.argv);
// A command that failed part-way (a busy port after other servers started) must not keep running.
if (result.failed) process.exit(result.code);
process.exitCode = result.code;
