// Client certificate validation (spec.tls.frontend): a reference that cannot be used names the
// ConfigMap or Secret and the key it looked for, and a listener left without any usable CA says why
// each one failed.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { cond, gateway, gatewayClass, listener, run, tlsSecret } from './builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from './tls-fixtures.js';

const https = {
  name: 'https',
  port: 443,
  protocol: 'HTTPS',
  tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] },
};
const configMap = (name: string, data: Record<string, string>): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'infra' }, data }) as KubeObject;

describe('frontend client certificate validation', () => {
  it('names the missing ConfigMap, and the object without a ca.crt key, for each unusable reference', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      configMap('no-key', { 'bundle.pem': EXAMPLE_COM_CERT }),
      gateway('gw', [https], {
        tls: {
          frontend: {
            default: {
              validation: {
                caCertificateRefs: [
                  { kind: 'ConfigMap', name: 'gone' },
                  { kind: 'ConfigMap', name: 'no-key' },
                ],
              },
            },
          },
        },
      }),
    ]);
    const l = listener(r, 'infra', 'gw', 'https');
    expect(cond(l.conditions, 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'InvalidCACertificateRef',
      message: 'spec.tls.frontend.caCertificateRefs[0]: ConfigMap infra/gone not found',
    });
    expect(cond(l.conditions, 'Accepted')?.message).toBe(
      'spec.tls.frontend: none of the CA certificate references is usable: ' +
        'spec.tls.frontend.caCertificateRefs[0]: ConfigMap infra/gone not found; ' +
        'spec.tls.frontend.caCertificateRefs[1]: ConfigMap infra/no-key: no "ca.crt" entry',
    );
  });
});
