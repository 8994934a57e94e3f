// Port-forward through the real kube-apiserver (pods/portforward) to the kubelet's own port-forward code
// (kubelet-streaming, which the fake kubelet runs as its Node's endpoint): forwardToPod reaches a
// loopback-only HTTP server of this process standing for a Pod's port, as `turnpike capture` reaches
// the controller's. As an admin and as a user bound to a Role with only what a port-forward needs, it
// works, bodies intact; a user without that Role is refused with 403.
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { forwardToPod, KubeApiError, KubeClient, type PodPortForward } from '@turnpike/kube';
import { Cluster, waitFor } from '../harness/cluster.js';
import { FakeKubelet } from '../harness/fake-kubelet.js';
import { ns } from '../harness/fixtures.js';

const NS = 'debug';
const POD = 'controller-0';
const MiB = 1024 * 1024;

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: POD, namespace: NS },
  spec: { containers: [{ name: 'controller', image: 'turnpike:e2e' }] },
} as KubeObject;

const rbac = 'rbac.authorization.k8s.io';

/**
 * Role `name` (pods get, and `verbs` on pods/portforward) bound to ServiceAccount `name`. A port-forward over a
 * websocket is a GET, authorized as get on pods/portforward, and the API server checks create as well
 * (AuthorizePodWebsocketUpgradeCreatePermission, on by default since 1.35): a user needs both.
 */
const roleFor = (name: string, verbs: string[]): KubeObject[] =>
  [
    {
      apiVersion: `${rbac}/v1`,
      kind: 'Role',
      metadata: { name, namespace: NS },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
        { apiGroups: [''], resources: ['pods/portforward'], verbs },
      ],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name, namespace: NS },
      roleRef: { apiGroup: rbac, kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: NS }],
    },
  ] as KubeObject[];

const users: Record<string, string[]> = {
  debugger: ['get', 'create'],
  'create-only': ['create'],
  'get-only': ['get'],
};

