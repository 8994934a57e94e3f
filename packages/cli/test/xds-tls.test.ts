// `run --dir` with --xds-tls-cert/--xds-tls-key/--xds-client-ca: the process serves xDS over mTLS
// from files, one Gateway per client certificate; and `bootstrap --xds-tls-dir` writes a
// bootstrap whose SDS files name the certificate directory.
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createAuthority, gatewayIdentity, issueCertificate, validateMessage, type Authority } from '@turnpike/xds';
import { openListenerStream } from '../../xds/test/ads-client.js';
import { MANIFEST, start, tmp, turnpike, waitFor, write } from './cli-helpers.js';

const DAY = 86_400_000;
const SERVER = 'xds.test';

async function firstAs(
  port: number,
  creds: { cert: string; key: string },
  ca: string,
  node: string,
): Promise<{ ok: boolean; details?: string }> {
  const r = await openListenerStream(port, { ca, ...creds, serverName: SERVER }, node, 5000);
  if (!r.ok) return { ok: false, details: r.details };
  r.stream.end();
  return { ok: true };
}

describe('run --dir serving xDS over mTLS from files', () => {
  let ca: Authority;
  let dir: string;
  let p: ReturnType<typeof start>;
  let port = 0;
  let pluginPort = 0;
  beforeAll(async () => {
    ca = await createAuthority('file CA', DAY);
    const serving = await issueCertificate(ca, {
      commonName: SERVER,
      dnsNames: [SERVER],
      usage: 'server',
      validityMs: DAY,
    });
    const certs = tmp();
    dir = tmp();
    write(dir, 'all.yaml', MANIFEST);
    p = start(
      'run',
      '--dir',
      dir,
      '--xds-address',
      '127.0.0.1:0',
      '--plugin-address',
      '127.0.0.1:0',
      '--quiet-ms',
      '20',
      '--max-delay-ms',
      '100',
      '--xds-tls-cert',
      write(certs, 'tls.crt', serving.certPem),
      '--xds-tls-key',
      write(certs, 'tls.key', serving.keyPem),
      '--xds-client-ca',
      write(certs, 'ca.crt', ca.certPem),
    );
    await waitFor(() => /serving xDS on 127\.0\.0\.1:(\d+) \(mTLS/.test(p.errors()), 15_000);
    port = Number(/serving xDS on 127\.0\.0\.1:(\d+)/.exec(p.errors())![1]);
    pluginPort = Number(/serving plugin content on 127\.0\.0\.1:(\d+)/.exec(p.errors())![1]);
  }, 30_000);
  afterAll(async () => {
    await p?.stop();
  });

  it('serves the Gateway the client certificate names, and refuses another', async () => {
    const mine = await issueCertificate(ca, {
      commonName: 'gw',
      uris: [gatewayIdentity('turnpike.local', 'infra', 'gw')],
      usage: 'client',
      validityMs: DAY,
    });
    expect(await firstAs(port, { cert: mine.certPem, key: mine.keyPem }, ca.certPem, 'infra/gw')).toEqual({ ok: true });
    const other = await issueCertificate(ca, {
      commonName: 'x',
      uris: [gatewayIdentity('turnpike.local', 'infra', 'other')],
      usage: 'client',
      validityMs: DAY,
    });
    const refused = await firstAs(port, { cert: other.certPem, key: other.keyPem }, ca.certPem, 'infra/gw');
    expect(refused.ok).toBe(false);
    expect(refused.details).toContain("Gateway infra/other's; node.cluster infra/gw is not served to it");
  });

  it('security: plugin content is served over TLS too, only to clients with a certificate from the client CA', async () => {
    const proxy = await issueCertificate(ca, {
      commonName: 'gw',
      uris: [gatewayIdentity('turnpike.local', 'infra', 'gw')],
      usage: 'client',
      validityMs: DAY,
    });
    // Plain HTTP is not answered; TLS without a client certificate fails the handshake.
    expect(await fetchContent(pluginPort, undefined)).toMatch(/^error /);
    expect(await fetchContent(pluginPort, { ca: ca.certPem })).toMatch(/^error /);
    // A proxy's certificate gets an answer: 404, as for content this Gateway does not use.
    expect(await fetchContent(pluginPort, { ca: ca.certPem, cert: proxy.certPem, key: proxy.keyPem })).toBe(
      'status 404',
    );
  });
});

/** The status of a GET to the plugin server, or the error that kept it from being answered. */
function fetchContent(port: number, tls: { ca: string; cert?: string; key?: string } | undefined): Promise<string> {
  return new Promise((resolve) => {
    const path = `/plugins/${'A'.repeat(43)}.wasm`;
    const done = (res: IncomingMessage) => {
      res.resume();
      resolve(`status ${res.statusCode}`);
    };
    const req = tls
      ? httpsRequest({ host: '127.0.0.1', port, path, servername: SERVER, ...tls }, done)
      : httpRequest({ host: '127.0.0.1', port, path }, done);
    req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    req.end();
  });
}

describe('bootstrap --xds-tls-dir', () => {
  it('writes envoy.json and the SDS files it names, all pointing at the certificate directory', () => {
    const out = tmp();
    const r = turnpike(
      'bootstrap',
      '--gateway',
      'infra/gw',
      '--xds-address',
      'turnpike.turnpike-system.svc:18000',
      '--xds-tls-dir',
      '/etc/turnpike/xds',
      '--out-dir',
      out,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const b = JSON.parse(readFileSync(join(out, 'envoy.json'), 'utf8'));
    expect(validateMessage('envoy.config.bootstrap.v3.Bootstrap', b)).toEqual([]);
    const socket = JSON.stringify(b.static_resources.clusters[0].transport_socket);
    expect(socket).toContain(join(out, 'sds-xds-client.json'));
    expect(socket).toContain('"exact":"turnpike.turnpike-system.svc"');
    expect(readFileSync(join(out, 'sds-xds-client.json'), 'utf8')).toContain('/etc/turnpike/xds/tls.key');
    expect(readFileSync(join(out, 'sds-xds-ca.json'), 'utf8')).toContain('/etc/turnpike/xds/ca.crt');
  });

  it('refuses --xds-tls-dir without --out-dir, and names the flag', () => {
    const r = turnpike('bootstrap', '--gateway', 'infra/gw', '--xds-tls-dir', '/etc/turnpike/xds');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--xds-tls-dir needs --out-dir');
  });
});
