// User-facing errors: one clear line and exit code 2; a stack trace only with --debug.

import { LogFormatError, ManifestError } from '@turnpike/engine';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

export function reportError(e: unknown, debug: boolean): number {
  const err = e as Error & { exitCode?: number };
  // Errors from the other packages that carry a complete user-facing message.
  const known = err instanceof CliError || err instanceof ManifestError || err instanceof LogFormatError;
  process.stderr.write(`turnpike: ${known ? err.message : `internal error: ${err?.message ?? String(e)}`}\n`);
  if (debug && err?.stack) process.stderr.write(`${err.stack}\n`);
  return err instanceof CliError ? err.exitCode : 2;
}
