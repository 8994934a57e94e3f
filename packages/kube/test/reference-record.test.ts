// The record of referenced Secrets and ConfigMaps for the live tools (reference-record.ts): applied to
// the ConfigMap turnpike-references in the controller's namespace when what it says changes (not when
// an unrelated object does), retried when a write fails, and cut to the size of a ConfigMap.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import { CONTROLLER_NAME, type KubeObject, type RecordedReference, type ReferenceRecord } from '@turnpike/api';
import { snapshotFromObjects } from '@turnpike/translator';
import { REFERENCE_RECORD_KEY, ReferenceRecordPublisher, referenceRecordText } from '../src/index.js';
import { kubeClientFor } from './kube-client-for.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_TEST_CERT } from '../../translator/test/tls-fixtures.js';

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Written {
  method: string;
  url: string;
  contentType?: string;
  body: { metadata: { name: string; namespace: string; labels: Record<string, string> }; data: Record<string, string> };
}

async function apiServer(status: () => number): Promise<{ server: Server; requests: Written[]; port: number }> {
  const requests: Written[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      requests.push({
        method: req.method!,
        url: req.url!,
        ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
        body: JSON.parse(text || '{}'),
      });
      const code = status();
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(code === 200 ? text : JSON.stringify({ kind: 'Status', code, message: 'refused by the test' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, requests, port: (server.address() as { port: number }).port };
}

const tls = (name: string, cert: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { namespace: 'infra', name },
  type: 'kubernetes.io/tls',
  data: { 'tls.crt': Buffer.from(cert).toString('base64'), 'tls.key': Buffer.from(EXAMPLE_COM_KEY).toString('base64') },
});
const base: KubeObject[] = [
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'tp' },
    spec: { controllerName: CONTROLLER_NAME },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { namespace: 'infra', name: 'gw' },
    spec: {
      gatewayClassName: 'tp',
      listeners: [{ name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } }],
    },
  },
];
const recordOf = (w: Written) => JSON.parse(w.body.data[REFERENCE_RECORD_KEY]!) as ReferenceRecord;

describe('ReferenceRecordPublisher', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0)) await c();
  });
  const start = async (status: () => number = () => 200) => {
    const api = await apiServer(status);
    const client = kubeClientFor(api.port);
    const publisher = new ReferenceRecordPublisher({ client, namespace: 'turnpike-system', minIntervalMs: 0 });
    cleanup.push(async () => {
      await publisher.stop();
      client.close();
      api.server.close();
    });
    return { ...api, publisher };
  };

  it('applies the record to turnpike-references in its namespace, again only when what it says changes', async () => {
    const { requests, publisher } = await start();
    publisher.update(snapshotFromObjects([...base, tls('cert', EXAMPLE_COM_CERT)]));
    await until(() => requests.length === 1 && !publisher.pending);
    const [first] = requests;
    expect(first).toMatchObject({
      method: 'PATCH',
      url: '/api/v1/namespaces/turnpike-system/configmaps/turnpike-references?fieldManager=turnpike-references&force=true',
      contentType: 'application/apply-patch+yaml',
      body: {
        metadata: {
          name: 'turnpike-references',
          namespace: 'turnpike-system',
          labels: { 'app.kubernetes.io/managed-by': 'turnpike' },
        },
      },
    });
    const written = recordOf(first!);
    expect(written.references.map((r) => [r.name, r.certificate?.keyMatches])).toEqual([['cert', true]]);
    expect(Date.parse(written.updated)).not.toBeNaN();
    expect(JSON.stringify(first!.body)).not.toContain('PRIVATE KEY');

    // Another object of a kind the record does not depend on, or the same Secret again: nothing to write.
    const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'infra', name: 's' } };
    publisher.update(snapshotFromObjects([...base, tls('cert', EXAMPLE_COM_CERT), service]));
    expect(publisher.pending).toBe(false);
    // The certificate replaced: written again, with its new facts.
    publisher.update(snapshotFromObjects([...base, tls('cert', OTHER_TEST_CERT), service]));
    await until(() => requests.length === 2 && !publisher.pending);
    expect(recordOf(requests[1]!).references[0]!.certificate).toMatchObject({ keyMatches: false });
    // A new leader writes it again even though it says the same.
    publisher.update(snapshotFromObjects([...base, tls('cert', OTHER_TEST_CERT), service]), true);
    await until(() => requests.length === 3 && !publisher.pending);
  });

  it('a refused write is retried, with what is newest then', async () => {
    let refuse = true;
    const { requests, publisher } = await start(() => (refuse ? 403 : 200));
    publisher.update(snapshotFromObjects([...base, tls('cert', EXAMPLE_COM_CERT)]));
    await until(() => requests.length === 1);
    refuse = false;
    publisher.update(snapshotFromObjects([...base, tls('cert', OTHER_TEST_CERT)]));
    await until(() => requests.length === 2 && !publisher.pending);
    expect(recordOf(requests[1]!).references[0]!.certificate).toMatchObject({ keyMatches: false });
  });

  it('a record past the size of a ConfigMap keeps the first entries and counts the rest', () => {
    const entries: RecordedReference[] = Array.from({ length: 100 }, (_, i) => ({
      kind: 'Secret',
      namespace: 'infra',
      name: `cert-${String(i).padStart(3, '0')}`,
      found: true,
      certificate: { fingerprint: 'AB:'.repeat(31) + 'AB', dnsNames: ['example.com'], keyMatches: true },
    }));
    const text = referenceRecordText(entries, '2026-12-05T10:00:00.000Z', 5000);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(5000);
    const r = JSON.parse(text) as ReferenceRecord;
    expect(r.references.length).toBeGreaterThan(10);
    expect(r.references.length + r.omitted!).toBe(100);
    expect(r.references).toEqual(entries.slice(0, r.references.length));
    expect(JSON.parse(referenceRecordText(entries, 'x', 1_000_000)).omitted).toBeUndefined();
  });
});
