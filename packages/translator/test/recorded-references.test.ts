// The record of referenced Secrets and ConfigMaps (recorded-references.ts) that the controller publishes
// for the live tools: which references it covers, that it holds no value, and that a translation in which
// each referenced object is a stand-in carrying its record gives the statuses the real objects give.
import { describe, expect, it } from '@jest/globals';
import { RECORDED_API_VERSION, type KubeObject, type RecordedReference } from '@turnpike/api';
import {
  recordReference,
  referenceRecordEntries,
  referenceTarget,
  secretReferences,
  snapshotFromObjects,
  translate,
} from '../src/index.js';
import {
  cond,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  listener,
  referenceGrant,
  service,
  tlsSecret,
} from './builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_TEST_CERT, OTHER_TEST_KEY } from './tls-fixtures.js';

const GW = 'gateway.networking.k8s.io/v1';
const https = (name: string, port: number, secret: string, namespace?: string) => ({
  name,
  port,
  protocol: 'HTTPS',
  hostname: `${name}.example.com`,
  tls: { mode: 'Terminate', certificateRefs: [{ name: secret, ...(namespace ? { namespace } : {}) }] },
});
const configMap = (ns: string, name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: ns, name },
  data,
});
const secret = (ns: string, name: string, type: string, values: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { namespace: ns, name },
  type,
  data: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});
const DOCKER_CONFIG = '{"auths":{"registry.example.com":{"auth":"YWRtaW46aHVudGVyMg=="}}}';

const objects: KubeObject[] = [
  gatewayClass(),
  gatewayClass('other', { controllerName: 'example.com/other' }),
  tlsSecret('good', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
  tlsSecret('mismatched', 'infra', EXAMPLE_COM_CERT, OTHER_TEST_KEY),
  tlsSecret('shared', 'certs', OTHER_TEST_CERT, OTHER_TEST_KEY),
  tlsSecret('hidden', 'certs', OTHER_TEST_CERT, OTHER_TEST_KEY),
  tlsSecret('passthrough', 'infra', OTHER_TEST_CERT, OTHER_TEST_KEY),
  tlsSecret('foreign', 'infra', OTHER_TEST_CERT, OTHER_TEST_KEY),
  secret('infra', 'opaque', 'Opaque', { 'tls.crt': EXAMPLE_COM_CERT, 'tls.key': EXAMPLE_COM_KEY }),
  referenceGrant(
    'certs',
    'certs',
    [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }],
    [{ group: '', kind: 'Secret', name: 'shared' }],
  ),
  configMap('infra', 'client-ca', { 'ca.crt': `# corp\n${EXAMPLE_COM_CERT}` }),
  gateway(
    'gw',
    [
      https('good', 443, 'good'),
      https('mismatched', 444, 'mismatched'),
      https('missing', 445, 'missing'),
      https('shared', 446, 'shared', 'certs'),
      https('hidden', 447, 'hidden', 'certs'),
      https('opaque', 448, 'opaque'),
      {
        name: 'pass',
        port: 449,
        protocol: 'TLS',
        tls: { mode: 'Passthrough', certificateRefs: [{ name: 'passthrough' }] },
      },
      http(),
    ],
    {
      allowedListeners: { namespaces: { from: 'All' } },
      tls: {
        backend: { clientCertificateRef: { name: 'good' } },
        frontend: {
          default: { validation: { caCertificateRefs: [{ kind: 'ConfigMap', group: '', name: 'client-ca' }] } },
        },
      },
    },
  ),
  {
    ...gateway('foreign', [https('x', 443, 'foreign')]),
    spec: { gatewayClassName: 'other', listeners: [https('x', 443, 'foreign')] },
  },
  secret('apps', 'ls-cert', 'kubernetes.io/tls', { 'tls.crt': 'not a certificate', 'tls.key': 'hunter2' }),
  {
    apiVersion: GW,
    kind: 'ListenerSet',
    metadata: { namespace: 'apps', name: 'ls', generation: 1 },
    spec: {
      parentRef: { name: 'gw', namespace: 'infra' },
      listeners: [
        { ...https('extra', 8443, 'ls-cert'), protocol: 'TLS', allowedRoutes: { kinds: [{ kind: 'TLSRoute' }] } },
      ],
    },
  },
  service('app'),
  httpRoute('r', {
    parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http' }],
    rules: [{ backendRefs: [{ name: 'app', port: 8080 }] }],
  }),
  configMap('apps', 'ca', { 'ca.crt': EXAMPLE_COM_CERT }),
  configMap('apps', 'no-ca', { other: 'x' }),
  secret('apps', 'ca-secret', 'Opaque', { 'ca.crt': OTHER_TEST_CERT, password: 'hunter2' }),
  {
    apiVersion: GW,
    kind: 'BackendTLSPolicy',
    metadata: { namespace: 'apps', name: 'app-tls' },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: 'app' }],
      validation: {
        hostname: 'app.example.com',
        caCertificateRefs: [
          { group: '', kind: 'ConfigMap', name: 'ca' },
          { group: '', kind: 'ConfigMap', name: 'no-ca' },
          { group: '', kind: 'Secret', name: 'ca-secret' },
        ],
      },
    },
  },
  secret('apps', 'regcred', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': DOCKER_CONFIG }),
  secret('apps', 'not-docker', 'Opaque', { token: 'hunter2' }),
  ...['regcred', 'not-docker'].map((pull) => ({
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'PluginInstallation',
    metadata: { namespace: 'apps', name: `plugin-${pull}`, generation: 1 },
    spec: { type: 'lua', image: 'registry.example.com/p:1', pullSecretRef: { name: pull } },
  })),
];

