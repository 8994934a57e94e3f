// Flag values several commands share, parsed once with the same messages.
import { parseHostPort } from '@turnpike/xds';
import { MANIFEST_VALIDATIONS, type ManifestValidation } from '@turnpike/engine';
import type { Command } from 'commander';
import { CliError } from './errors.js';

/** `--gateway NAMESPACE/NAME`. */
export function gatewayFlag(value: string, flag = '--gateway'): { namespace: string; name: string } {
  const [namespace, name, extra] = value.split('/');
  if (!namespace || !name || extra !== undefined) throw new CliError(`${flag} ${value}: use NAMESPACE/NAME`);
  return { namespace, name };
}

/** A `HOST:PORT` flag. */
export function hostPortFlag(flag: string, value: string): { host: string; port: number } {
  try {
    return parseHostPort(value);
  } catch (e) {
    throw new CliError(`${flag}: ${(e as Error).message}`);
  }
}

/** `--validate strict|warn|ignore`: how file input meets the API server's schema checks. */
export function validationFlag(value: string): ManifestValidation {
  if (!(MANIFEST_VALIDATIONS as readonly string[]).includes(value)) {
    throw new CliError(`--validate ${value}: use ${MANIFEST_VALIDATIONS.join(', ')}`);
  }
  return value as ManifestValidation;
}

export const VALIDATE_HELP =
  'strict (leave out objects the API server would refuse), warn (keep them, with a warning) or ignore';

/** `-o text|json|yaml` of the commands that also print for people. */
/** `-o`: text (or `wide`, as kubectl says it: our text lines are already whole), json or yaml. */
export function textFormatFlag(value: string): 'text' | 'json' | 'yaml' {
  if (value === 'wide') return 'text';
  if (value !== 'text' && value !== 'json' && value !== 'yaml')
    throw new CliError(`-o ${value}: unknown format (text, wide, json, yaml)`);
  return value;
}

/** The file input options of the offline commands: `-f` (repeatable) and `--validate`. */
export function fileInputOptions(command: Command): Command {
  return command
    .requiredOption(
      '-f, --file <path>',
      'manifest file or directory (repeatable)',
      (value: string, earlier: string[]) => [...earlier, value],
      [] as string[],
    )
    .option('--validate <mode>', VALIDATE_HELP, 'strict');
}

/**
 * Input from files or from a live cluster (kubectl's flags): `-f` for files; `--kubeconfig` (and
 * `--context`) to read the cluster's objects once, read-only; `-n`/`-A` choose what is reported.
 */
export function liveOrFileInputOptions(command: Command, files = 'manifest file or directory (repeatable)'): Command {
  return command
    .option('-f, --file <path>', files, (value: string, earlier: string[]) => [...earlier, value], [] as string[])
    .option('--kubeconfig <path>', "read a live cluster's objects instead (read-only; ClusterRole turnpike-viewer)")
    .option('--context <name>', 'with --kubeconfig: the kubeconfig context to use')
    .option('-n, --namespace <ns>', 'with --kubeconfig: report on objects of this namespace only')
    .option('-A, --all-namespaces', 'with --kubeconfig: report on every namespace (the default)')
    .option('--validate <mode>', VALIDATE_HELP, 'strict');
}

export interface LiveOrFileInput {
  file: string[];
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces?: boolean;
  validate: string;
}

/** A loopback host name or address (127.0.0.0/8, ::1, localhost; brackets allowed). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
