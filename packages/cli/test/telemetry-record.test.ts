// XTelemetryPolicy (GEP-4768) in the event log like any other kind: `run --dir --record` records the
// policy as it changes (its provider Service appearing later resolves it), the run prints its status, and
// `replay --verify` reproduces every recorded output from the log alone.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { MANIFEST, start, tmp, turnpike, waitFor, write } from './cli-helpers.js';

const POLICY = `apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XTelemetryPolicy
metadata: {name: tp, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  tracing:
    mode: Enabled
    provider: {backendRef: {name: otel, port: 4317}}
    samplingRate: {numerator: 10, denominator: 100}
    attributes: [{name: env, sourceType: Literal, literalValue: prod}]
`;
const COLLECTOR = `apiVersion: v1
kind: Service
metadata: {name: otel, namespace: infra}
spec: {ports: [{name: otlp, port: 4317}]}
`;

describe('XTelemetryPolicy in the event log', () => {
  it('is recorded as it changes, and the log replays identically', async () => {
    const dir = tmp();
    const log = join(tmp(), 'events.ndjson');
    write(dir, 'm.yaml', MANIFEST);
    write(dir, 'tp.yaml', POLICY);
    const p = start(
      'run',
      '--dir',
      dir,
      '--record',
      log,
      '--plugin-address',
      '127.0.0.1:0',
      '--quiet-ms',
      '20',
      '--max-delay-ms',
      '100',
      '--poll',
      '100',
    );
    await waitFor(() => /XTelemetryPolicy\/infra\/tp .*ResolvedRefs=False\(BackendNotFound/.test(p.output()));
    writeFileSync(join(dir, 'otel.yaml'), COLLECTOR);
    await waitFor(() => /XTelemetryPolicy\/infra\/tp .*ResolvedRefs=True/.test(p.output()));
    expect((await p.stop()).code).toBe(0);
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type?: string; kind?: string });
    expect(lines.some((l) => l.type === 'upsert' && l.kind === 'XTelemetryPolicy')).toBe(true);
    const ok = turnpike('replay', log, '--verify');
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/verified \d+ output\(s\)/);
  });
});
