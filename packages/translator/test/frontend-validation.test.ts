// Client certificate validation (spec.tls.frontend): a reference that cannot be used names the
// ConfigMap or Secret and the key it looked for, and a listener left without any usable CA says why
// each one failed. ClusterTrustBundles (GEP-5075) are CA sources too, when the cluster serves them.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { Translator, snapshotFromObjects } from '../src/index.js';
import { cond, gateway, gatewayClass, listener, run, tlsSecret } from './builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_TEST_CERT } from './tls-fixtures.js';

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

// GEP-5075: a ClusterTrustBundle (certificates.k8s.io, cluster-scoped, no ReferenceGrant) as a frontend CA.
describe('frontend validation with a ClusterTrustBundle', () => {
  const bundle = (name: string, trustBundle: string): KubeObject =>
    ({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'ClusterTrustBundle',
      metadata: { name },
      spec: { trustBundle },
    }) as KubeObject;
  const served = (isServed: boolean): KubeObject =>
    ({
      apiVersion: 'turnpike.dev/internal',
      kind: 'ServedAPI',
      metadata: { name: 'clustertrustbundles.certificates.k8s.io' },
      status: isServed ? { served: true, version: 'v1' } : { served: false },
    }) as KubeObject;
  const ctbRef = (name: string, group = 'certificates.k8s.io') => ({ group, kind: 'ClusterTrustBundle', name });
  const objects = (refs: Record<string, unknown>[], where: 'default' | 'perPort' = 'default'): KubeObject[] => [
    gatewayClass(),
    tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
    gateway('gw', [https], {
      tls: {
        frontend:
          where === 'default'
            ? { default: { validation: { caCertificateRefs: refs } } }
            : { perPort: [{ port: 443, tls: { validation: { caCertificateRefs: refs } } }] },
      },
    }),
  ];
  const irListener = (r: ReturnType<typeof run>) =>
    r.xdsIR.gateways
      .get('infra/gw')
      ?.ports.flatMap((p) => p.listeners)
      .find((l) => l.name.includes('https'));

  it('its trust bundle is the CA the listener validates client certificates with (default and perPort)', () => {
    for (const where of ['default', 'perPort'] as const) {
      for (const fact of [[], [served(true)]]) {
        const r = run([...objects([ctbRef('corp-ca')], where), bundle('corp-ca', EXAMPLE_COM_CERT), ...fact]);
        const l = listener(r, 'infra', 'gw', 'https');
        expect(cond(l.conditions, 'ResolvedRefs')?.status).toBe('True');
        expect(cond(l.conditions, 'Accepted')?.status).toBe('True');
        expect(irListener(r)?.tls?.clientCA).toBe(EXAMPLE_COM_CERT);
      }
    }
  });

  it('a missing, empty or unparsable bundle is InvalidCACertificateRef, and the listener fails closed', () => {
    const cases: [KubeObject[], string][] = [
      [[], 'ClusterTrustBundle corp-ca not found'],
      [[bundle('corp-ca', '')], 'ClusterTrustBundle corp-ca: spec.trustBundle is empty'],
      [
        [bundle('corp-ca', 'not a certificate')],
        'ClusterTrustBundle corp-ca: spec.trustBundle holds no PEM certificate',
      ],
    ];
    for (const [extra, message] of cases) {
      const r = run([...objects([ctbRef('corp-ca')]), ...extra]);
      const l = listener(r, 'infra', 'gw', 'https');
      expect(cond(l.conditions, 'ResolvedRefs')).toMatchObject({
        status: 'False',
        reason: 'InvalidCACertificateRef',
        message: `spec.tls.frontend.caCertificateRefs[0]: ${message}`,
      });
      expect(cond(l.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
      // Not accepted: nothing of the listener is served, so no client gets through without validation.
      expect(irListener(r)).toBeUndefined();
    }
  });

  it('beside a usable ConfigMap, a missing bundle is named and keeps the listener from serving, as a bad ConfigMap does', () => {
    const r = run([
      ...objects([{ kind: 'ConfigMap', group: '', name: 'ca' }, ctbRef('gone')]),
      configMap('ca', { 'ca.crt': EXAMPLE_COM_CERT }),
    ]);
    const l = listener(r, 'infra', 'gw', 'https');
    expect(cond(l.conditions, 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'InvalidCACertificateRef',
      message: 'spec.tls.frontend.caCertificateRefs[1]: ClusterTrustBundle gone not found',
    });
    expect(cond(l.conditions, 'Accepted')?.status).toBe('True');
    expect(cond(l.conditions, 'Programmed')?.status).toBe('False');
    expect(irListener(r)).toBeUndefined();
  });

  it('when the cluster does not serve the API, the reference is of a kind that cannot be resolved, even with the object at hand', () => {
    const r = run([...objects([ctbRef('corp-ca')]), bundle('corp-ca', EXAMPLE_COM_CERT), served(false)]);
    const l = listener(r, 'infra', 'gw', 'https');
    expect(cond(l.conditions, 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'InvalidCACertificateKind',
      message:
        "spec.tls.frontend.caCertificateRefs[0]: ClusterTrustBundle (certificates.k8s.io) is not served by this cluster's API server",
    });
    expect(cond(l.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
    expect(irListener(r)).toBeUndefined();
  });

  it('a ClusterTrustBundle of the core group is another kind, not supported', () => {
    const r = run([...objects([ctbRef('corp-ca', '')]), bundle('corp-ca', EXAMPLE_COM_CERT)]);
    const l = listener(r, 'infra', 'gw', 'https');
    expect(cond(l.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidCACertificateKind' });
    expect(cond(l.conditions, 'ResolvedRefs')?.message).toContain('ClusterTrustBundle is not supported');
  });

  it('a namespace on the reference is refused: the bundle is cluster-scoped', () => {
    const r = run([...objects([{ ...ctbRef('corp-ca'), namespace: 'infra' }]), bundle('corp-ca', EXAMPLE_COM_CERT)]);
    expect(cond(listener(r, 'infra', 'gw', 'https').conditions, 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'InvalidCACertificateRef',
      message:
        'spec.tls.frontend.caCertificateRefs[0]: ClusterTrustBundle corp-ca is cluster-scoped: namespace must not be set',
    });
  });

  it('incrementally: a changed, deleted or unserved bundle re-derives the listener as a fresh translation does', () => {
    const t = new Translator();
    const steps: KubeObject[][] = [
      [bundle('corp-ca', EXAMPLE_COM_CERT)],
      [bundle('corp-ca', OTHER_TEST_CERT)],
      [],
      [bundle('corp-ca', EXAMPLE_COM_CERT), served(false)],
      [bundle('corp-ca', EXAMPLE_COM_CERT), served(true)],
    ];
    const clientCAs: (string | undefined)[] = [];
    for (const extra of steps) {
      const snapshot = snapshotFromObjects([...objects([ctbRef('corp-ca')]), ...extra]);
      const result = t.translate(snapshot);
      expect(JSON.stringify(result)).toBe(JSON.stringify(new Translator().translate(snapshot)));
      clientCAs.push(irListener(result)?.tls?.clientCA);
    }
    expect(clientCAs).toEqual([EXAMPLE_COM_CERT, OTHER_TEST_CERT, undefined, undefined, EXAMPLE_COM_CERT]);
  });
});
