// The plugin content server over mTLS: content goes only to the proxies of Gateways whose
// configuration uses it; another Gateway's proxy, with a certificate from the same CA, gets 404.
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createAuthority, gatewayIdentity, gatewayOfCertificate, issueCertificate } from '../../xds/src/index.js';
import { PluginContentServer, PluginContentStore } from '../src/index.js';

const DAY = 24 * 3_600_000;
const TD = 'turnpike.local';

describe('plugin content server', () => {
  let server: PluginContentServer;
  let port = 0;
  let url = '';
  let ca = '';
  const clients: Record<string, { cert: string; key: string }> = {};

  beforeAll(async () => {
    const authority = await createAuthority('CA', DAY);
    ca = authority.certPem;
    const serving = await issueCertificate(authority, {
      commonName: 'turnpike',
      dnsNames: ['turnpike'],
      usage: 'server',
      validityMs: DAY,
    });
    for (const gw of ['a', 'b']) {
      const c = await issueCertificate(authority, {
        commonName: gw,
        uris: [gatewayIdentity(TD, 'shop', gw)],
        usage: 'client',
        validityMs: DAY,
      });
      clients[gw] = { cert: c.certPem, key: c.keyPem };
    }
    const content = new PluginContentStore();
    const sha = content.put(Buffer.from('(module)'));
    server = new PluginContentServer(
      content,
      undefined,
      undefined,
      { cert: serving.certPem, key: serving.keyPem, ca },
      (san) => gatewayOfCertificate(san, TD),
    );
    port = await server.listen('127.0.0.1', 0);
    url = new URL(server.urlFor(sha, 'wasm')).pathname;
    server.setReaders(new Map([[sha, new Set(['shop/a'])]]));
  });
  afterAll(async () => {
    await server.close();
  });

  const get = (who: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: url, servername: 'turnpike', ca, ...clients[who] },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });

  it("security: the proxies of a Gateway that uses the content get it; another Gateway's get 404", async () => {
    expect(await get('a')).toBe(200);
    expect(await get('b')).toBe(404);
    // Once no Gateway uses it, nobody reads it.
    server.setReaders(new Map());
    expect(await get('a')).toBe(404);
  });
});
