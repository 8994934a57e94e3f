// `turnpike bootstrap --gateway NS/NAME --xds-address HOST:PORT`: the Envoy bootstrap for a
// Gateway's proxy.
import type { Command } from 'commander';
import { buildBootstrap, parseHostPort, validateMessage } from '@turnpike/xds';
import { CliError } from '../errors.js';
import { format, parseFormat } from '../output.js';

export function registerBootstrap(program: Command): void {
  program
    .command('bootstrap')
    .description("print the Envoy bootstrap for a Gateway's proxy (ADS to the controller, admin on loopback)")
    .requiredOption('--gateway <ns/name>', 'the Gateway the proxy serves')
    .option('--xds-address <host:port>', 'where the controller serves xDS', '127.0.0.1:18000')
    .option('--node-id <id>', 'node id (default: the Gateway)')
    .option('--admin-port <port>', 'admin port on 127.0.0.1', '19000')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .action((opts: { gateway: string; xdsAddress: string; nodeId?: string; adminPort: string; output: string }) => {
      const [namespace, name, extra] = opts.gateway.split('/');
      if (!namespace || !name || extra !== undefined) throw new CliError(`--gateway ${opts.gateway}: use NAMESPACE/NAME`);
      let hp;
      try { hp = parseHostPort(opts.xdsAddress); } catch (e) { throw new CliError(`--xds-address: ${(e as Error).message}`); }
      const b = buildBootstrap({ namespace, name, xdsHost: hp.host, xdsPort: hp.port, adminPort: Number(opts.adminPort), ...(opts.nodeId ? { nodeId: opts.nodeId } : {}) });
      const errors = validateMessage('envoy.config.bootstrap.v3.Bootstrap', b);
      if (errors.length) throw new CliError(`bootstrap does not validate: ${errors.join('; ')}`);
      process.stdout.write(format(b, parseFormat(opts.output)));
    });
}
