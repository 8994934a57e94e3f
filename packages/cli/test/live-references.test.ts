// The live tools read no Secret and no ConfigMap (live-references.ts): the controller's record stands
// for each referenced one, so a live translation gives the statuses the controller gives; the tools say
// what each verdict rests on, and a reference neither the record nor the files describe is named as one
// they cannot judge, never taken as missing or valid.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { CONTROLLER_NAME, type KubeObject } from '@turnpike/api';
import { loadManifests } from '@turnpike/engine';
import { referenceRecordEntries, snapshotFromObjects } from '@turnpike/translator';
import type { LiveCluster } from '../src/live-cluster.js';
import { liveInput, recordSummary } from '../src/live-references.js';
import { translateLive, translateObjects } from '../src/offline.js';
import { semanticDiff } from '../src/semantic-diff.js';
import {
  EXAMPLE_COM_CERT,
  EXAMPLE_COM_KEY,
  OTHER_TEST_CERT,
  OTHER_TEST_KEY,
} from '../../translator/test/tls-fixtures.js';

const GW = 'gateway.networking.k8s.io/v1';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const tlsSecret = (name: string, cert: string, key: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'kubernetes.io/tls',
  metadata: { name, namespace: 'edge' },
  data: { 'tls.crt': b64(cert), 'tls.key': b64(key) },
});
const https = (name: string, port: number, secret: string) => ({
  name,
  port,
  protocol: 'HTTPS',
  hostname: `${name}.example.com`,
  tls: { certificateRefs: [{ name: secret }] },
});
const gateway = (listeners: Record<string, unknown>[]): KubeObject => ({
  apiVersion: GW,
  kind: 'Gateway',
  metadata: { name: 'secure', namespace: 'edge', generation: 1 },
  spec: { gatewayClassName: 'tp', listeners },
});
const caConfigMap: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'store-ca', namespace: 'edge' },
  data: { 'ca.crt': EXAMPLE_COM_CERT },
};
const cluster: KubeObject[] = [
  { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tp' }, spec: { controllerName: CONTROLLER_NAME } },
  tlsSecret('web-cert', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
  tlsSecret('mismatched', EXAMPLE_COM_CERT, OTHER_TEST_KEY),
  tlsSecret('unreferenced', OTHER_TEST_CERT, OTHER_TEST_KEY),
  caConfigMap,
  gateway([https('shop', 443, 'web-cert'), https('blog', 8443, 'mismatched')]),
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'store', namespace: 'edge' },
    spec: { ports: [{ port: 8080 }] },
  },
  {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name: 'shop', namespace: 'edge', generation: 1 },
    spec: { parentRefs: [{ name: 'secure' }], rules: [{ backendRefs: [{ name: 'store', port: 8080 }] }] },
  },
  {
    apiVersion: GW,
    kind: 'BackendTLSPolicy',
    metadata: { name: 'store-tls', namespace: 'edge', generation: 1 },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: 'store' }],
      validation: {
        hostname: 'store.example.com',
        caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'store-ca' }],
      },
    },
  },
];
const hidden = (o: KubeObject) => o.kind === 'Secret' || o.kind === 'ConfigMap';

/** The cluster as a live tool reads it: no Secret, no ConfigMap, and the controller's record. */
function live(objects = cluster, record = true): LiveCluster {
  return {
    objects: objects.filter((o) => !hidden(o)),
    options: {},
    record: record
      ? {
          source: 'turnpike-system/turnpike-references',
          record: {
            updated: '2026-12-05T10:00:00.000Z',
            references: referenceRecordEntries(snapshotFromObjects(objects)),
          },
        }
      : { missing: 'the controller has published no record' },
  };
}
const NOW = '2026-12-05T10:00:00.000Z';

