// What an event log keeps of a Secret (secret-redaction.ts) gives the translator the same verdicts
// and the same digest as the Secret itself: a replay of a log without private keys reproduces
// the outputs of the run that wrote it.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, translate } from '@turnpike/translator';
import { outputHash, redactForLog } from '../src/index.js';
import {
  EXAMPLE_COM_CERT,
  EXAMPLE_COM_KEY,
  OTHER_TEST_CERT,
  OTHER_TEST_KEY,
} from '../../translator/test/tls-fixtures.js';
import { gateway, gatewayClass, tlsSecret } from '../../translator/test/builders.js';

const https = (name: string, host: string) => ({
  name,
  port: 443,
  protocol: 'HTTPS',
  hostname: host,
  tls: { certificateRefs: [{ name }] },
});

describe('Secrets as an event log keeps them', () => {
  it('the same statuses and output hash as the Secrets themselves: a key that matches, one that does not, one that is no key', () => {
    const gw = gateway('gw', [
      https('good', 'a.example.com'),
      https('other', 'b.example.com'),
      https('junk', 'c.example.com'),
    ]);
    const secrets = [
      tlsSecret('good', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      tlsSecret('other', 'infra', OTHER_TEST_CERT, EXAMPLE_COM_KEY),
      tlsSecret('junk', 'infra', EXAMPLE_COM_CERT, 'not a key'),
    ];
    const run = (s: KubeObject[]) => translate(snapshotFromObjects([gatewayClass(), gw, ...s]));
    const original = run(secrets);
    const redacted = run(secrets.map(redactForLog));
    expect(JSON.stringify(redacted.statuses.get('Gateway/infra/gw'))).toBe(
      JSON.stringify(original.statuses.get('Gateway/infra/gw')),
    );
    expect(outputHash(redacted)).toBe(outputHash(original));
    for (const s of secrets.map(redactForLog)) {
      const text =
        JSON.stringify(s) +
        Object.values((s as { data: Record<string, string> }).data)
          .map((v) => Buffer.from(v, 'base64').toString())
          .join('');
      expect(text).not.toContain('PRIVATE KEY');
      expect(text).not.toContain('not a key');
    }
    // A key rotation still changes the digest the proxies see.
    const rotated = run(
      [tlsSecret('good', 'infra', OTHER_TEST_CERT, OTHER_TEST_KEY), ...secrets.slice(1)].map(redactForLog),
    );
    expect(outputHash(rotated)).not.toBe(outputHash(redacted));
  });
});
