// `turnpike console LOG [--port N]`: the web console over a recorded event log, served on loopback
// until interrupted. `run` serves the same console over its own events (--console-address).
import type { Command } from 'commander';
import { readEventLog } from '@turnpike/engine';
import { CliError } from '../errors.js';
import { hostPortFlag } from '../flags.js';
import { ConsoleData } from '../console/console-data.js';
import { consoleAccess } from '../console/console-access.js';
import { startConsoleServer } from '../console/console-server.js';

/**
 * Starts the console on HOST:PORT and says where; a busy port is a usage error. Beyond loopback it asks
 * for a token: a random one, printed in the URL (a terminal's), or `token.value`, which is never printed
 * (a cluster's log is read by more people than its console is for): the line names `token.from` instead.
 */
export async function serveConsole(
  data: ConsoleData,
  address: string,
  flag: string,
  log: (m: string) => void,
  token?: { value: string; from: string },
) {
  const { host, port } = hostPortFlag(flag, address);
  try {
    const c = await startConsoleServer(data, host, port, consoleAccess(host, token?.value));
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${c.port}/`;
    if (c.token && token) log(`console on ${url} (it asks for the token of ${token.from}: ?token=…)`);
    else log(`console on ${url}${c.token ? `?token=${c.token}` : ''}`);
    return c;
  } catch (e) {
    throw new CliError(`${flag} ${address}: cannot listen (${(e as Error).message})`);
  }
}

export function registerConsole(program: Command): void {
  program
    .command('console')
    .description("browse an event log in a web page: the timeline, any moment's statuses, an object over time, diffs")
    .argument('<log>', 'event log (turnpike run --record)')
    .option('--port <port>', 'port on 127.0.0.1 (0: any free port)', '8090')
    .option(
      '--address <host>',
      'listen address; beyond loopback the console asks for the token in the URL it prints',
      '127.0.0.1',
    )
    .action(async (path: string, opts: { port: string; address: string }) => {
      if (!/^\d+$/.test(opts.port)) throw new CliError(`--port ${opts.port}: not a port number`);
      const log = readEventLog(path);
      const data = new ConsoleData(() => log);
      const c = await serveConsole(
        data,
        `${opts.address.includes(':') ? `[${opts.address}]` : opts.address}:${opts.port}`,
        '--port',
        (m) => process.stdout.write(`turnpike: ${m}\n`),
      );
      await new Promise<void>((resolve) => {
        const stop = () => void c.close().then(resolve);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
