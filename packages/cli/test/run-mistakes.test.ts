// `run --dir` mistakes end the process with exit 2 and one clear line, instead of running on
// an empty configuration or hanging.
import { describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { start, tmp, turnpike, waitFor, write } from './cli-helpers.js';

describe('turnpike run --dir mistakes', () => {
  it('a missing directory exits 2 naming it', () => {
    const r = turnpike('run', '--dir', join(tmp(), 'no-such-dir'), '--no-xds', '--plugin-address', '127.0.0.1:0');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--dir .*no-such-dir: no such file or directory/);
  });

  it('an xDS port already in use exits 2 instead of hanging', async () => {
    const dir = tmp();
    write(dir, 'a.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n');
    const first = start('run', '--dir', dir, '--xds-address', '127.0.0.1:0', '--plugin-address', '127.0.0.1:0');
    try {
      await waitFor(() => /serving xDS on 127\.0\.0\.1:\d+/.test(first.errors()));
      const port = /serving xDS on 127\.0\.0\.1:(\d+)/.exec(first.errors())![1]!;
      const second = turnpike(
        'run',
        '--dir',
        dir,
        '--xds-address',
        `127.0.0.1:${port}`,
        '--plugin-address',
        '127.0.0.1:0',
      );
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(new RegExp(`--xds-address 127\\.0\\.0\\.1:${port}: cannot listen`));
    } finally {
      await first.stop();
    }
  }, 30_000);
});
