// Flag values several commands share, parsed once with the same messages.
import { parseHostPort } from '@turnpike/xds';
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
