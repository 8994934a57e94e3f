// `turnpike diff` when a listener's certificate and key are replaced: the statuses and routes stay the
// same, and the diff says the certificate changed, by its fingerprint and validity, and nothing of a key.
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  EXAMPLE_COM_CERT,
  EXAMPLE_COM_KEY,
  OTHER_TEST_CERT,
  OTHER_TEST_KEY,
} from '../../translator/test/tls-fixtures.js';
import { tmp, turnpike, write } from './cli-helpers.js';

const side = (cert: string, key: string) => `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tp}
spec: {controllerName: turnpike.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: tp
  listeners:
  - {name: https, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: cert}]}}
---
apiVersion: v1
kind: Secret
metadata: {name: cert, namespace: infra}
type: kubernetes.io/tls
data:
  tls.crt: ${Buffer.from(cert).toString('base64')}
  tls.key: ${Buffer.from(key).toString('base64')}
`;

const iso = (t: string) => new Date(t).toISOString().replace('.000Z', 'Z');

describe('diff of a replaced certificate', () => {
  it("says the certificate changed, with each one's fingerprint and validity, never the key", () => {
    const a = tmp(),
      b = tmp();
    write(a, 'm.yaml', side(EXAMPLE_COM_CERT, EXAMPLE_COM_KEY));
    write(b, 'm.yaml', side(OTHER_TEST_CERT, OTHER_TEST_KEY));
    const r = turnpike('diff', a, b, '--no-color');
    const [before, after] = [new X509Certificate(EXAMPLE_COM_CERT), new X509Certificate(OTHER_TEST_CERT)];
    expect(r.stdout).toBe(
      'xds\n~ gateway infra/gw\n' +
        `    ~ certificate infra/cert: SHA-256 ${before.fingerprint256}, valid ${iso(before.validFrom)} to ` +
        `${iso(before.validTo)} → SHA-256 ${after.fingerprint256}, valid ${iso(after.validFrom)} to ${iso(after.validTo)}\n`,
    );
    expect(r.code).toBe(1);
    const json = turnpike('diff', a, b, '-o', 'json').stdout;
    expect(JSON.parse(json).xds[0].certificates).toEqual([
      {
        secret: 'infra/cert',
        change: 'changed',
        old: { fingerprint: before.fingerprint256, notBefore: iso(before.validFrom), notAfter: iso(before.validTo) },
        new: { fingerprint: after.fingerprint256, notBefore: iso(after.validFrom), notAfter: iso(after.validTo) },
      },
    ]);
    for (const key of [EXAMPLE_COM_KEY, OTHER_TEST_KEY]) {
      const body = key.split('\n')[1]!;
      expect(r.stdout + json).not.toContain(body);
    }
    expect(r.stdout + json).not.toMatch(/PRIVATE KEY/);
    // The same certificate on both sides: no differences.
    expect(turnpike('diff', a, a).stdout).toBe('no differences\n');
  });
});
