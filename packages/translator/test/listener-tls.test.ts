// Listener TLS (listener-tls.ts): certificateRefs, their grants, and which certificates serve.
import { describe, expect, it } from '@jest/globals';
import { cond, gateway, gatewayClass, http, listener, run, statusOf, tlsSecret } from './builders.js';
import { checkTLSSecret } from '../src/policies/certificates.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_TEST_KEY } from './tls-fixtures.js';

describe('HTTPS listener with no certificateRefs', () => {
  it('is not accepted (UnsupportedValue) nor Programmed, references are resolved, and the message says what is missing', () => {
    for (const [tls, missing] of [
      [undefined, 'spec.listeners[0].tls is not set'],
      [{ mode: 'Terminate' }, 'spec.listeners[0].tls.certificateRefs is empty'],
    ] as const) {
      const r = run([
        gatewayClass(),
        gateway('gw', [{ name: 'https', port: 443, protocol: 'HTTPS', ...(tls ? { tls } : {}) }, http()]),
      ]);
      const l = listener(r, 'infra', 'gw', 'https').conditions;
      expect(cond(l, 'Accepted')).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
      expect(cond(l, 'Accepted')!.message).toContain(missing);
      expect(cond(l, 'Accepted')!.message).toContain('needs at least one certificate');
      expect(cond(l, 'ResolvedRefs')?.status).toBe('True');
      expect(cond(l, 'Programmed')).toMatchObject({ status: 'False', reason: 'Invalid' });
      // The other listener still serves; the Gateway is accepted with ListenersNotValid.
      expect(cond(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Accepted')).toMatchObject({
        status: 'True',
        reason: 'ListenersNotValid',
      });
      expect(r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.port)).toEqual([80]);
    }
  });
});

describe('multiple certificateRefs, some invalid: the valid ones serve, the invalid ones are named', () => {
  const https = (refs: string[]) =>
    gateway('gw', [
      {
        name: 'https',
        port: 443,
        protocol: 'HTTPS',
        hostname: 'example.com',
        tls: { certificateRefs: refs.map((name) => ({ name })) },
        allowedRoutes: { namespaces: { from: 'All' } },
      },
    ]);
  it('one valid and one missing Secret: Programmed, ResolvedRefs=False naming the missing one, the valid certificate served', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('good', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      https(['good', 'missing']),
    ]);
    const l = listener(r, 'infra', 'gw', 'https');
    expect(cond(l.conditions, 'Programmed')!.status).toBe('True');
    expect(cond(l.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidCertificateRef' });
    expect(cond(l.conditions, 'ResolvedRefs')!.message).toBe(
      'spec.listeners[0].tls.certificateRefs[1]: Secret infra/missing not found; serving the other 1 certificate(s)',
    );
    const tls = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.tls!;
    expect(tls.certificates).toEqual(['infra/good']);
  });
  it('every reference invalid: nothing to serve, the listener is not programmed and both are named', () => {
    const r = run([gatewayClass(), https(['gone', 'missing'])]);
    const l = listener(r, 'infra', 'gw', 'https');
    expect(cond(l.conditions, 'Programmed')!.status).toBe('False');
    expect(cond(l.conditions, 'ResolvedRefs')!.message).toBe(
      'spec.listeners[0].tls.certificateRefs[0]: Secret infra/gone not found; spec.listeners[0].tls.certificateRefs[1]: Secret infra/missing not found',
    );
    expect(r.xdsIR.gateways.get('infra/gw')!.ports).toEqual([]);
  });
});

describe('TLS Secret verdicts shared by content', () => {
  const secret = (name: string, crt: string, key: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'infra' },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': Buffer.from(crt).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
  });
  it('two Secrets holding one pair share one frozen verdict; another key is judged on its own', () => {
    const a = checkTLSSecret(secret('a', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY));
    const b = checkTLSSecret(secret('b', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY));
    expect(b).toBe(a);
    expect('cert' in a && Object.isFrozen(a.cert) && Object.isFrozen(a.cert.dnsNames)).toBe(true);
    // The same certificate with a key that is not its own: not the cached verdict.
    expect(checkTLSSecret(secret('c', EXAMPLE_COM_CERT, OTHER_TEST_KEY))).toEqual({
      error: 'data["tls.key"] does not belong to the certificate in data["tls.crt"]',
    });
    // Moving bytes between certificate and key gives another digest, not a stale verdict.
    const joined = EXAMPLE_COM_CERT + EXAMPLE_COM_KEY;
    const split = checkTLSSecret(secret('d', joined.slice(0, -10), joined.slice(-10)));
    expect('error' in split).toBe(true);
  });
});
