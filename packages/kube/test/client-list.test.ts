// KubeClient.list: a small response is parsed at its end, a large one as it arrives.
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { KubeClient } from '../src/index.js';
import { kubeClientFor } from './kube-client-for.js';

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** A server whose list writes the first half of its items and waits for `finish` before the rest. */
async function halfThenWait(items: unknown[]): Promise<{ client: KubeClient; finish: () => void }> {
  let res: ServerResponse | undefined;
  let rest = '';
  const server = createServer((_req, r) => {
    res = r;
    const body = JSON.stringify({ metadata: { resourceVersion: '9' }, items });
    const cut = body.indexOf('"half"');
    r.writeHead(200, { 'Content-Type': 'application/json' });
    r.write(body.slice(0, cut));
    rest = body.slice(cut);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { client: kubeClientFor(port), finish: () => res!.end(rest) };
}

const items = [...Array.from({ length: 50 }, (_, i) => ({ name: `a${i}`, pad: 'x'.repeat(100) })), { name: 'half' }];

async function seenBeforeEnd(streamAfterBytes: number): Promise<{ before: number; after: number; rv: unknown }> {
  const { client, finish } = await halfThenWait(items);
  const seen: unknown[] = [];
  const listing = client.list<{ metadata: { resourceVersion: string } }>('/x', (i) => seen.push(i), streamAfterBytes);
  // Long enough for the first half to be in and, when streaming, parsed; then the rest.
  const deadline = Date.now() + 5000;
  while (streamAfterBytes < 1000 && seen.length < 49 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  if (streamAfterBytes >= 1000) await new Promise((r) => setTimeout(r, 200));
  const before = seen.length;
  finish();
  const envelope = await listing;
  client.close();
  return { before, after: seen.length, rv: envelope.metadata.resourceVersion };
}

describe('KubeClient.list', () => {
  it('hands over the items of a large response before it ends', async () => {
    const r = await seenBeforeEnd(512);
    expect(r.before).toBeGreaterThanOrEqual(49);
    expect(r).toMatchObject({ after: 51, rv: '9' });
  });
  it('holds a small response and parses it at its end', async () => {
    const r = await seenBeforeEnd(1024 * 1024);
    expect(r).toEqual({ before: 0, after: 51, rv: '9' });
  });
});
