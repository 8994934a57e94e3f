// `turnpike bootstrap --gateway NS/NAME --xds-address HOST:PORT`: the Envoy bootstrap for a
// Gateway's proxy. With --xds-tls-dir the proxy speaks mTLS to the controller, reading its
// certificate, key and CA bundle from that directory through file-based SDS; --out-dir then
// writes the bootstrap and the two SDS files it names.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { bootstrapSdsFiles, buildBootstrap, validateMessage, type BootstrapTls } from '@turnpike/xds';
import { CliError } from '../errors.js';
import { gatewayFlag, hostPortFlag } from '../flags.js';
import { format, parseFormat } from '../output.js';

interface BootstrapFlags {
  gateway: string;
  xdsAddress: string;
  nodeId?: string;
  adminPort: string;
  output: string;
  xdsTlsDir?: string;
  xdsServerName?: string;
  outDir?: string;
}

export function registerBootstrap(program: Command): void {
  program
    .command('bootstrap')
    .description("print the Envoy bootstrap for a Gateway's proxy (ADS to the controller, admin on loopback)")
    .requiredOption('--gateway <ns/name>', 'the Gateway the proxy serves')
    .option('--xds-address <host:port>', 'where the controller serves xDS', '127.0.0.1:18000')
    .option('--node-id <id>', 'node id (default: the Gateway)')
    .option('--admin-port <port>', 'admin port on 127.0.0.1 (Gateway listener ports are kept off 19000 only)', '19000')
    .option(
      '--xds-tls-dir <dir>',
      'speak mTLS to the controller with tls.crt, tls.key and ca.crt from this directory (needs --out-dir)',
    )
    .option(
      '--xds-server-name <name>',
      "with --xds-tls-dir: the name the controller's certificate carries (default: the host of --xds-address)",
    )
    .option(
      '--out-dir <dir>',
      'write envoy.json (and with --xds-tls-dir the SDS files it reads) here instead of printing',
    )
    .option('-o, --output <format>', 'json or yaml', 'json')
    .action((opts: BootstrapFlags) => {
      const { namespace, name } = gatewayFlag(opts.gateway);
      const hp = hostPortFlag('--xds-address', opts.xdsAddress);
      if (opts.xdsTlsDir && !opts.outDir)
        throw new CliError('--xds-tls-dir needs --out-dir: the bootstrap refers to SDS files written next to it');
      const tls: BootstrapTls | undefined = opts.xdsTlsDir
        ? { certDir: resolve(opts.xdsTlsDir), sdsDir: resolve(opts.outDir!), serverName: opts.xdsServerName ?? hp.host }
        : undefined;
      const b = buildBootstrap({
        namespace,
        name,
        xdsHost: hp.host,
        xdsPort: hp.port,
        adminPort: Number(opts.adminPort),
        ...(opts.nodeId ? { nodeId: opts.nodeId } : {}),
        ...(tls ? { tls } : {}),
      });
      const errors = validateMessage('envoy.config.bootstrap.v3.Bootstrap', b);
      if (errors.length) throw new CliError(`bootstrap does not validate: ${errors.join('; ')}`);
      if (!opts.outDir) {
        process.stdout.write(format(b, parseFormat(opts.output)));
        return;
      }
      mkdirSync(opts.outDir, { recursive: true });
      writeFileSync(join(opts.outDir, 'envoy.json'), JSON.stringify(b, null, 2) + '\n');
      for (const [file, content] of Object.entries(tls ? bootstrapSdsFiles(tls) : {}))
        writeFileSync(join(opts.outDir, file), content + '\n');
      process.stdout.write(
        `wrote ${['envoy.json', ...Object.keys(tls ? bootstrapSdsFiles(tls) : {})].join(', ')} to ${opts.outDir}\n`,
      );
    });
}
