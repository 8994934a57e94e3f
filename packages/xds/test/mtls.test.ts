// xDS over mTLS, in process: a client needs a certificate from the control-plane CA, and a
// certificate naming one Gateway reads that Gateway only. A CA rotation applies to new
// connections; an open stream keeps being served.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { experimental } from '@grpc/grpc-js';
import type { GatewayIR } from '@turnpike/api';
import {
  AdsServer,
  authorizeStream,
  createAuthority,
  encodeSnapshot,
  envoyResourcesFor,
  gatewayIdentity,
  gatewayOfIdentity,
  issueCertificate,
  MemoryCertificateProvider,
  signedByBundle,
  SnapshotCache,
  TYPE,
  type Authority,
  type StreamRefusal,
} from '../src/index.js';
import { openListenerStream, resourceText } from './ads-client.js';

const TD = 'turnpike.test';
const SERVER = 'turnpike.turnpike-system.svc';
const DAY = 86_400_000;

/** A Gateway whose one listener's port tells it apart (Envoy listeners are named after the port). */
function gatewayIR(namespace: string, name: string, ports: number[]): GatewayIR {
  return {
    name,
    namespace,
    secrets: [],
    clusters: [],
    ports: ports.map((port) => ({
      name: `tcp-${port}`,
      port,
      listenPort: port < 1024 ? port + 10_000 : port,
      transport: 'tcp' as const,
      listeners: [{ name: `Gateway/${namespace}/${name}/p${port}`, protocol: 'HTTP' as const, virtualHosts: [] }],
    })),
  };
}

const serve = (cache: SnapshotCache, a: number[]) =>
  cache.setAll(
    new Map([
      ['infra/a', encodeSnapshot(envoyResourcesFor(gatewayIR('infra', 'a', a), () => undefined))],
      ['infra/b', encodeSnapshot(envoyResourcesFor(gatewayIR('infra', 'b', [90]), () => undefined))],
    ]),
  );

const client = async (ca: Authority, gateway: string) => {
  const [ns, name] = gateway.split('/') as [string, string];
  return issueCertificate(ca, {
    commonName: gateway,
    uris: [gatewayIdentity(TD, ns, name)],
    usage: 'client',
    validityMs: DAY,
  });
};

describe('xDS over mTLS', () => {
  let ca: Authority;
  const provider = new MemoryCertificateProvider();
  const cache = new SnapshotCache();
  const refusals: StreamRefusal[] = [];
  let ads: AdsServer;
  let port: number;

  beforeAll(async () => {
    ca = await createAuthority('test CA', 30 * DAY);
    const serving = await issueCertificate(ca, {
      commonName: SERVER,
      dnsNames: [SERVER],
      usage: 'server',
      validityMs: DAY,
    });
    provider.setCA(ca.certPem);
    provider.setIdentity(serving.certPem, serving.keyPem);
    serve(cache, [80]);
    ads = new AdsServer({
      cache,
      tls: {
        credentials: experimental.createCertificateProviderServerCredentials(provider, provider, true),
        trustDomain: TD,
      },
      onRefuse: (r) => refusals.push(r),
    });
    port = await ads.listen('127.0.0.1:0');
  });
  afterAll(() => ads.close());

  it('a client without a certificate is refused at the handshake', async () => {
    const r = await openListenerStream(port, { ca: ca.certPem, serverName: SERVER }, 'infra/a');
    expect(r.ok).toBe(false);
  });

  it('a certificate naming Gateway A asking as Gateway B gets PERMISSION_DENIED, counted with its reason', async () => {
    const a = await client(ca, 'infra/a');
    const r = await openListenerStream(
      port,
      { ca: ca.certPem, cert: a.certPem, key: a.keyPem, serverName: SERVER },
      'infra/b',
    );
    expect(r).toMatchObject({ ok: false, code: 7 });
    expect((r as { details: string }).details).toContain(
      "the client certificate is Gateway infra/a's; node.cluster infra/b is not served to it",
    );
    expect(refusals.at(-1)).toMatchObject({ node: 'infra/b', reason: 'wrong-gateway' });
  });

  it('a certificate from another CA is refused', async () => {
    const other = await createAuthority('other CA', DAY);
    const a = await client(other, 'infra/a');
    const r = await openListenerStream(
      port,
      { ca: ca.certPem, cert: a.certPem, key: a.keyPem, serverName: SERVER },
      'infra/a',
    );
    expect(r.ok).toBe(false);
  });

  it('Gateway A with its own certificate gets exactly its config; after a CA rotation its open stream is still served and new certificates validate', async () => {
    const a = await client(ca, 'infra/a');
    const r = await openListenerStream(
      port,
      { ca: ca.certPem, cert: a.certPem, key: a.keyPem, serverName: SERVER },
      'infra/a',
    );
    if (!r.ok) throw new Error(`refused: ${r.details}`);
    const first = r.first;
    expect(resourceText(first)).toContain('tcp-80');
    expect(resourceText(first)).not.toContain('tcp-90');
    // Rotate: a new CA signs, the bundle trusts old and new.
    const ca2 = await createAuthority('test CA 2', 30 * DAY);
    const serving2 = await issueCertificate(ca2, {
      commonName: SERVER,
      dnsNames: [SERVER],
      usage: 'server',
      validityMs: DAY,
    });
    provider.setCA(ca2.certPem + ca.certPem);
    provider.setIdentity(serving2.certPem, serving2.keyPem);
    // The open stream gets the next version.
    r.stream.write({
      node: { id: 'test', cluster: 'infra/a' },
      type_url: TYPE.listener,
      version_info: first.version_info,
      response_nonce: first.nonce,
    });
    serve(cache, [80, 81]);
    const pushed = await r.next(5000);
    expect(resourceText(pushed)).toContain('tcp-81');
    r.stream.end();
    // A certificate of the new CA connects (checking the new serving certificate against the new CA).
    const a2 = await client(ca2, 'infra/a');
    const fresh = await openListenerStream(
      port,
      { ca: ca2.certPem, cert: a2.certPem, key: a2.keyPem, serverName: SERVER },
      'infra/a',
    );
    expect(fresh.ok).toBe(true);
    if (fresh.ok) fresh.stream.end();
    // And one of the old CA still does during the overlap.
    const old = await openListenerStream(
      port,
      { ca: ca2.certPem, cert: a.certPem, key: a.keyPem, serverName: SERVER },
      'infra/a',
    );
    expect(old.ok).toBe(true);
    if (old.ok) old.stream.end();
  });
});