/** Chunk `i` of the streamed body: a random MiB stamped with its index, so a lost or repeated chunk shows. */
function chunk(block: Buffer, i: number): Buffer {
  const c = Buffer.from(block);
  c.writeUInt32LE(i, 0);
  return c;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** GET through the forward: status, length and hash of the body, read as it streams. */
async function get(fwd: PodPortForward, path: string): Promise<{ status: number; length: number; sha: string }> {
  const res = await fetch(`http://127.0.0.1:${fwd.localPort}${path}`);
  const hash = createHash('sha256');
  let length = 0;
  for await (const c of res.body as AsyncIterable<Uint8Array>) {
    hash.update(c);
    length += c.length;
  }
  return { status: res.status, length, sha: hash.digest('hex') };
}

describe('port-forward', () => {
  let cluster: Cluster;
  let kubelet: FakeKubelet;
  let podServer: Server;
  let podPort: number;
  const clients: KubeClient[] = [];
  const kubeconfigs: Record<string, string> = {};
  const body = randomBytes(8 * MiB + 13);
  const block = randomBytes(MiB);

  beforeAll(async () => {
    cluster = await Cluster.start();
    kubelet = new FakeKubelet(cluster.admin);
    await kubelet.start();
    // The Pod's loopback-only endpoint: /body has a length, /stream?mib=N is chunked.
    podServer = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://pod');
      if (url.pathname === '/body') return res.writeHead(200, { 'Content-Length': body.length }).end(body);
      if (url.pathname !== '/stream') return res.writeHead(404).end();
      void (async () => {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        const n = Number(url.searchParams.get('mib'));
        for (let i = 0; i < n && !res.destroyed; i++) if (!res.write(chunk(block, i))) await once(res, 'drain');
        res.end();
      })();
    });
    podServer.listen(0, '127.0.0.1');
    await once(podServer, 'listening');
    podPort = (podServer.address() as { port: number }).port;
    await cluster.apply(ns(NS));
    await cluster.apply(pod);
    await waitFor('the Pod running on the fake node', async () => {
      const p = (await cluster.get(pod)) as (KubeObject & { status?: { phase?: string } }) | undefined;
      return p?.status?.phase === 'Running' ? true : undefined;
    });
    for (const [name, verbs] of Object.entries(users)) {
      for (const o of roleFor(name, verbs)) await cluster.apply(o);
      kubeconfigs[name] = await cluster.serviceAccountKubeconfig(NS, name);
    }
    // The bindings reach the API server's authorizer shortly after they are stored.
    for (const [name, verbs] of Object.entries(users))
      for (const verb of verbs)
        await waitFor(`${name} may ${verb} pods/portforward`, async () => {
          const review = await cluster.admin.must<{ status?: { allowed?: boolean } }>(
            'POST',
            '/apis/authorization.k8s.io/v1/subjectaccessreviews',
            {
              apiVersion: 'authorization.k8s.io/v1',
              kind: 'SubjectAccessReview',
              spec: {
                user: `system:serviceaccount:${NS}:${name}`,
                resourceAttributes: { namespace: NS, verb, resource: 'pods', subresource: 'portforward', name: POD },
              },
            },
          );
          return review.status?.allowed ? true : undefined;
        });
  }, 600_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    kubelet?.stop();
    podServer?.close();
    await cluster?.stop();
  }, 30_000);

  const client = (kubeconfig: string) => {
    const c = KubeClient.fromKubeconfig(kubeconfig);
    clients.push(c);
    return c;
  };

  it('port-forward: as an admin, GETs through the forward return their bodies intact, 256 MiB streamed whole', async () => {
    const fwd = await forwardToPod(cluster.admin, NS, POD, podPort);
    try {
      for (let i = 0; i < 2; i++)
        expect(await get(fwd, '/body')).toEqual({ status: 200, length: body.length, sha: sha(body) });
      const mib = 256;
      const want = createHash('sha256');
      for (let i = 0; i < mib; i++) want.update(chunk(block, i));
      expect(await get(fwd, `/stream?mib=${mib}`)).toEqual({ status: 200, length: mib * MiB, sha: want.digest('hex') });
    } finally {
      await fwd.close();
    }
  }, 180_000);

  it('port-forward: a user whose Role grants only pods get and pods/portforward get and create forwards', async () => {
    const fwd = await forwardToPod(client(kubeconfigs.debugger!), NS, POD, podPort);
    try {
      expect(await get(fwd, '/body')).toEqual({ status: 200, length: body.length, sha: sha(body) });
    } finally {
      await fwd.close();
    }
  }, 60_000);

  it('port-forward: pods/portforward with only create, or only get, is refused with 403', async () => {
    const refusal = async (user: string) => {
      const err = await forwardToPod(client(kubeconfigs[user]!), NS, POD, podPort).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KubeApiError);
      expect((err as KubeApiError).status).toBe(403);
      return (err as KubeApiError).message;
    };
    expect(await refusal('create-only')).toContain(
      `User "system:serviceaccount:${NS}:create-only" cannot get resource "pods/portforward"`,
    );
    // The create check (the request itself was a GET) answers without a reason.
    expect(await refusal('get-only')).toBe(`port-forward ${NS}/${POD}:${podPort}: 403 pods "${POD}" is forbidden:`);
  }, 60_000);

  it('port-forward: a user without that Role is refused with 403 and the API server message', async () => {
    const nobody = client(await cluster.serviceAccountKubeconfig(NS, 'nobody'));
    const err = await forwardToPod(nobody, NS, POD, podPort).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(403);
    expect((err as KubeApiError).reason).toBe('Forbidden');
    expect((err as KubeApiError).message).toContain(
      `port-forward ${NS}/${POD}:${podPort}: 403 pods "${POD}" is forbidden: User "system:serviceaccount:${NS}:nobody"`,
    );
  }, 60_000);

  it('port-forward: a Pod that does not exist is refused with 404', async () => {
    const err = await forwardToPod(cluster.admin, NS, 'missing', podPort).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(404);
    expect((err as KubeApiError).message).toContain('pods "missing" not found');
  }, 60_000);

  it('port-forward: a connection to a port nothing listens on is reset, with the kubelet error reported', async () => {
    const closed = createTcpServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const deadPort = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const errors: Error[] = [];
    const fwd = await forwardToPod(cluster.admin, NS, POD, deadPort, { onStreamError: (e) => errors.push(e) });
    try {
      const local = connect(fwd.localPort, '127.0.0.1');
      const outcome = await new Promise<string>((r) => {
        local.on('error', (e: NodeJS.ErrnoException) => r(e.code ?? e.message));
        local.on('end', () => r('end'));
        local.resume();
      });
      expect(outcome).toBe('ECONNRESET');
      await waitFor('the stream error', async () => (errors.length ? true : undefined), 10_000, 20);
      expect(errors[0]!.message).toMatch(
        new RegExp(
          `^port-forward ${NS}/${POD}:${deadPort}: error forwarding port ${deadPort} to pod ${POD}, .*refused`,
        ),
      );
    } finally {
      await fwd.close();
    }
  }, 60_000);
});
