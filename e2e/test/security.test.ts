// Control-plane security against a real API server and the controller process: xDS over mTLS
// with per-Gateway identities issued by the controller's own CA, a phased CA rotation under a live
// stream, plugin content over mTLS, and signed plugins. Lifetimes are short (CA 60 s, published
// 10 s before it signs, certificates 30 s) so that rotation and renewal happen within the suite;
// each test reads the proxy's credentials afresh, as a proxy would see its renewed Secret.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { TYPE } from '@turnpike/xds';
import { join } from 'node:path';
import { loadYaml, ROOT, waitFor, xdsCheckBinary, type Cluster } from '../harness/cluster.js';
import type { Controller } from '../harness/controller.js';
import { clusterWithController } from '../harness/setup.js';
import { cond, gatewayClass, ns } from '../harness/fixtures.js';
import { proxyObjectsOf } from '../harness/proxies.js';
import {
  proxyCredentials,
  proxySecretOf,
  XDS_SERVER_NAME,
  xdsCheckTlsArgs,
  type ProxyCredentials,
} from '../harness/xds-credentials.js';
import { openListenerStream, resourceText, type ClientTls } from '../../packages/xds/test/ads-client.js';
import { TestRegistry } from '../../packages/plugins/test/support/registry.js';

type Obj = KubeObject & { spec?: any; status?: any; data?: Record<string, string> };
const GW = 'gateway.networking.k8s.io/v1';
const gateway = (name: string, port: number): Obj => ({
  apiVersion: GW,
  kind: 'Gateway',
  metadata: { name, namespace: 'tenants' },
  spec: { gatewayClassName: 'tp', listeners: [{ name: 'http', port, protocol: 'HTTP' }] },
});
const tlsOf = (c: ProxyCredentials, ca = c.ca): ClientTls => ({
  ca,
  cert: c.cert,
  key: c.key,
  serverName: XDS_SERVER_NAME,
});

