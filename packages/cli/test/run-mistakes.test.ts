// `run --dir` mistakes end the process with exit 2 and one clear line, instead of running on
// an empty configuration or hanging.
import { describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { MANIFEST, start, tmp, turnpike, waitFor, write } from './cli-helpers.js';

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

  it('a plugin port already in use is reported and the controller goes on serving (most directories use no plugin)', async () => {
    const dir = tmp();
    write(dir, 'a.yaml', MANIFEST);
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as AddressInfo).port;
    const p = start('run', '--dir', dir, '--xds-address', '127.0.0.1:0', '--plugin-address', `127.0.0.1:${port}`);
    try {
      await waitFor(
        () => /serving xDS on 127\.0\.0\.1:\d+/.test(p.errors()) && /Gateway\/infra\/gw Accepted=True/.test(p.output()),
      );
      expect(p.errors()).toContain(`--plugin-address 127.0.0.1:${port}: cannot listen`);
      expect(p.errors()).toContain('trying every 5 s');
    } finally {
      await p.stop();
      taken.close();
    }
  }, 30_000);

  it('a file that breaks and is fixed: both moments are in the event log, the fix is printed, replay --verify passes', async () => {
    const dir = tmp();
    const file = write(dir, 'a.yaml', MANIFEST);
    const log = join(tmp(), 'events.ndjson');
    const p = start('run', '--dir', dir, '--no-xds', '--plugin-address', '127.0.0.1:0', '--record', log);
    try {
      await waitFor(() => /Gateway\/infra\/gw Accepted=True/.test(p.output()));
      writeFileSync(file, `${MANIFEST}---\nkind: [broken\n`);
      await waitFor(() => /YAML syntax error/.test(p.errors()));
      writeFileSync(file, MANIFEST);
      await waitFor(() => p.errors().includes(`turnpike: fixed: ${file}: parses again`));
    } finally {
      await p.stop();
    }
    const problems = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"problem"'))
      .map((l) => JSON.parse(l) as { name: string; fixed?: boolean });
    expect(problems.map((e) => [e.name, e.fixed ?? false])).toEqual([
      [file, false],
      [file, true],
    ]);
    expect(turnpike('replay', log, '--verify').code).toBe(0);
  }, 30_000);

  it('security: TLS without client certificates is refused unless --xds-any-client says so', () => {
    const dir = tmp();
    write(dir, 'a.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n');
    const r = turnpike(
      'run',
      '--dir',
      dir,
      '--xds-tls-cert',
      join(dir, 'tls.crt'),
      '--xds-tls-key',
      join(dir, 'tls.key'),
      '--plugin-address',
      '127.0.0.1:0',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "--xds-tls-cert without --xds-client-ca would serve every Gateway's configuration and private keys to any client",
    );
  });

  it('security: plaintext xDS beyond loopback is refused; --xds-plaintext serves it with a warning', async () => {
    const dir = tmp();
    write(dir, 'a.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n');
    const args = ['run', '--dir', dir, '--xds-address', '0.0.0.0:0', '--plugin-address', '127.0.0.1:0'];
    const refused = turnpike(...args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--xds-address 0.0.0.0:0: plaintext xDS beyond loopback would serve');
    const p = start(...args, '--xds-plaintext');
    try {
      await waitFor(() => /serving xDS on 0\.0\.0\.0:\d+/.test(p.errors()));
      expect(p.errors()).toContain(
        "warning: serving xDS in plaintext on 0.0.0.0:0: anyone who reaches it reads every Gateway's keys",
      );
    } finally {
      await p.stop();
    }
  }, 30_000);
});
