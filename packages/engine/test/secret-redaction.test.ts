// What an event log keeps of a Secret (secret-redaction.ts) gives the translator the same verdicts
// and the same digest as the Secret itself: a replay of a log without private keys reproduces
// the outputs of the run that wrote it.
import { describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { digestKeyObject, type KubeObject } from '@turnpike/api';
import { snapshotFromObjects, translate } from '@turnpike/translator';
import { LogRedaction, outputHash, redactForLog, upsert, type WatchEvent } from '../src/index.js';
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

  it('a value with anything besides certificates keeps its certificates only, and replays the same', () => {
    const junk = (cert: string, extra: string) => `${cert}\n${extra}\n`;
    const caSecret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'ca', namespace: 'infra' },
      data: { 'ca.crt': Buffer.from(junk(OTHER_TEST_CERT, 'token=hunter3')).toString('base64') },
    } as KubeObject;
    const gw = gateway(
      'gw',
      [https('key-after', 'a.example.com'), https('text-after', 'b.example.com'), https('comment', 'c.example.com')],
      { tls: { frontend: { default: { validation: { caCertificateRefs: [{ kind: 'Secret', name: 'ca' }] } } } } },
    );
    const secrets = [
      // A certificate followed by its own private key, by any text, or after a comment.
      tlsSecret('key-after', 'infra', junk(EXAMPLE_COM_CERT, EXAMPLE_COM_KEY), EXAMPLE_COM_KEY),
      tlsSecret('text-after', 'infra', junk(EXAMPLE_COM_CERT, 'password: hunter2'), EXAMPLE_COM_KEY),
      tlsSecret('comment', 'infra', `# issued by hunter4\n${EXAMPLE_COM_CERT}`, EXAMPLE_COM_KEY),
      caSecret,
    ];
    const run = (s: KubeObject[]) => translate(snapshotFromObjects([gatewayClass(), gw, ...s]));
    const original = run(secrets);
    const logged = secrets.map(redactForLog);
    const redacted = run(logged);
    expect(redacted.statuses.get('Gateway/infra/gw')).toEqual(original.statuses.get('Gateway/infra/gw'));
    expect(outputHash(redacted)).toBe(outputHash(original));
    // The listeners serve, with the client CA: nothing above made a verdict worse.
    const listeners = (original.statuses.get('Gateway/infra/gw') as { listeners: { conditions: unknown[] }[] })
      .listeners;
    for (const l of listeners)
      expect((l.conditions as { type: string; status: string }[]).find((c) => c.type === 'ResolvedRefs')?.status).toBe(
        'True',
      );
    const text = logged
      .map(
        (o) =>
          JSON.stringify(o) +
          Object.values((o as { data: Record<string, string> }).data)
            .map((v) => Buffer.from(v, 'base64').toString())
            .join(''),
      )
      .join('');
    for (const secret of ['PRIVATE KEY', 'hunter2', 'hunter3', 'hunter4']) expect(text).not.toContain(secret);
    // A value of certificates and whitespace alone is kept as it is.
    const plain = redactForLog(
      tlsSecret('plain', 'infra', `${EXAMPLE_COM_CERT}\n\n${OTHER_TEST_CERT}\n`, EXAMPLE_COM_KEY),
    );
    expect(Buffer.from((plain as { data: Record<string, string> }).data['tls.crt']!, 'base64').toString()).toBe(
      `${EXAMPLE_COM_CERT}\n\n${OTHER_TEST_CERT}\n`,
    );
    // A CERTIFICATE label around base64 that is no certificate is not one.
    const fake = `-----BEGIN CERTIFICATE-----\n${Buffer.from('hunter5 '.repeat(20)).toString('base64')}\n-----END CERTIFICATE-----\n`;
    const disguised = redactForLog(tlsSecret('fake', 'infra', fake, EXAMPLE_COM_KEY));
    expect(Buffer.from((disguised as { data: Record<string, string> }).data['tls.crt']!, 'base64').toString()).toMatch(
      /^turnpike-redacted:sha256=[0-9a-f]{64}$/,
    );
  });

  it('security: under a stream DigestKey, values are kept as HMACs (not their sha256), different per key, and replay the same', () => {
    const gw = gateway('gw', [https('bundled', 'a.example.com')]);
    const secrets = [
      tlsSecret('bundled', 'infra', `${EXAMPLE_COM_CERT}${EXAMPLE_COM_KEY}`, EXAMPLE_COM_KEY),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'opaque', namespace: 'infra' },
        stringData: { password: 'admin' },
      } as KubeObject,
    ];
    const event = (o: KubeObject, seq: number): WatchEvent => ({
      ...upsert('dir', o),
      seq,
      at: '2026-12-06T14:00:00Z',
    });
    /** A stream that starts with its DigestKey, as the log keeps it, and the objects the translator saw live. */
    const recorded = (key: Buffer) => {
      const redaction = new LogRedaction();
      const live = [digestKeyObject(key), gatewayClass(), gw, ...secrets];
      return { live, logged: live.map((o, i) => redaction.event(event(o, i + 1)).object!) };
    };
    const run = (objects: KubeObject[]) => translate(snapshotFromObjects(objects));
    const [a, b] = [recorded(randomBytes(32)), recorded(randomBytes(32))];
    for (const { live, logged } of [a, b]) expect(outputHash(run(logged))).toBe(outputHash(run(live)));
    const password = (logged: KubeObject[]) =>
      (logged.at(-1) as { stringData: { password: string } }).stringData.password;
    expect(password(a.logged)).toMatch(/^turnpike-redacted:hmac-sha256=[0-9a-f]{64}$/);
    expect(password(a.logged)).not.toBe(password(b.logged));
    const text = JSON.stringify(a.logged);
    const decoded = a.logged
      .flatMap((o) => Object.values((o as { data?: Record<string, string> }).data ?? {}))
      .map((v) => Buffer.from(v, 'base64').toString())
      .join('');
    for (const value of ['admin', EXAMPLE_COM_KEY, `${EXAMPLE_COM_CERT}${EXAMPLE_COM_KEY}`]) {
      const sha256 = createHash('sha256').update(value).digest('hex');
      expect(text + decoded).not.toContain(sha256);
    }
    // Two keys, two outputs: the digests in the IR are the key's (a replay needs the log's key).
    expect(outputHash(run(a.logged))).not.toBe(outputHash(run(b.logged)));
  });
});
