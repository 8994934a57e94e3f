// Who may read the console: a request naming another host is refused (DNS rebinding), and beyond
// loopback the console asks for the token it printed, then keeps it in a cookie.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseEventLog } from '@turnpike/engine';
import { ConsoleData } from '../src/console/console-data.js';
import { startConsoleServer } from '../src/console/console-server.js';
import { recordedLog } from './grant-log.js';

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; cookie?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        const cookie = res.headers['set-cookie']?.[0];
        resolve({ status: res.statusCode ?? 0, ...(cookie ? { cookie } : {}), body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const data = () => {
  const log = parseEventLog(recordedLog());
  return new ConsoleData(() => log);
};

describe('console access', () => {
  let local: Awaited<ReturnType<typeof startConsoleServer>>;
  let wide: Awaited<ReturnType<typeof startConsoleServer>>;
  beforeAll(async () => {
    local = await startConsoleServer(data(), '127.0.0.1', 0);
    wide = await startConsoleServer(data(), '0.0.0.0', 0);
  });
  afterAll(async () => {
    await local.close();
    await wide.close();
  });

  it('security: on loopback, a request naming another host (DNS rebinding) is refused; loopback names are served', async () => {
    const rebound = await get(local.port, '/api/summary', { host: `attacker.example:${local.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('Host attacker.example is not served');
    expect((await get(local.port, '/api/summary', { host: `localhost:${local.port}` })).status).toBe(200);
    expect((await get(local.port, '/api/summary', { host: `127.0.0.1:${local.port}` })).status).toBe(200);
    expect(local.token).toBeUndefined();
  });

  it('security: beyond loopback, the console asks for its token, and keeps it in an HttpOnly cookie', async () => {
    expect(wide.token).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect((await get(wide.port, '/api/summary')).status).toBe(401);
    expect((await get(wide.port, '/api/summary?token=wrong')).status).toBe(401);
    const first = await get(wide.port, `/?token=${wide.token}`);
    expect(first.status).toBe(200);
    expect(first.cookie).toBe(`turnpike_console=${wide.token}; HttpOnly; SameSite=Strict; Path=/`);
    const again = await get(wide.port, '/api/summary', { cookie: first.cookie!.split(';')[0]! });
    expect(again.status).toBe(200);
  });
});
