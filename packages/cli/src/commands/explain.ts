// `turnpike explain KIND/NAMESPACE/NAME -f FILE|DIR`: why an object has its status.
import type { Command } from 'commander';
import { CLUSTER_SCOPED, isWatchedKind, WATCHED_KINDS, type KubeObject } from '@turnpike/api';
import { loadManifests } from '@turnpike/engine';
import { explain, snapshotFromObjects, type Snapshot, type TranslateOptions } from '@turnpike/translator';
import { kubeconfigPath, readLiveCluster } from '../live-cluster.js';
import { liveInput, recordSummary, type ReferenceNote } from '../live-references.js';
import { CliError } from '../errors.js';
import { liveOrFileInputOptions, textFormatFlag, validationFlag, type LiveOrFileInput } from '../flags.js';
import { format } from '../output.js';
import { readLogMoment, storeAt, translateOptionsFor } from '../log-state.js';

/**
 * A kind as kubectl takes it: any case, singular or plural (`httproute`, `HTTPRoutes`, `gatewayclass`,
 * `backendtlspolicies`).
 */
function canonicalKind(text: string): string | undefined {
  const lower = text.toLowerCase();
  return WATCHED_KINDS.find((k) => {
    const kind = k.toLowerCase();
    return lower === kind || lower === `${kind}s` || lower === `${kind}es` || lower === kind.replace(/y$/, 'ies');
  });
}

export function parseObjectRef(ref: string): { kind: string; namespace?: string; name: string } {
  const parts = ref.split('/');
  const kind = canonicalKind(parts[0] ?? '');
  if (!kind || !isWatchedKind(kind))
    throw new CliError(`${ref}: unknown kind "${parts[0]}" (use KIND/NAMESPACE/NAME, e.g. HTTPRoute/shop/store)`);
  if (CLUSTER_SCOPED.has(kind)) {
    // KIND/NAME, or KIND//NAME as analyze and the status keys print it.
    const name = parts.length === 2 ? parts[1] : parts.length === 3 && parts[1] === '' ? parts[2] : undefined;
    if (!name) throw new CliError(`${ref}: ${kind} is cluster-scoped, use ${kind}/NAME`);
    return { kind, name };
  }
  if (parts.length !== 3 || !parts[1] || !parts[2]) throw new CliError(`${ref}: use ${kind}/NAMESPACE/NAME`);
  return { kind, namespace: parts[1], name: parts[2] };
}

export function registerExplain(program: Command): void {
  liveOrFileInputOptions(
    program
      .command('explain')
      .description('explain why an object has its status: listeners considered, backends resolved, what the proxy does')
      .argument('<object>', 'KIND/NAMESPACE/NAME (or KIND/NAME for cluster-scoped kinds)'),
  )
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .option(
      '--log <log[@moment]>',
      'explain at a moment of an event log or capture: LOG@SEQ or LOG@TIME (default: its end)',
    )
    .action(async (ref: string, opts: LiveOrFileInput & { output: string; log?: string }) => {
      opts.output = textFormatFlag(opts.output);
      const { kind, namespace, name } = parseObjectRef(ref);
      let snapshot: Snapshot;
      let options: TranslateOptions = {};
      // Files only: objects of kinds we do not read that target others as policies do.
      let foreignPolicies: KubeObject[] = [];
      // Live: the Secrets and ConfigMaps this object references, and what this tool judged each by.
      let references: { summary: string; notes: ReferenceNote[] } | undefined;
      if (opts.kubeconfig !== undefined && opts.file.length)
        throw new CliError('give -f FILE|DIR or --kubeconfig PATH, not both');
      if (opts.log !== undefined && (opts.file.length || opts.kubeconfig !== undefined))
        throw new CliError('give --log, -f FILE|DIR or --kubeconfig PATH, one of them');
      const kubeconfig = opts.file.length || opts.log !== undefined ? undefined : kubeconfigPath(opts.kubeconfig);
      if (opts.log !== undefined) {
        const { log, seq } = readLogMoment(opts.log);
        options = translateOptionsFor(log.header);
        snapshot = storeAt(log, seq).snapshot;
      } else if (kubeconfig !== undefined) {
        const live = await readLiveCluster({ ...opts, kubeconfig });
        options = live.options;
        const input = liveInput(live);
        snapshot = snapshotFromObjects(input.objects);
        const key = `${kind}/${namespace ?? ''}/${name}`;
        references = {
          summary: recordSummary(live.record, input.references),
          notes: input.references.filter((n) => n.referrers.some((r) => r.from === key)),
        };
      } else {
        if (!opts.file.length)
          throw new CliError(
            'give -f FILE|DIR (repeatable), or a cluster: --kubeconfig PATH, $KUBECONFIG or ~/.kube/config',
          );
        const validation = validationFlag(opts.validate);
        const loaded = loadManifests(opts.file, { validation });
        for (const m of loaded.invalid)
          process.stderr.write(`turnpike: ${validation === 'warn' ? 'warning' : 'error'}: ${m}\n`);
        for (const m of loaded.skipped) process.stderr.write(`turnpike: warning: ${m}\n`);
        snapshot = snapshotFromObjects(loaded.objects);
        foreignPolicies = loaded.foreignPolicies;
      }
      const explained = explain(snapshot, kind, namespace, name, options, foreignPolicies);
      const e = references?.notes.length
        ? {
            ...explained,
            lines: [
              ...explained.lines,
              `Secrets and ConfigMaps it references: ${references.summary}`,
              ...references.notes.flatMap((n) => n.says.map((line) => `  ${line}`)),
            ],
            references: references.notes,
          }
        : explained;
      if (opts.output === 'json') process.stdout.write(`${JSON.stringify(e, null, 2)}\n`);
      else if (opts.output === 'yaml') process.stdout.write(format(e, 'yaml'));
      else process.stdout.write(`${e.lines.join('\n')}\n`);
      if (!e.found) process.exitCode = 1;
    });
}
