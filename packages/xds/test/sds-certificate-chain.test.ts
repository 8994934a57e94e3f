// The SDS Secret a listener's certificate is served in: its certificate_chain holds the certificate blocks
// of tls.crt only, as the translator read and checked them. A tls.crt with the private key appended (a
// common "fullchain + key" bundle) must not hand that key to every proxy and every debug read a second time.
import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { digestKeyObject, type KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { envoyResourcesFor, validateResources } from '../src/index.js';
import { gateway, gatewayClass, tlsSecret } from '../../translator/test/builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../../translator/test/tls-fixtures.js';

const https = { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } };

/** The IR and Envoy resources of infra/gw serving `crt` (and `extra` objects: a DigestKey). */
function served(crt: string, extra: KubeObject[] = []) {
  const objects = [gatewayClass(), gateway('gw', [https]), tlsSecret('cert', 'infra', crt, EXAMPLE_COM_KEY), ...extra];
  const snapshot = snapshotFromObjects(objects);
  const ir = new Translator().translate(snapshot).xdsIR.gateways.get('infra/gw')!;
  const lookup = (kind: string, ns: string, name: string) =>
    snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
  const resources = envoyResourcesFor(ir, lookup);
  expect(validateResources(resources)).toEqual([]);
  expect(resources.secrets.map((s) => s.name)).toEqual(['infra/cert']);
  return { ir, resources };
}

const servedSecret = (crt: string) => served(crt).resources.secrets[0]!.tls_certificate!;

describe('SDS certificate_chain', () => {
  it('security: a tls.crt holding the certificate and its private key serves the certificate alone', () => {
    const served = servedSecret(`${EXAMPLE_COM_CERT}\n${EXAMPLE_COM_KEY}`);
    const chain = served.certificate_chain!.inline_string!;
    expect(chain).not.toContain('PRIVATE KEY');
    expect(chain.trim()).toBe(EXAMPLE_COM_CERT.trim());
    // The key still reaches the proxy where it belongs.
    expect(served.private_key!.inline_string).toBe(EXAMPLE_COM_KEY);
  });

  it('serves a tls.crt of certificates alone as it is', () => {
    expect(servedSecret(EXAMPLE_COM_CERT).certificate_chain!.inline_string).toBe(EXAMPLE_COM_CERT);
  });

  it('a restarted controller (a new DigestKey) changes the digest in the IR, and not one served resource', () => {
    // The key digests values for the event log; what the proxies are served must not churn with it.
    const bundle = `${EXAMPLE_COM_CERT}${EXAMPLE_COM_KEY}`;
    const before = served(bundle, [digestKeyObject(randomBytes(32))]);
    const after = served(bundle, [digestKeyObject(randomBytes(32))]);
    expect(after.ir.secrets[0]!.sha256).not.toBe(before.ir.secrets[0]!.sha256);
    expect(JSON.stringify(after.resources)).toBe(JSON.stringify(before.resources));
  });
});