describe('security', () => {
  const env = clusterWithController(
    async (c) => {
      await c.apply(ns('tenants'));
      await c.apply(gatewayClass('tp'));
      await c.apply(gateway('a', 8001));
      await c.apply(gateway('b', 8002));
    },
    ['--xds-ca-validity', '60s', '--xds-ca-rotation-grace', '10s', '--xds-cert-validity', '30s'],
  );
  let cluster: Cluster;
  let controller: Controller;
  beforeAll(() => {
    ({ cluster, controller } = env);
  });
  const credsOfA = () => proxyCredentials(cluster, 'tenants', 'a');

  it('security: the proxy Deployment mounts a client certificate naming its Gateway, and the bootstrap speaks TLS to the controller', async () => {
    const a = await credsOfA();
    const cert = new X509Certificate(a.cert);
    expect(cert.subjectAltName).toBe('URI:spiffe://turnpike.local/ns/tenants/gateway/a');
    // The Secret is applied first; the Deployment follows it.
    const dep = await waitFor(
      'proxy Deployment',
      async () =>
        (await cluster.get({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: proxyObjectsOf('tenants', 'a'),
        })) as Obj | undefined,
    );
    const pod = dep.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.volumes).toEqual(
      expect.arrayContaining([
        { name: 'xds-tls', secret: { secretName: proxySecretOf('tenants', 'a').name, defaultMode: 0o440 } },
      ]),
    );
    expect(pod.containers[0].securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    const cm = (await cluster.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: proxyObjectsOf('tenants', 'a'),
    })) as Obj;
    const bootstrap = JSON.parse(cm.data!['envoy.json']!);
    expect(bootstrap.static_resources.clusters[0].transport_socket.name).toBe('envoy.transport_sockets.tls');
    expect(Object.keys(cm.data!).sort()).toEqual(['envoy.json', 'sds-xds-ca.json', 'sds-xds-client.json']);
  });

  it('security: a client with no certificate is refused', async () => {
    const a = await credsOfA();
    const r = await openListenerStream(controller.xdsPort, { ca: a.ca, serverName: XDS_SERVER_NAME }, 'tenants/a');
    expect(r.ok).toBe(false);
  });

  it("security: a client with Gateway A's certificate asking as Gateway B gets nothing: PERMISSION_DENIED, logged and counted", async () => {
    const a = await credsOfA();
    const r = await openListenerStream(controller.xdsPort, tlsOf(a), 'tenants/b');
    expect(r).toMatchObject({ ok: false, code: 7 });
    expect((r as { details: string }).details).toContain(
      "Gateway tenants/a's; node.cluster tenants/b is not served to it",
    );
    expect(
      await controller.metric('turnpike_xds_refused_streams_total', 'reason="wrong-gateway"'),
    ).toBeGreaterThanOrEqual(1);
    expect(controller.out).toContain('refused an ADS stream');
  });

  it("security: Gateway A's client gets exactly its config, and the xds-check passes over mTLS", async () => {
    // Built on first use (a minute or more on a new machine): before the credentials are read, or a CA
    // rotation (every 40 s here) meanwhile leaves them naming a CA the server no longer presents.
    const checker = xdsCheckBinary();
    const a = await credsOfA();
    const r = await openListenerStream(controller.xdsPort, tlsOf(a), 'tenants/a');
    if (!r.ok) throw new Error(`refused: ${r.details}`);
    r.stream.end();
    expect(resourceText(r.first)).toContain('tcp-8001');
    expect(resourceText(r.first)).not.toContain('tcp-8002');
    const report = JSON.parse(
      execFileSync(
        checker,
        ['-address', `127.0.0.1:${controller.xdsPort}`, '-node', 'tenants/a', ...xdsCheckTlsArgs(a)],
        { encoding: 'utf8' },
      ),
    ) as { errors: string[]; counts: Record<string, number> };
    expect(report.errors).toEqual([]);
    expect(report.counts.Listener).toBe(1);
  });

  it("security: a Secret holding another Gateway's certificate is not adopted: the new Gateway's proxies get one naming it", async () => {
    const a = await credsOfA();
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    // Written by someone who may write Secrets in the proxies' namespace, before Gateway c exists.
    await cluster.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: proxySecretOf('tenants', 'c'),
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(a.cert), 'tls.key': b64(a.key), 'ca.crt': b64(a.ca) },
    } as Obj);
    await cluster.apply(gateway('c', 8004));
    const own = 'URI:spiffe://turnpike.local/ns/tenants/gateway/c';
    const c = await proxyCredentials(
      cluster,
      'tenants',
      'c',
      (x) => new X509Certificate(x.cert).subjectAltName === own,
    );
    expect(new X509Certificate(c.cert).subjectAltName).toBe(own);
    expect(controller.out).toContain("not adopting the xDS client certificate in the Secret: it is not this Gateway's");
  }, 90_000);

  it("security: a Secret of another type under a proxy Secret's name is replaced, so the Gateway's proxies get their credentials", async () => {
    await cluster.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: proxySecretOf('tenants', 'd'),
      type: 'Opaque',
      data: { note: Buffer.from('taken').toString('base64') },
    } as Obj);
    await cluster.apply(gateway('d', 8005));
    const d = await proxyCredentials(cluster, 'tenants', 'd');
    expect(new X509Certificate(d.cert).subjectAltName).toBe('URI:spiffe://turnpike.local/ns/tenants/gateway/d');
    expect(controller.out).toContain('replacing an object whose immutable fields differ from ours');
  }, 90_000);

  it('security: the plugin server refuses a client without a certificate and serves one with a proxy certificate', async () => {
    const a = await credsOfA();
    const get = (withCert: boolean) =>
      new Promise<number | string>((resolve) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: controller.pluginPort,
            path: '/plugins/none.lua',
            servername: XDS_SERVER_NAME,
            ca: a.ca,
            ...(withCert ? { cert: a.cert, key: a.key } : {}),
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', (e) => resolve(`error: ${e.message}`));
        req.end();
      });
    expect(controller.pluginPort).toBeGreaterThan(0);
    expect(String(await get(false))).toMatch(/^error/);
    // The TLS handshake succeeds; the unknown path is simply not there.
    expect(await get(true)).toBe(404);
  });

  it('security: a CA rotation is phased: a client holding only the old bundle connects until the switch, one holding only the new bundle after it; an existing stream stays served', async () => {
    const caSecret = async () =>
      (await cluster.get({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'turnpike-xds-ca', namespace: 'turnpike-system' },
      })) as Obj | undefined;
    const field = (s: Obj | undefined, key: string) => Buffer.from(s?.data?.[key] ?? '', 'base64').toString();
    const before = field(await caSecret(), 'tls.crt');
    const fresh = await credsOfA();
    const r = await openListenerStream(controller.xdsPort, tlsOf(fresh), 'tenants/a');
    if (!r.ok) throw new Error(`refused: ${r.details}`);
    try {
      r.stream.write({
        node: { id: 'security-test', cluster: 'tenants/a' },
        type_url: TYPE.listener,
        version_info: r.first.version_info,
        response_nonce: r.first.nonce,
      });
      // Phase 1, two thirds into the CA's life: the new CA joins the bundle; the old one still signs.
      const published = await waitFor(
        'new CA published',
        async () => {
          const s = await caSecret();
          return field(s, 'next.crt') ? s : undefined;
        },
        60_000,
        200,
      );
      const next = field(published, 'next.crt');
      expect(field(published, 'ca.crt')).toBe(before + next);
      expect(field(published, 'tls.crt')).toBe(before);
      // Until the switch, a proxy that has not yet seen the new bundle connects, every time.
      let attempts = 0;
      for (;;) {
        if (field(await caSecret(), 'tls.crt') !== before) break;
        const attempt = await openListenerStream(controller.xdsPort, tlsOf(await credsOfA(), before), 'tenants/a');
        if (!attempt.ok) {
          // Refused only once the switch is written (it may land between the two reads).
          if (field(await caSecret(), 'tls.crt') === before)
            throw new Error(`refused before the switch: ${attempt.details}`);
          break;
        }
        attempt.stream.end();
        attempts++;
      }
      expect(attempts).toBeGreaterThan(0);
      // Phase 2: the new CA signs; a client trusting only it connects.
      const switched = await waitFor('CA switched', async () => {
        const s = await caSecret();
        return field(s, 'tls.crt') === next ? s : undefined;
      });
      expect(field(switched, 'ca.crt')).toBe(before + next);
      expect(field(switched, 'next.crt')).toBe('');
      await waitFor('served with the new CA', async () => {
        const attempt = await openListenerStream(controller.xdsPort, tlsOf(await credsOfA(), next), 'tenants/a');
        if (attempt.ok) attempt.stream.end();
        return attempt.ok || undefined;
      });
      // The stream opened before the rotation is still served: a new listener reaches it.
      await cluster.apply({
        ...gateway('a', 8001),
        spec: {
          ...gateway('a', 8001).spec,
          listeners: [...gateway('a', 8001).spec.listeners, { name: 'more', port: 8003, protocol: 'HTTP' }],
        },
      });
      const pushed = await r.next(15_000);
      expect(resourceText(pushed)).toContain('tcp-8003');
      // The proxy's Secret is reissued by the new CA, and that certificate connects.
      const reissued = await proxyCredentials(cluster, 'tenants', 'a', (c) =>
        new X509Certificate(c.cert).checkIssued(new X509Certificate(next)),
      );
      const again = await openListenerStream(controller.xdsPort, tlsOf(reissued, next), 'tenants/a');
      expect(again.ok).toBe(true);
      if (again.ok) again.stream.end();
    } finally {
      r.stream.end();
    }
  }, 120_000);

  it('security: the controller and proxy pods pass restricted Pod Security admission (a privileged pod does not); the NetworkPolicy is accepted', async () => {
    const podOf = (name: string, namespace: string, template: Obj['spec']): Obj => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace },
      spec: template.spec,
    });
    const create = async (o: Obj) =>
      await cluster.admin.request<Obj>('POST', `/api/v1/namespaces/${o.metadata.namespace}/pods`, o);
    await cluster.apply({
      ...ns('tenants'),
      metadata: { name: 'tenants', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
    });
    const proxy = await waitFor(
      'proxy Deployment',
      async () =>
        (await cluster.get({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: proxyObjectsOf('tenants', 'a'),
        })) as Obj | undefined,
    );
    const proxyPod = await create(podOf('proxy-psa-check', 'tenants', proxy.spec.template));
    expect([proxyPod.status, proxyPod.text.slice(0, 300)]).toEqual([201, expect.any(String)]);
    const deployed = loadYaml(join(ROOT, 'deploy/controller.yaml')).find((o) => o.kind === 'Deployment') as Obj;
    const controllerPod = await create(podOf('controller-psa-check', 'turnpike-system', deployed.spec.template));
    expect([controllerPod.status, controllerPod.text.slice(0, 300)]).toEqual([201, expect.any(String)]);
    const privileged = await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'privileged', namespace: 'tenants' },
      spec: { containers: [{ name: 'x', image: 'x', securityContext: { privileged: true } }] },
    });
    expect(privileged.status).toBe(403);
    expect((privileged.body as { message?: string }).message).toContain('violates PodSecurity "restricted');
    for (const o of loadYaml(join(ROOT, 'deploy/networkpolicy.yaml'))) await cluster.apply(o);
  });

  describe('signed plugins', () => {
    let reg: TestRegistry;
    beforeAll(async () => {
      reg = await TestRegistry.start();
    }, 60_000);
    afterAll(async () => {
      await reg?.stop();
    });

    it('security: a plugin signed with another key is SignatureInvalid; a correctly signed one is Fetched', async () => {
      const signer = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const stranger = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const good = await reg.pushImage('team/signed', 'v1', { 'plugin.lua': 'function envoy_on_request(h) end\n' });
      const bad = await reg.pushImage('team/forged', 'v1', {
        'plugin.lua': 'function envoy_on_request(h) h:respond({[":status"]="200"}, "pwned") end\n',
      });
      await reg.pushCosignSignature('team/signed', good, signer.privateKey);
      await reg.pushCosignSignature('team/forged', bad, stranger.privateKey);
      await cluster.apply({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'signing-key', namespace: 'tenants' },
        type: 'Opaque',
        data: {
          'cosign.pub': Buffer.from(signer.publicKey.export({ type: 'spki', format: 'pem' }).toString()).toString(
            'base64',
          ),
        },
      } as KubeObject);
      const pi = (name: string, repo: string): Obj => ({
        apiVersion: 'turnpike.dev/v1alpha1',
        kind: 'PluginInstallation',
        metadata: { name, namespace: 'tenants' },
        spec: { image: `${reg.host}/${repo}:v1`, type: 'lua', verify: { publicKeyRef: { name: 'signing-key' } } },
      });
      await cluster.apply(pi('signed', 'team/signed'));
      await cluster.apply(pi('forged', 'team/forged'));
      // Only a plugin something uses is fetched: a ProxyConfig installing both is such a use.
      await cluster.apply({
        apiVersion: 'turnpike.dev/v1alpha1',
        kind: 'ProxyConfig',
        metadata: { name: 'signed-plugins', namespace: 'tenants' },
        spec: { plugins: [{ name: 'signed' }, { name: 'forged' }] },
      } as KubeObject);
      const fetched = (name: string, reason: string) =>
        waitFor(
          `${name} ${reason}`,
          async () => {
            const c = cond(((await cluster.get(pi(name, ''))) as Obj | undefined)?.status?.conditions, 'Fetched');
            return c?.reason === reason ? c : undefined;
          },
          30_000,
        );
      expect((await fetched('signed', 'Fetched')).status).toBe('True');
      const forged = await fetched('forged', 'SignatureInvalid');
      expect(forged.status).toBe('False');
      expect(forged.message).toContain('does not verify with the public key');
    }, 90_000);
  });
});