describe('identities', () => {
  it('a SPIFFE ID names one Gateway of the trust domain, nothing else', () => {
    expect(gatewayOfIdentity(gatewayIdentity(TD, 'shop', 'gw'), TD)).toBe('shop/gw');
    expect(gatewayOfIdentity(gatewayIdentity('other.domain', 'shop', 'gw'), TD)).toBeUndefined();
    expect(gatewayOfIdentity(`spiffe://${TD}/ns/shop/gateway/gw/extra`, TD)).toBeUndefined();
    expect(gatewayOfIdentity(`spiffe://${TD}/ns/Shop/gateway/gw`, TD)).toBeUndefined();
  });

  it('a certificate naming two Gateways is not an identity', async () => {
    const ca = await createAuthority('CA', DAY);
    const two = await issueCertificate(ca, {
      commonName: 'x',
      uris: [gatewayIdentity(TD, 'a', 'x'), gatewayIdentity(TD, 'b', 'y')],
      usage: 'client',
      validityMs: DAY,
    });
    const { X509Certificate } = await import('node:crypto');
    const peer = { raw: Buffer.from('x'), subjectaltname: new X509Certificate(two.certPem).subjectAltName } as never;
    expect(authorizeStream(peer, 'a/x', TD)).toMatchObject({ ok: false, reason: 'no-identity' });
    expect(signedByBundle(two.certPem, ca.certPem)).toBe(true);
    expect(signedByBundle(two.certPem, (await createAuthority('other', DAY)).certPem)).toBe(false);
  });

  it('security: a client certificate with another URI SAN beside its Gateway identity is refused', async () => {
    const ca = await createAuthority('CA', DAY);
    const { X509Certificate } = await import('node:crypto');
    const peerOf = async (uris: string[]) => {
      const c = await issueCertificate(ca, { commonName: 'x', uris, usage: 'client', validityMs: DAY });
      return { raw: Buffer.from('x'), subjectaltname: new X509Certificate(c.certPem).subjectAltName } as never;
    };
    const extra = await peerOf([gatewayIdentity(TD, 'a', 'x'), 'spiffe://other.domain/ns/a/sa/default']);
    const verdict = authorizeStream(extra, 'a/x', TD);
    expect(verdict).toMatchObject({ ok: false, reason: 'no-identity' });
    expect((verdict as { message: string }).message).toContain('it carries 2 URI SAN(s), 1 of them a Gateway');
    expect(authorizeStream(await peerOf([gatewayIdentity(TD, 'a', 'x')]), 'a/x', TD)).toEqual({ ok: true });
  });
});
