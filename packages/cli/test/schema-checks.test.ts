// The examples, as a new user meets them: a port of 70000 or "eighty", a mixed-case or
// mid-wildcard hostname, a weight of -5. translate, diff and run --dir refuse such objects as the API
// server would, with one line naming the file, the object and the field, and go on with the rest.
import { describe, expect, it } from '@jest/globals';
import { MANIFEST, start, tmp, turnpike, waitFor, write } from './cli-helpers.js';

const BAD = `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: typo, namespace: infra}
spec:
  gatewayClassName: tp
  listeners:
  - {name: a, port: 70000, protocol: HTTP}
  - {name: b, port: eighty, protocol: HTTP}
  - {name: c, port: 81, protocol: HTTP, hostname: Shop.example.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: weights, namespace: infra}
spec:
  parentRefs: [{name: gw}]
  hostnames: ["shop.*.com"]
  rules: [{backendRefs: [{name: web, port: 80, weight: -5}]}]
`;

interface Translated {
  resources: { kind: string; metadata: { name: string }; status?: unknown }[];
}

describe('API server schema checks on file input', () => {
  it('translate leaves refused objects out, names each field, and translates the rest', () => {
    const file = write(tmp(), 'all.yaml', MANIFEST + BAD);
    const r = turnpike('translate', '-f', file, '--to', 'resources');
    expect(r.code).toBe(0);
    const names = (JSON.parse(r.stdout) as Translated).resources.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).toContain('Gateway/gw');
    expect(names).not.toContain('Gateway/typo');
    expect(names).not.toContain('HTTPRoute/weights');
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.includes('as the API server would refuse it'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^turnpike: error: \S+all\.yaml: Gateway infra\/typo is invalid, .*spec\.listeners\[0\]\.port: 70000 is above the maximum 65535; spec\.listeners\[1\]\.port: must be an integer, not the string "eighty"; spec\.listeners\[2\]\.hostname: "Shop\.example\.com" does not match .* \(left out\)$/,
      ),
      expect.stringMatching(
        /^turnpike: error: \S+all\.yaml: HTTPRoute infra\/weights is invalid, .*spec\.hostnames\[0\]: "shop\.\*\.com" does not match .*; spec\.rules\[0\]\.backendRefs\[0\]\.weight: -5 is below the minimum 0 \(left out\)$/,
      ),
    ]);
  });

  it('--validate warn keeps them (with a warning), --validate ignore stays quiet, a bogus mode is a usage error', () => {
    const file = write(tmp(), 'all.yaml', MANIFEST + BAD);
    const warn = turnpike('translate', '-f', file, '--to', 'resources', '--validate', 'warn');
    expect((JSON.parse(warn.stdout) as Translated).resources.map((o) => o.metadata.name)).toContain('typo');
    expect(warn.stderr).toMatch(/turnpike: warning: \S+all\.yaml: Gateway infra\/typo is invalid/);
    const ignore = turnpike('translate', '-f', file, '--to', 'resources', '--validate', 'ignore');
    expect(ignore.stderr).not.toContain('as the API server would refuse it');
    const bogus = turnpike('translate', '-f', file, '--validate', 'lenient');
    expect([bogus.code, bogus.stderr.trim()]).toEqual([2, 'turnpike: --validate lenient: use strict, warn, ignore']);
  });

  it('diff sees the cluster would not take the change', () => {
    const dir = tmp();
    const before = write(dir, 'before.yaml', MANIFEST);
    const after = write(dir, 'after.yaml', MANIFEST + BAD);
    const r = turnpike('diff', before, after, '-o', 'json');
    expect(r.stderr).toMatch(/error: \S+after\.yaml: Gateway infra\/typo is invalid/);
    expect(r.stdout).not.toContain('typo');
  });

  it('run --dir reports the refused object once and serves the others', async () => {
    const dir = tmp();
    write(dir, 'ok.yaml', MANIFEST);
    write(dir, 'bad.yaml', BAD);
    const run = start('run', '--dir', dir, '--no-xds', '--plugin-address', '127.0.0.1:0');
    try {
      await waitFor(
        () => run.output().includes('Gateway/infra/gw') && run.errors().includes('HTTPRoute infra/weights'),
      );
      expect(run.errors()).toMatch(
        /error: \S+bad\.yaml: Gateway infra\/typo is invalid, as the API server would refuse it: spec\.listeners\[0\]\.port: 70000 .*\(not loaded\)/,
      );
      expect(run.output()).not.toContain('Gateway/infra/typo');
    } finally {
      await run.stop();
    }
  }, 30_000);
});
