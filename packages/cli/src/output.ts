// Output formats: JSON (stable key order as produced) or YAML.
import { stringify } from 'yaml';
import { CliError } from './errors.js';

export type OutputFormat = 'json' | 'yaml';

export function format(value: unknown, fmt: OutputFormat): string {
  if (fmt === 'yaml') return stringify(value, { aliasDuplicateObjects: false, lineWidth: 0 });
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function parseFormat(v: string): OutputFormat {
  if (v !== 'json' && v !== 'yaml') throw new CliError(`-o ${v}: unknown format (json, yaml)`);
  return v;
}
