// The build order of Gateways' xDS: watched Gateways first, the rest in idle time, always from the newest
// output, and every Gateway built in the end.
import { describe, expect, it } from '@jest/globals';
import type { EngineOutput } from '@turnpike/engine';
import { GatewayBuildQueue, type GatewayBuild } from '../src/gateway-build-queue.js';

const gateways = (n: number) => Array.from({ length: n }, (_, i) => `ns/gw-${i}`);
const output = (changed: string[], since: string, endpoints: string[] = []) =>
  ({ changes: { gateways: changed, endpoints }, since }) as unknown as EngineOutput;
const turn = () => new Promise((r) => setImmediate(r));

function queue(watched: Set<string>) {
  const builds: GatewayBuild[] = [];
  const q = new GatewayBuildQueue({ watched: (g) => watched.has(g), build: (b) => builds.push(b), perTurn: 4 });
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 1000 && !done(); i++) await turn();
    expect(done()).toBe(true);
  };
  return { q, builds, until };
}

describe('GatewayBuildQueue', () => {
  it('builds the watched Gateways of a large change at once, the others after, each once', async () => {
    const { q, builds, until } = queue(new Set(['ns/gw-7', 'ns/gw-30']));
    const out = output(gateways(40), '2026-01-01T00:00:01.000Z', ['c1']);
    q.accept(out);
    expect(builds).toHaveLength(1);
    expect(builds[0]).toEqual({ out, gateways: ['ns/gw-7', 'ns/gw-30'], endpoints: ['c1'], since: out.since });
    await until(() => q.pending === 0);
    const later = builds.slice(1);
    expect(later.every((b) => b.out === out && b.endpoints.length === 0 && b.gateways.length <= 4)).toBe(true);
    const built = builds.flatMap((b) => b.gateways);
    expect(built.sort()).toEqual(gateways(40).sort());
  });

  it('builds a small change whole, watched or not', () => {
    const { q, builds } = queue(new Set());
    q.accept(output(gateways(3), 's'));
    expect(builds.map((b) => b.gateways)).toEqual([gateways(3)]);
    expect(q.pending).toBe(0);
  });

  it('puts a Gateway a stream starts watching ahead of the others', async () => {
    const { q, builds } = queue(new Set());
    q.accept(output(gateways(40), 's'));
    q.watching('ns/gw-39');
    await turn();
    expect(builds[1]!.gateways[0]).toBe('ns/gw-39');
    q.watching('ns/not-waiting');
    expect(q.pending).toBe(40 - builds.slice(1).flatMap((b) => b.gateways).length);
  });

  it('builds a Gateway still waiting from the newest output, carrying its earliest change', async () => {
    const { q, builds, until } = queue(new Set());
    const first = output(gateways(40), '2026-01-01T00:00:01.000Z');
    q.accept(first);
    const second = output(['ns/gw-0'], '2026-01-01T00:00:02.000Z');
    q.accept(second); // gw-0 changed again: with the 39 still waiting, it waits too
    expect(builds.map((b) => b.gateways)).toEqual([[], []]);
    await until(() => q.pending === 0);
    const later = builds.slice(2);
    expect(later.every((b) => b.out === second)).toBe(true);
    expect(later.flatMap((b) => b.gateways).sort()).toEqual(gateways(40).sort());
    // Each carries the earliest change among its Gateways: the first output's.
    expect(later.every((b) => b.since === first.since)).toBe(true);
  });

  it('a watched Gateway of a later output is built with it, out of the queue', async () => {
    const watched = new Set<string>();
    const { q, builds } = queue(watched);
    q.accept(output(gateways(40), 'a'));
    watched.add('ns/gw-20');
    q.accept(output([], 'b'));
    expect(builds[1]!.gateways).toEqual(['ns/gw-20']);
    expect(q.pending).toBe(39);
    q.close();
    await turn();
    expect(builds).toHaveLength(2);
  });
});
