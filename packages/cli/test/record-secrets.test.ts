// Event logs are handed around during incidents: `run --record` keeps no private key, token or
// registry credential of a Secret (only certificates, digests under the run's own key and whether a key matches), writes
// the file for its owner only, and a replay of it still reproduces every recorded output.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { stringify } from 'yaml';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_TEST_KEY } from '../../translator/test/tls-fixtures.js';
import { start, tmp, turnpike, waitFor, write } from './cli-helpers.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const TOKEN = 'hunter2-registry-token';
const tlsSecret = (name: string, key: string, crt = EXAMPLE_COM_CERT) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'kubernetes.io/tls',
  metadata: { name, namespace: 'infra' },
  data: { 'tls.crt': b64(crt), 'tls.key': b64(key) },
});
const objects = [
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'tp' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'tp',
      listeners: [
        {
          name: 'good',
          port: 443,
          protocol: 'HTTPS',
          hostname: 'a.example.com',
          tls: { certificateRefs: [{ name: 'good' }] },
        },
        {
          name: 'mismatch',
          port: 443,
          protocol: 'HTTPS',
          hostname: 'b.example.com',
          tls: { certificateRefs: [{ name: 'mismatch' }] },
        },
        {
          name: 'bundled',
          port: 443,
          protocol: 'HTTPS',
          hostname: 'c.example.com',
          tls: { certificateRefs: [{ name: 'bundled' }] },
        },
      ],
    },
  },
  tlsSecret('good', EXAMPLE_COM_KEY),
  tlsSecret('mismatch', OTHER_TEST_KEY),
  // A tls.crt with its private key appended: the log keeps its certificate, and the replay serves it.
  tlsSecret('bundled', EXAMPLE_COM_KEY, `${EXAMPLE_COM_CERT}${EXAMPLE_COM_KEY}`),
  {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/dockerconfigjson',
    metadata: { name: 'pull', namespace: 'infra' },
    stringData: { '.dockerconfigjson': JSON.stringify({ auths: { 'registry.test': { auth: b64(`me:${TOKEN}`) } } }) },
  },
];

/** Runs the controller on the objects with `--record`; returns the log's path. */
async function record(): Promise<string> {
  const dir = tmp();
  write(dir, 'all.yaml', objects.map((o) => stringify(o)).join('---\n'));
  const log = join(tmp(), 'events.ndjson');
  const p = start(
    'run',
    '--dir',
    dir,
    '--record',
    log,
    '--no-xds',
    '--plugin-address',
    '127.0.0.1:0',
    '--quiet-ms',
    '20',
  );
  await waitFor(() => p.output().includes('Gateway/infra/gw'));
  expect((await p.stop()).code).toBe(0);
  return log;
}

/** What the log keeps of the pull Secret's value. */
function pullMarker(text: string): string {
  const line = text.split('\n').find((l) => l.includes('"name":"pull"'))!;
  return (JSON.parse(line) as { object: { stringData: Record<string, string> } }).object.stringData[
    '.dockerconfigjson'
  ]!;
}

describe('turnpike run --record: Secrets in the event log', () => {
  it('security: the log holds no private key or Secret value, is readable by its owner only, and replays identically', async () => {
    const log = await record();
    const text = readFileSync(log, 'utf8');
    // Every value of every recorded Secret, decoded, and the raw text of the log.
    const values = text
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            object?: { kind: string; data?: Record<string, string>; stringData?: Record<string, string> };
          },
      )
      .filter((l) => l.object?.kind === 'Secret')
      .flatMap((l) => [
        ...Object.values(l.object!.data ?? {}).map((v) => Buffer.from(v, 'base64').toString()),
        ...Object.values(l.object!.stringData ?? {}),
      ]);
    expect(values.length).toBeGreaterThanOrEqual(7);
    for (const seen of [text, ...values]) {
      expect(seen).not.toContain('PRIVATE KEY');
      expect(seen).not.toContain(TOKEN);
      expect(seen).not.toContain(b64(`me:${TOKEN}`));
    }
    // Certificates stay: the translator checks them on replay.
    expect(text).toContain(b64(EXAMPLE_COM_CERT));
    expect(statSync(log).mode & 0o777).toBe(0o600);
    // Values are kept as HMACs under the run's DigestKey (its first event), never as their plain sha256.
    expect((JSON.parse(text.split('\n')[1]!) as { kind: string }).kind).toBe('DigestKey');
    const dockerConfig = (objects.at(-1) as { stringData: Record<string, string> }).stringData['.dockerconfigjson']!;
    for (const value of [dockerConfig, EXAMPLE_COM_KEY, OTHER_TEST_KEY, `${EXAMPLE_COM_CERT}${EXAMPLE_COM_KEY}`]) {
      const sha256 = createHash('sha256').update(value).digest('hex');
      for (const seen of [text, ...values]) expect(seen).not.toContain(sha256);
    }
    expect(pullMarker(text)).toMatch(/^turnpike-redacted:hmac-sha256=[0-9a-f]{64}$/);
    // Another run, another key: the same value is not correlatable across logs.
    expect(pullMarker(readFileSync(await record(), 'utf8'))).not.toBe(pullMarker(text));

    const verified = turnpike('replay', log, '--verify');
    expect([verified.code, verified.stderr]).toEqual([0, expect.stringMatching(/verified \d+ output\(s\)/)]);
    // What the key check said survives: the listener whose key is another certificate's is refused.
    const at = JSON.parse(turnpike('replay', log, '--to', 'resources').stdout);
    const gw = at.resources.find((o: { kind: string }) => o.kind === 'Gateway');
    const listener = (name: string) =>
      gw.status.listeners
        .find((l: { name: string }) => l.name === name)
        .conditions.find((c: { type: string }) => c.type === 'ResolvedRefs');
    expect(listener('good').status).toBe('True');
    expect(listener('mismatch').message).toContain('does not belong to the certificate');
    expect(listener('bundled').status).toBe('True');
  }, 60_000);
});
