// `run --dir`'s stdout: one line per object whose status changed (text or JSON), and the
// translation's diagnostics on stderr. Only the entries a translation changed are looked at.
import type { EngineOutput } from '@turnpike/engine';
import { statusSummary } from '../status-lines.js';
import type { Sink } from '../controller.js';

export function statusPrinter(
  json: boolean,
  write: (s: string) => void = (s) => process.stdout.write(s),
  warn: (s: string) => void = (s) => process.stderr.write(s),
): Sink {
  let lastDiagnostics: EngineOutput['result']['diagnostics'] | undefined;
  const print = (out: EngineOutput, time: string) => {
    if (out.result.diagnostics !== lastDiagnostics) {
      for (const d of out.result.diagnostics) warn(`turnpike: ${d.level}: ${d.object}: ${d.message}\n`);
      lastDiagnostics = out.result.diagnostics;
    }
    const lines: string[] = [];
    for (const key of out.changes.statuses) {
      const status = out.result.statuses.get(key);
      // A status that went away: the object was deleted, or it is still there but not ours any more.
      const [kind = '', namespace = '', name = ''] = key.split('/');
      const gone = status ? '' : out.snapshot.get(kind)?.get(namespace)?.get(name) ? '(no longer ours)' : '(deleted)';
      if (json) lines.push(`${JSON.stringify({ time, seq: out.seq, object: key, status: status ?? null })}\n`);
      else
        lines.push(`${time.slice(11, 23)} ${key.replace(/\/\//, '/')} ` + `${status ? statusSummary(status) : gone}\n`);
    }
    // One write: a first translation changes every status (10k routes: 10k writes to stdout otherwise).
    if (lines.length) write(lines.join(''));
    if (json) return;
    // Its hash once the engine has worked it out (after the push): lines about outputs stay in order.
    const line = `turnpike: translated event ${out.seq}: ${out.result.xdsIR.gateways.size} gateway(s), output `;
    void out.hashed.then((hash) => warn(`${line}${hash.slice(0, 12)}\n`));
  };
  return {
    name: 'stdout',
    accept(out) {
      const time = new Date().toISOString();
      // Printed at the next turn, in the order of the outputs: the xDS sink's push (in this turn) has
      // its writes go out first (summing up 10k statuses took 0.13 s of a cold start's way to the proxies).
      setImmediate(() => print(out, time));
    },
  };
}
