// CLI consistency a new user expects: --version, formats every command accepts or refuses by
// name, a recorded log never overwritten, NO_COLOR honoured.
import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { useColor } from '../src/commands/diff.js';
import { CLI, MANIFEST, tmp, turnpike, write } from './cli-helpers.js';

const version = (
  JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../package.json'), 'utf8')) as {
    version: string;
  }
).version;

describe('CLI consistency', () => {
  it('--version prints the package version', () => {
    const r = turnpike('--version');
    expect([r.code, r.stdout.trim()]).toEqual([0, version]);
  });

  it('explain -o yaml prints YAML, and an unknown format is refused by name', () => {
    const dir = tmp();
    const f = write(dir, 'all.yaml', MANIFEST);
    const y = turnpike('explain', 'Gateway/infra/gw', '-f', f, '-o', 'yaml');
    expect(y.code).toBe(0);
    expect(y.stdout).toMatch(/^object: Gateway\/infra\/gw\n/);
    expect(y.stdout).toMatch(/\nfound: true\n/);
    const bad = turnpike('explain', 'Gateway/infra/gw', '-f', f, '-o', 'xml');
    expect([bad.code, bad.stderr]).toEqual([
      2,
      expect.stringContaining('-o xml: unknown format (text, wide, json, yaml)'),
    ]);
  });

  it('replay --to with an unknown target is refused, not read as "all"', () => {
    const r = turnpike('replay', '/nonexistent.log', '--to', 'xds');
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('--to xds: unknown target (resources, ir, all)')]);
  });

  it('--gateway and HOST:PORT flags are refused the same way by every command, naming the flag', () => {
    expect(turnpike('proxy-config', '--gateway', 'x').stderr).toContain('--gateway x: use NAMESPACE/NAME');
    expect(turnpike('bootstrap', '--gateway', 'a/b/c').stderr).toContain('--gateway a/b/c: use NAMESPACE/NAME');
    expect(turnpike('bootstrap', '--gateway', 'a/b', '--xds-address', 'nope').stderr).toContain(
      '--xds-address: "nope" is not HOST:PORT',
    );
    const dir = tmp();
    write(dir, 'all.yaml', MANIFEST);
    const r = turnpike('run', '--dir', dir, '--xds-address', 'nope', '--plugin-address', '127.0.0.1:0');
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('--xds-address: "nope" is not HOST:PORT')]);
  });

  it('user mistakes are named as such, never as an internal error', () => {
    const dir = tmp();
    const file = write(dir, 'all.yaml', MANIFEST);
    const mistakes: [string[], string][] = [
      [['translate', '-f', file, '-o', 'xml'], 'turnpike: -o xml: unknown format (json, yaml)'],
      [
        ['translate', '-f', file, '--now', 'yesterday'],
        'turnpike: --now yesterday: not an RFC 3339 time (e.g. 2026-01-02T15:04:05Z)',
      ],
      [
        ['bootstrap', '--gateway', 'a/b', '--xds-address', '127.0.0.1:99999'],
        'turnpike: --xds-address: "127.0.0.1:99999": port 99999 is above 65535',
      ],
      [['translate', '-f', join(dir, 'missing.yaml')], `turnpike: ${join(dir, 'missing.yaml')}: cannot read (ENOENT)`],
      [['replay', file], `turnpike: ${file}:1: not a JSON line`],
      [
        ['explain', 'Nope/a/b', '-f', file],
        'turnpike: Nope/a/b: unknown kind "Nope" (use KIND/NAMESPACE/NAME, e.g. HTTPRoute/shop/store)',
      ],
    ];
    for (const [args, message] of mistakes) {
      const r = turnpike(...args);
      expect([args.join(' '), r.code, r.stderr.trim()]).toEqual([args.join(' '), 2, message]);
    }
  });

  it('run --record refuses to overwrite an existing log', () => {
    const dir = tmp();
    write(dir, 'all.yaml', MANIFEST);
    const log = write(tmp(), 'events.ndjson', 'precious\n');
    const r = turnpike('run', '--dir', dir, '--record', log, '--no-xds', '--plugin-address', '127.0.0.1:0');
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining(`--record ${log}: the file exists`)]);
    expect(readFileSync(log, 'utf8')).toBe('precious\n');
  });

  it('diff colours only on a terminal, never with NO_COLOR, and as --color/--no-color say', () => {
    expect(useColor(undefined, true, {})).toBe(true);
    expect(useColor(undefined, true, { NO_COLOR: '1' })).toBe(false);
    expect(useColor(undefined, false, {})).toBe(false);
    expect(useColor(true, false, { NO_COLOR: '1' })).toBe(true);
    expect(useColor(false, true, {})).toBe(false);
  });
});

describe('kubectl turnpike', () => {
  it('installed as kubectl-turnpike (npm i -g gives both names), it names itself as kubectl does and takes -o wide', () => {
    const pkg = JSON.parse(readFileSync(join(CLI, '../../package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin['kubectl-turnpike']).toBe(pkg.bin.turnpike);
    const dir = tmp();
    const plugin = join(dir, 'kubectl-turnpike');
    symlinkSync(CLI, plugin);
    const help = spawnSync(process.execPath, [plugin, '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/^Usage: kubectl turnpike /);
    const f = write(dir, 'm.yaml', MANIFEST);
    const wide = spawnSync(process.execPath, [plugin, 'analyze', '-f', f, '-o', 'wide'], { encoding: 'utf8' });
    expect([wide.status, wide.stdout]).toEqual([0, expect.stringMatching(/^0 problem\(s\)/m)]);
  });
});
