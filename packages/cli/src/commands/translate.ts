// `turnpike translate -f FILE|DIR`: offline translation of manifests.
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { fileInputOptions, hostPortFlag, validationFlag } from '../flags.js';
import { offlineProxyObjects } from '../proxy-objects.js';
import { PROXY_PLACEMENTS } from './run-kube.js';
import { DEFAULT_DRAIN_IMAGE } from '@turnpike/kube';
import { translatePaths } from '../offline.js';
import { format, parseFormat } from '../output.js';
import { envoyResourcesFor } from '@turnpike/xds';
import type { KubeObject } from '@turnpike/api';
import type { OfflineResult } from '../offline.js';

/** Envoy resources per Gateway; Secret contents are left out of printed output. */
function envoyResourcesByGateway(r: OfflineResult): Record<string, unknown> {
  const secrets = new Map(
    r.resources.filter((o) => o.kind === 'Secret').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]),
  );
  const lookup = (kind: string, ns: string, name: string): KubeObject | undefined =>
    kind === 'Secret' ? secrets.get(`${ns}/${name}`) : undefined;
  const out: Record<string, unknown> = {};
  for (const key of r.result.xdsIR.gateways.sortedKeys()) {
    const res = envoyResourcesFor(r.result.xdsIR.gateways.get(key)!, lookup, undefined, r.result.xdsIR.endpoints);
    out[key] = {
      ...res,
      secrets: res.secrets.map((s) => ({
        name: s.name,
        tls_certificate: {
          certificate_chain: s.tls_certificate?.certificate_chain,
          private_key: { inline_string: '<redacted>' },
        },
      })),
    };
  }
  return out;
}

interface TranslateFlags {
  file: string[];
  output: string;
  to: string;
  now?: string;
  validate: string;
  proxyPlacement?: string;
  controllerNamespace: string;
  xdsPublicAddress?: string;
  xdsPlaintext?: boolean;
  proxyDrainImage: string;
}

export function registerTranslate(program: Command): void {
  fileInputOptions(
    program
      .command('translate')
      .description('translate manifests offline and print statuses, the xDS IR and the infra IR'),
  )
    .option('-o, --output <format>', 'json or yaml', 'json')
    .option(
      '--to <what>',
      'resources, ir (xDS and infra IR), xds (Envoy resources), objects (every proxy object as the controller ' +
        'applies it: Deployment, Service, PDB, HPA…) or all',
      'all',
    )
    .option('--now <time>', 'timestamp for lastTransitionTime (RFC 3339); default: now')
    .option(
      '--proxy-placement <mode>',
      'controller-namespace (the default install; the default with --to objects) or gateway-namespace ' +
        '(the default otherwise): where the infra IR places the proxy objects',
    )
    .option('--controller-namespace <ns>', "--to objects: the controller's namespace", 'turnpike-system')
    .option('--xds-public-address <host:port>', '--to objects: where proxies reach xDS (default: the Service)')
    .option('--xds-plaintext', '--to objects: for a controller run with --xds-plaintext (no mTLS)')
    .option('--proxy-drain-image <image>', "--to objects: the drain container's image", DEFAULT_DRAIN_IMAGE)
    .action((opts: TranslateFlags) => {
      const fmt = parseFormat(opts.output);
      const now = opts.now ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      if (
        !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(now) ||
        Number.isNaN(Date.parse(now))
      ) {
        throw new CliError(`--now ${now}: not an RFC 3339 time (e.g. 2026-01-02T15:04:05Z)`);
      }
      // Offline, proxies sat beside their Gateway; --to objects shows the default install instead.
      const placement = opts.proxyPlacement ?? (opts.to === 'objects' ? 'controller-namespace' : 'gateway-namespace');
      if (!(PROXY_PLACEMENTS as readonly string[]).includes(placement))
        throw new CliError(`--proxy-placement ${placement}: use ${PROXY_PLACEMENTS.join(' or ')}`);
      const proxyNamespace = placement === 'gateway-namespace' ? undefined : opts.controllerNamespace;
      const r = translatePaths(
        opts.file,
        now,
        validationFlag(opts.validate),
        proxyNamespace !== undefined ? { proxyNamespace } : {},
      );
      for (const e of r.errors) process.stderr.write(`turnpike: error: ${e}\n`);
      for (const w of r.warnings) process.stderr.write(`turnpike: warning: ${w}\n`);
      for (const m of r.skipped) process.stderr.write(`turnpike: warning: ${m}\n`);
      for (const d of r.result.diagnostics) process.stderr.write(`turnpike: ${d.level}: ${d.object}: ${d.message}\n`);
      let out: unknown;
      switch (opts.to) {
        case 'all':
          out = {
            resources: r.resources,
            xdsIR: r.result.xdsIR,
            infraIR: r.result.infraIR,
            xds: envoyResourcesByGateway(r),
          };
          break;
        case 'resources':
          out = { resources: r.resources };
          break;
        case 'ir':
          out = { xdsIR: r.result.xdsIR, infraIR: r.result.infraIR };
          break;
        case 'xds':
          out = { xds: envoyResourcesByGateway(r) };
          break;
        case 'objects': {
          const xdsPublic = hostPortFlag(
            '--xds-public-address',
            opts.xdsPublicAddress ?? `turnpike.${opts.controllerNamespace}.svc:18000`,
          );
          const proxies = offlineProxyObjects(r.result.infraIR.gateways.values(), {
            xdsPublic,
            plaintext: !!opts.xdsPlaintext,
            drainImage: opts.proxyDrainImage,
          });
          for (const n of proxies.notes) process.stderr.write(`turnpike: note: ${n}\n`);
          out = { objects: proxies.objects };
          break;
        }
        default:
          throw new CliError(`--to ${opts.to}: unknown target (resources, ir, xds, objects, all)`);
      }
      process.stdout.write(format(out, fmt));
    });
}
