// Output formats: JSON (stable key order as produced) or YAML.
import { stringify } from 'yaml';

export type OutputFormat = 'json' | 'yaml';

export function format(value: unknown, fmt: OutputFormat): string {
  if (fmt === 'yaml') return stringify(value, { aliasDuplicateObjects: false, lineWidth: 0 });
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function parseFormat(v: string): OutputFormat {
  if (v !== 'json' && v !== 'yaml') throw new Error(`unknown output format "${v}" (json, yaml)`);
  return v;
}
