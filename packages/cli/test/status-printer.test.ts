// run --dir's stdout: an output's status lines come after the turn that pushed it to the proxies, in
// one write per output, and outputs in the order they came.
import { describe, expect, it } from '@jest/globals';
import type { EngineOutput } from '@turnpike/engine';
import { statusPrinter } from '../src/sinks/status-printer.js';

function output(seq: number, statuses: [string, object | undefined][]): EngineOutput {
  return {
    seq,
    changes: { statuses: statuses.map(([k]) => k), gateways: [], endpoints: [], infra: [], pluginFetches: [] },
    result: {
      statuses: new Map(statuses.filter(([, s]) => s)),
      diagnostics: [],
      xdsIR: { gateways: new Map(), endpoints: new Map() },
    },
    snapshot: new Map(),
    hashed: new Promise<string>(() => {}),
  } as unknown as EngineOutput;
}

const accepted = (reason: string) => ({ conditions: [{ type: 'Accepted', status: 'True', reason, message: 'm' }] });

describe('statusPrinter', () => {
  it('writes after the current turn, one write per output, in order', async () => {
    const writes: string[] = [];
    const printer = statusPrinter(
      false,
      (s) => writes.push(s),
      () => {},
    );
    printer.accept(
      output(1, [
        ['HTTPRoute/apps/a', accepted('First')],
        ['HTTPRoute/apps/b', accepted('First')],
      ]),
    );
    printer.accept(output(2, [['HTTPRoute/apps/a', undefined]]));
    expect(writes).toEqual([]);
    await new Promise((next) => setImmediate(next));
    await new Promise((next) => setImmediate(next));
    expect(writes).toHaveLength(2);
    expect(writes[0]!.trim().split('\n')).toEqual([
      expect.stringMatching(/ HTTPRoute\/apps\/a .*First/),
      expect.stringMatching(/ HTTPRoute\/apps\/b .*First/),
    ]);
    expect(writes[1]).toMatch(/ HTTPRoute\/apps\/a \(deleted\)\n$/);
  });
});
