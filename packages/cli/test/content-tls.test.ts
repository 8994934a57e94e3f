// The plugin content server's TLS in a cluster: this replica's serving certificate and the CA bundle,
// from the certificate provider the xDS server uses, followed from the moment the server is made. It
// once read them once, before listening, and heard of changes only from a listener added after it had
// started: a certificate issued in between was never presented (every handshake then got alert 40,
// handshake_failure, until the next renewal), and a CA rotated in between was not trusted.
import { request } from 'node:https';
import { afterEach, describe, expect, it } from '@jest/globals';
import { PluginContentServer, PluginContentStore } from '@turnpike/plugins';
import {
  createAuthority,
  gatewayIdentity,
  gatewayOfCertificate,
  issueCertificate,
  MemoryCertificateProvider,
  type Authority,
} from '@turnpike/xds';
import { contentTlsFromAuthority } from '../src/xds-tls.js';

const DAY = 86_400_000;
const TD = 'turnpike.test';
const SERVER = 'turnpike.turnpike-system.svc';

const serving = (ca: Authority) =>
  issueCertificate(ca, { commonName: SERVER, dnsNames: [SERVER], usage: 'server', validityMs: DAY });
const proxy = (ca: Authority) =>
  issueCertificate(ca, {
    commonName: 'shop/a',
    uris: [gatewayIdentity(TD, 'shop', 'a')],
    usage: 'client',
    validityMs: DAY,
  });

/** A GET with a client certificate: the status, or the error that ended the request. */
const get = (port: number, path: string, trust: string, client: { certPem: string; keyPem: string }) =>
  new Promise<number | string>((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        servername: SERVER,
        ca: trust,
        cert: client.certPem,
        key: client.keyPem,
        agent: false,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', (e) => resolve(`error: ${e.message}`));
    req.end();
  });

let server: PluginContentServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('plugin content TLS from the control-plane CA', () => {
  it('security: a serving certificate issued after the server was set up, and a CA rotated after it listens, are the ones it uses; it never listens without a certificate', async () => {
    const ca = await createAuthority('CA 1', 30 * DAY);
    const provider = new MemoryCertificateProvider();
    // As the controller starts: the CA is read, the serving certificate is still being issued.
    provider.setCA(ca.certPem);
    const content = new PluginContentStore();
    const sha = content.put(Buffer.from('(module)'));
    server = new PluginContentServer(content, undefined, undefined, contentTlsFromAuthority(provider), (san) =>
      gatewayOfCertificate(san, TD),
    );
    await expect(server.listen('127.0.0.1', 0)).rejects.toThrow(
      'plugin content is served over TLS, and there is no serving certificate yet',
    );
    // Issued now, after the server was made: the server presents it.
    const first = await serving(ca);
    provider.setIdentity(first.certPem, first.keyPem);
    const port = await server.listen('127.0.0.1', 0);
    const path = new URL(server.urlFor(sha, 'wasm')).pathname;
    server.setReaders(new Map([[sha, new Set(['shop/a'])]]));
    expect(await get(port, path, ca.certPem, await proxy(ca))).toBe(200);
    // A rotation: the new CA joins the bundle, then signs. A proxy holding only the new CA, with a
    // certificate it signed, is served.
    const next = await createAuthority('CA 2', 30 * DAY);
    provider.setCA(ca.certPem + next.certPem);
    const second = await serving(next);
    provider.setIdentity(second.certPem, second.keyPem);
    expect(await get(port, path, next.certPem, await proxy(next))).toBe(200);
    // And one of another Gateway's is not (the content is not its Gateway's).
    const other = await issueCertificate(next, {
      commonName: 'shop/b',
      uris: [gatewayIdentity(TD, 'shop', 'b')],
      usage: 'client',
      validityMs: DAY,
    });
    expect(await get(port, path, next.certPem, other)).toBe(404);
  });
});
