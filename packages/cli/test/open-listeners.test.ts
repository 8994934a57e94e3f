// What the controller serves beyond loopback says so at start, and the console's token stays out of logs:
// --debug-address and a plaintext --plugin-address beyond loopback warn; in a cluster the console's token
// is the operator's file, never logged, and its cookie is Secure when the console was reached over TLS.
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { parseEventLog } from '@turnpike/engine';
import pino from 'pino';
import { serveConsole } from '../src/commands/console.js';
import { serveDebug } from '../src/commands/run-kube.js';
import { ConsoleData } from '../src/console/console-data.js';
import { PLUGIN_DEFAULTS, startPlugins } from '../src/plugin-serving.js';
import { tmp, turnpike, write } from './cli-helpers.js';
import { recordedLog } from './grant-log.js';

function get(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; cookie?: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      res.resume();
      res.on('end', () => {
        const cookie = res.headers['set-cookie']?.[0];
        resolve({ status: res.statusCode ?? 0, ...(cookie ? { cookie } : {}) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A pino logger whose lines are kept. */
function capturedLog(): { log: pino.Logger; lines: () => { level: number; msg: string }[] } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      out.push(String(chunk));
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines: () => out.map((l) => JSON.parse(l)) };
}

describe('listeners beyond loopback', () => {
  it('security: --debug-address beyond loopback warns at start; on loopback it does not', async () => {
    for (const [address, warns] of [
      ['0.0.0.0:0', true],
      ['127.0.0.1:0', false],
    ] as const) {
      const { log, lines } = capturedLog();
      const debug = await serveDebug(address, undefined, undefined, log);
      await debug.close();
      const warnings = lines().filter((l) => l.level === 40);
      expect([address, warnings.map((w) => w.msg)]).toEqual([
        address,
        warns
          ? [expect.stringContaining(`--debug-address ${address}: /debug/proxies (every proxy and its address)`)]
          : [],
      ]);
    }
  });

  it('security: a plaintext --plugin-address beyond loopback warns at start; on loopback it does not', async () => {
    for (const [address, warns] of [
      ['0.0.0.0:0', true],
      ['127.0.0.1:0', false],
    ] as const) {
      const said: string[] = [];
      const plugins = await startPlugins(
        {
          pluginAddress: address,
          pluginMaxBytes: PLUGIN_DEFAULTS.maxBytes,
          pluginResolveInterval: PLUGIN_DEFAULTS.resolveIntervalS,
        },
        (level, msg) => void (level === 'warn' && said.push(msg)),
      );
      await plugins.close();
      expect([address, said]).toEqual([
        address,
        warns ? [expect.stringContaining(`--plugin-address ${address}: plugin content is served in plaintext`)] : [],
      ]);
    }
  });

  it("security: in a cluster the console's token comes from a file and is never logged", async () => {
    const token = 'a-token-from-a-secret-0123456789';
    const said: string[] = [];
    const log = parseEventLog(recordedLog());
    const c = await serveConsole(new ConsoleData(() => log), '0.0.0.0:0', '--console-address', (m) => said.push(m), {
      value: token,
      from: '--console-token-file',
    });
    try {
      expect(said).toEqual([
        `console on http://0.0.0.0:${c.port}/ (it asks for the token of --console-token-file: ?token=…)`,
      ]);
      expect(said.join('')).not.toContain(token);
      expect((await get(c.port, '/api/summary')).status).toBe(401);
      expect((await get(c.port, `/?token=${token}`)).status).toBe(200);
    } finally {
      await c.close();
    }
    // Beyond loopback, a cluster's controller refuses to start without the file rather than print a token.
    const r = turnpike('run', '--kubeconfig', write(tmp(), 'kubeconfig', 'x'), '--console-address', '0.0.0.0:8090');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--console-address 0.0.0.0:8090: beyond loopback the console asks for a token');
  });

  it("security: the console's cookie is Secure when it was reached over TLS (a proxy in front terminating it)", async () => {
    const log = parseEventLog(recordedLog());
    const c = await serveConsole(new ConsoleData(() => log), '0.0.0.0:0', '--console-address', () => undefined);
    try {
      const plain = await get(c.port, `/?token=${c.token}`);
      expect(plain.cookie).toBe(`turnpike_console=${c.token}; HttpOnly; SameSite=Strict; Path=/`);
      const tls = await get(c.port, `/?token=${c.token}`, { 'x-forwarded-proto': 'https' });
      expect(tls.cookie).toBe(`turnpike_console=${c.token}; HttpOnly; SameSite=Strict; Path=/; Secure`);
      const forwarded = await get(c.port, `/?token=${c.token}`, { forwarded: 'for=10.0.0.1;proto=https' });
      expect(forwarded.cookie).toContain('; Secure');
    } finally {
      await c.close();
    }
  });
});