describe('live tools without Secrets or ConfigMaps', () => {
  it("translate to the controller's statuses, and say each referenced object was judged as the controller last saw it", () => {
    const real = translateObjects(cluster, NOW).result;
    const r = translateLive(live(), NOW);
    for (const key of real.statuses.sortedKeys())
      expect([key, r.result.statuses.get(key)]).toEqual([key, real.statuses.get(key)]);
    expect(r.resources.some((o) => o.kind === 'Secret' && o.apiVersion === 'v1')).toBe(false);
    const says = r.references!.flatMap((n) => n.says);
    expect(says).toEqual([
      expect.stringMatching(
        /^CA bundle of ConfigMap edge\/store-ca: as the controller last saw it \(turnpike-system\/turnpike-references, 2026-12-05T10:00:00.000Z\): 1 certificate\(s\), sha256 [0-9a-f]{64}$/,
      ),
      expect.stringMatching(
        /^certificate of Secret edge\/mismatched: as the controller last saw it .*: SHA-256 fingerprint [0-9A-F:]+; DNS names \*\.example\.com, example\.com; valid \S+ to \S+; key does not match; not usable: data\["tls.key"\] does not belong to the certificate in data\["tls.crt"\]$/,
      ),
      expect.stringMatching(/^certificate of Secret edge\/web-cert: as the controller last saw it .*; key matches$/),
    ]);
    expect(recordSummary(r.record!, r.references!)).toBe(
      'the live tools read no Secret and no ConfigMap: 3 referenced object(s) judged as the controller last saw ' +
        'them (ConfigMap turnpike-system/turnpike-references, updated 2026-12-05T10:00:00.000Z)',
    );
  });

  it('diff: a change set that re-applies an unchanged Secret and CA bundle changes nothing; a new certificate changes the listener', () => {
    const l = live();
    const before = translateLive(l, NOW).result;
    const same = translateLive(l, NOW, [tlsSecret('web-cert', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY), caConfigMap]);
    expect(semanticDiff(before, same.result).same).toBe(true);
    expect(same.references!.every((n) => n.judged === 'record')).toBe(true);
    // The key replaced by one of another certificate: the listener's verdict comes from the files.
    const broken = translateLive(l, NOW, [tlsSecret('web-cert', EXAMPLE_COM_CERT, OTHER_TEST_KEY)]);
    const d = semanticDiff(before, broken.result);
    expect(d.objects.map((o) => o.object)).toContain('Gateway/edge/secure');
    expect(broken.references!.find((n) => n.target === 'Secret/edge/web-cert')).toMatchObject({
      judged: 'files',
      says: ['Secret edge/web-cert: as the files given have it'],
    });
  });

  it('a reference neither the record nor the files describe is named as one the tools cannot judge', () => {
    const edited = gateway([https('shop', 443, 'web-cert'), https('blog', 8443, 'elsewhere')]);
    const r = translateLive(live(), NOW, [edited]);
    const blog = (
      r.result.statuses.get('Gateway/edge/secure') as { listeners: { name: string; conditions: any[] }[] }
    ).listeners.find((x) => x.name === 'blog')!;
    expect(blog.conditions.find((c) => c.type === 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'InvalidCertificateRef',
      message:
        "spec.listeners[1].tls.certificateRefs[0]: Secret edge/elsewhere: not readable here, and not in the controller's " +
        'record as a certificate: the controller judges it (its status says how)',
    });
    expect(r.references!.find((n) => n.target === 'Secret/edge/elsewhere')).toMatchObject({
      judged: 'unknown',
      referrers: [
        { from: 'Gateway/edge/secure', field: 'spec.listeners[1].tls.certificateRefs[0]', use: 'certificate' },
      ],
      says: [
        "Secret edge/elsewhere: not readable here (the live tools read no Secret or ConfigMap), not in the controller's " +
          'record: the controller judges it',
      ],
    });
  });

  it('without a record from the controller nothing is judged here, and the summary says why', () => {
    const r = translateLive(live(cluster, false), NOW);
    expect(r.references!.map((n) => n.judged)).toEqual(['unknown', 'unknown', 'unknown']);
    expect(recordSummary(r.record!, r.references!)).toBe(
      'the live tools read no Secret and no ConfigMap, and there is no record from the controller to judge the 3 ' +
        "referenced object(s) by: the controller has published no record; their verdicts are the controller's (its statuses)",
    );
    const shop = JSON.stringify(r.result.statuses.get('Gateway/edge/secure'));
    expect(shop).toContain("Secret edge/web-cert: not readable here, and not in the controller's record");
    expect(shop).not.toContain('not found');
  });

  it('a stand-in is never taken from files: a manifest naming its apiVersion is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-recorded-'));
    writeFileSync(
      join(dir, 'fake.yaml'),
      JSON.stringify({
        apiVersion: 'turnpike.dev/recorded',
        kind: 'Secret',
        metadata: { name: 'web-cert', namespace: 'edge' },
        recorded: { kind: 'Secret', namespace: 'edge', name: 'web-cert', certificate: { keyMatches: true } },
      }),
    );
    const loaded = loadManifests([dir]);
    expect(loaded.objects).toEqual([]);
    expect(loaded.invalid.join('\n')).toContain(
      "turnpike.dev/recorded is not served (it names a live tool's stand-in)",
    );
    expect(liveInput(live(), loaded.objects).references.every((n) => n.judged === 'record')).toBe(true);
  });
});
