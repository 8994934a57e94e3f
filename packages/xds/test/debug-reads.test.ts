// A debug read (`turnpike proxy-config`) with a real gRPC client: the server sends it every Secret
// without its secret material (a proxy of the Gateway still gets the key), and lists it among the
// open streams (`/debug/proxies`) as a debug read, with its peer and node.
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  AdsServer,
  DEBUG_READ_METADATA,
  decodeMessage,
  encodeResource,
  REDACTED,
  SnapshotCache,
  TYPE,
  typeSnapshot,
  type NodeSnapshot,
  type TypeUrl,
} from '../src/index.js';
import { adsClient, reader, type Stream } from './ads-client.js';

const CERT = '-----BEGIN CERTIFICATE-----\nMIIBcertificate\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n';
const TICKET_KEY = 'k'.repeat(80);
const SECRET_NAME = 'a/listener-cert';

let server: AdsServer | undefined;
const streams: Stream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.cancel();
  await server?.close();
  server = undefined;
});

function snapshot(): NodeSnapshot {
  const secrets = [
    encodeResource(TYPE.secret, SECRET_NAME, {
      name: SECRET_NAME,
      tls_certificate: {
        certificate_chain: { inline_string: CERT },
        private_key: { inline_string: KEY },
        password: { inline_string: 'hunter2' },
      },
    }),
    encodeResource(TYPE.secret, 'a/tickets', {
      name: 'a/tickets',
      session_ticket_keys: { keys: [{ inline_string: TICKET_KEY }] },
    }),
    encodeResource(TYPE.secret, 'a/generic', {
      name: 'a/generic',
      generic_secret: { secret: { inline_string: 'tok' } },
    }),
  ];
  return new Map<TypeUrl, ReturnType<typeof typeSnapshot>>([[TYPE.secret, typeSnapshot(secrets)]]);
}

async function serve(): Promise<number> {
  const cache = new SnapshotCache();
  cache.setAll(new Map([['a/gw', snapshot()]]));
  server = new AdsServer({ cache });
  return server.listen('127.0.0.1:0');
}

const debugNode = (id: string) => ({
  id,
  cluster: 'a/gw',
  metadata: { fields: { [DEBUG_READ_METADATA]: { boolValue: true } } },
});

/** The Secrets of a response (SotW or delta), decoded, by name. */
function secretsOf(response: Record<string, any>): Map<string, Record<string, any>> {
  const out = new Map<string, Record<string, any>>();
  for (const r of response.resources ?? []) {
    const any = r.resource ?? r;
    const s = decodeMessage('envoy.extensions.transport_sockets.tls.v3.Secret', any.value) as Record<string, any>;
    out.set(s.name as string, s);
  }
  return out;
}

const NAMES = [SECRET_NAME, 'a/tickets', 'a/generic'];

async function sotw(port: number, node: object): Promise<Map<string, Record<string, any>>> {
  const stream: Stream = adsClient(port).StreamAggregatedResources();
  streams.push(stream);
  const next = reader(stream);
  stream.write({ node, type_url: TYPE.secret, resource_names: NAMES });
  return secretsOf(await next());
}

async function delta(port: number, node: object): Promise<Map<string, Record<string, any>>> {
  const stream: Stream = adsClient(port).DeltaAggregatedResources();
  streams.push(stream);
  const next = reader(stream);
  stream.write({ node, type_url: TYPE.secret, resource_names_subscribe: NAMES });
  return secretsOf(await next());
}

const inline = (d: { inline_string?: string } | undefined) => d?.inline_string;

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
};

describe('debug reads', () => {
  for (const [protocol, ask] of [
    ['SotW', sotw],
    ['delta', delta],
  ] as const)
    it(`security: a debug read (${protocol}) is sent Secrets without their keys; a proxy still gets them`, async () => {
      const port = await serve();
      const read = await ask(port, debugNode('proxy-config'));
      const cert = read.get(SECRET_NAME)!.tls_certificate;
      expect(inline(cert.certificate_chain)).toBe(CERT);
      expect(inline(cert.private_key)).toBe(REDACTED);
      expect(inline(cert.password)).toBe(REDACTED);
      expect(read.get('a/tickets')!.session_ticket_keys.keys.map(inline)).toEqual([REDACTED]);
      expect(inline(read.get('a/generic')!.generic_secret.secret)).toBe(REDACTED);
      const everything = JSON.stringify([...read.values()]);
      for (const secret of [KEY, 'hunter2', TICKET_KEY, 'tok']) expect(everything).not.toContain(secret);

      const proxy = await ask(port, { id: 'envoy', cluster: 'a/gw' });
      const served = proxy.get(SECRET_NAME)!.tls_certificate;
      expect([served.certificate_chain, served.private_key, served.password].map(inline)).toEqual([
        CERT,
        KEY,
        'hunter2',
      ]);
      expect(proxy.get('a/tickets')!.session_ticket_keys.keys.map(inline)).toEqual([TICKET_KEY]);
      expect(inline(proxy.get('a/generic')!.generic_secret.secret)).toBe('tok');
    });

  it('security: the open streams (/debug/proxies) list a debug read as such, with its peer and node', async () => {
    const port = await serve();
    await sotw(port, debugNode('proxy-config'));
    await sotw(port, { id: 'envoy', cluster: 'a/gw' });
    const listed = server!.proxies();
    expect(listed.map((p) => [p.node, p.id, !!p.debug])).toEqual([
      ['a/gw', 'envoy', false],
      ['a/gw', 'proxy-config', true],
    ]);
    const debug = listed.find((p) => p.debug)!;
    expect(debug.peer).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(debug.connectedAt).not.toBe('');
    // Counted nowhere: it is no proxy of the Gateway, and never behind.
    expect(server!.connectedProxies).toBe(1);
    expect(debug.pending).toEqual({});
    // Gone from the list once it closes.
    streams[0]!.cancel();
    await until(() => server!.proxies().length === 1);
    expect(server!.proxies()[0]!.id).toBe('envoy');
  });
});