const values = (o: KubeObject) => o.kind === 'Secret' || o.kind === 'ConfigMap';

/** The objects as a live tool has them: every Secret and ConfigMap replaced by its record's stand-in. */
function standIns(all: KubeObject[], record: RecordedReference[]): KubeObject[] {
  return [
    ...all.filter((o) => !values(o)),
    ...record
      .filter((r) => r.found)
      .map((r) => ({
        apiVersion: RECORDED_API_VERSION,
        kind: r.kind,
        metadata: { namespace: r.namespace, name: r.name },
        ...(r.type ? { type: r.type } : {}),
        recorded: r,
      })),
  ];
}

describe('the record of referenced Secrets and ConfigMaps', () => {
  const snapshot = snapshotFromObjects(objects);
  const record = referenceRecordEntries(snapshot);

  it("lists what the translator reads: our Gateways' terminating listeners, backend and frontend refs, granted ones only, policies' and plugins'", () => {
    const targets = [...new Set(secretReferences(snapshot).map(referenceTarget))].sort();
    expect(targets).toEqual([
      'ConfigMap/apps/ca',
      'ConfigMap/apps/no-ca',
      'ConfigMap/infra/client-ca',
      'Secret/apps/ca-secret',
      'Secret/apps/ls-cert',
      'Secret/apps/not-docker',
      'Secret/apps/regcred',
      'Secret/certs/shared',
      'Secret/infra/good',
      'Secret/infra/mismatched',
      'Secret/infra/missing',
      'Secret/infra/opaque',
    ]);
    expect(record.map(referenceTarget)).toEqual(targets);
  });

  it("holds facts and the controller's verdicts, never a value: no key, no credential, no text beside a certificate", () => {
    const byName = new Map(record.map((r) => [r.name, r]));
    expect(byName.get('good')).toMatchObject({
      found: true,
      type: 'kubernetes.io/tls',
      certificate: {
        dnsNames: ['*.example.com', 'example.com'],
        keyMatches: true,
        fingerprint: expect.stringMatching(/^[0-9A-F:]{95}$/),
      },
    });
    expect(byName.get('good')!.certificate!.problem).toBeUndefined();
    expect(Date.parse(byName.get('good')!.certificate!.notAfter!)).toBeGreaterThan(Date.now());
    expect(byName.get('mismatched')!.certificate).toMatchObject({
      keyMatches: false,
      problem: 'data["tls.key"] does not belong to the certificate in data["tls.crt"]',
    });
    expect(byName.get('missing')).toEqual({ kind: 'Secret', namespace: 'infra', name: 'missing', found: false });
    expect(byName.get('client-ca')!.caBundle).toEqual({
      certificates: 1,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(byName.get('no-ca')!.caBundle).toEqual({ problem: 'no "ca.crt" entry' });
    expect(byName.get('ls-cert')!.certificate).toEqual({ problem: 'data["tls.crt"] is not a PEM certificate' });
    expect(byName.get('regcred')).toMatchObject({
      type: 'kubernetes.io/dockerconfigjson',
      pullSecret: { dockerConfig: true },
    });
    const text = JSON.stringify(record);
    for (const secretValue of [EXAMPLE_COM_KEY, OTHER_TEST_KEY, DOCKER_CONFIG, 'hunter2', '# corp', EXAMPLE_COM_CERT])
      for (const piece of secretValue.split('\n').filter((l) => l.length > 6 && !l.startsWith('-----')))
        expect(text).not.toContain(piece);
    expect(text).not.toContain(Buffer.from(EXAMPLE_COM_KEY).toString('base64').slice(0, 40));
  });

  it('a translation of stand-ins carrying the record gives every status the real objects give', () => {
    const real = translate(snapshot);
    const live = translate(snapshotFromObjects(standIns(objects, record)));
    expect([...live.statuses.sortedKeys()]).toEqual([...real.statuses.sortedKeys()]);
    for (const key of real.statuses.sortedKeys())
      expect([key, live.statuses.get(key)]).toEqual([key, real.statuses.get(key)]);
    const messages = JSON.stringify(
      [
        'ListenerSet/apps/ls',
        'Gateway/infra/gw',
        'BackendTLSPolicy/apps/app-tls',
        'PluginInstallation/apps/plugin-not-docker',
      ].map((k) => live.statuses.get(k)),
    );
    for (const said of [
      'is not a PEM certificate',
      'does not belong to',
      'Secret infra/missing not found',
      'want kubernetes.io/tls',
      'ConfigMap apps/no-ca: no \\"ca.crt\\" entry',
      'must be of type kubernetes.io/dockerconfigjson',
    ])
      expect(messages).toContain(said);
    // And the same served certificates and CA bundles, by name.
    const tls = (r: typeof real) =>
      r.xdsIR.gateways.get('infra/gw')!.ports.map((p) => p.listeners.map((l) => l.tls?.certificates ?? []));
    expect(tls(live)).toEqual(tls(real));
  });

  it('a stand-in the record says nothing of is named as not judged here, never taken as missing or valid', () => {
    const unrecorded = standIns(objects, record).map((o) =>
      o.apiVersion === RECORDED_API_VERSION && o.metadata.name === 'good'
        ? { ...o, recorded: { kind: 'Secret', namespace: 'infra', name: 'good' } }
        : o,
    );
    const r = translate(snapshotFromObjects(unrecorded));
    const l = listener(r, 'infra', 'gw', 'good').conditions;
    expect(cond(l, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidCertificateRef' });
    expect(cond(l, 'ResolvedRefs')!.message).toBe(
      "spec.listeners[0].tls.certificateRefs[0]: Secret infra/good: not readable here, and not in the controller's " +
        'record as a certificate: the controller judges it (its status says how)',
    );
  });

  it('the same object judged again gives the same entry (kept while unchanged), and another use adds to it', () => {
    expect(referenceRecordEntries(snapshot)).toEqual(record);
    const good = objects.find((o) => o.metadata.name === 'good')!;
    const both = recordReference({ kind: 'Secret', namespace: 'infra', name: 'good' }, good, [
      'certificate',
      'caBundle',
    ]);
    expect(both.caBundle).toEqual({ problem: 'no "ca.crt" entry' });
    expect(both.certificate).toEqual(record.find((r) => r.name === 'good')!.certificate);
  });
});
