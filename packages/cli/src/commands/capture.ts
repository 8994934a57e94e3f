// `turnpike capture`: a running controller's flight recording, fetched through the API server's
// port-forward to the controller Pod's loopback-only debug endpoint (no listener on the Pod network),
// into one capture file that every log tool reads (replay, bisect, console, diff LOG@N, explain --log).
// The Pod is the leader's (from the leader Lease) unless --replica names one.
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { readEventLog, type ParsedLog } from '@turnpike/engine';
import { forwardToPod, KubeApiError, type KubeClient } from '@turnpike/kube';
import { CliError } from '../errors.js';
import { kubeconfigPath, liveClient } from '../live-cluster.js';

interface CaptureOptions {
  kubeconfig?: string;
  context?: string;
  namespace: string;
  replica?: string;
  since?: string;
  output?: string;
  port: string;
}

const DEBUGGER_ROLE = 'turnpike-debugger';

function bindHint(namespace: string): string {
  return (
    `bind the ClusterRole ${DEBUGGER_ROLE} in ${namespace}, e.g. kubectl create rolebinding ${DEBUGGER_ROLE} ` +
    `-n ${namespace} --clusterrole=${DEBUGGER_ROLE} --user=YOU`
  );
}

/** `2h`, `30m`, `90s`, `1d` before now, or a time (RFC 3339). */
export function sinceTime(spec: string, nowMs: number): number {
  const rel = /^(\d+)(s|m|h|d)$/.exec(spec);
  if (rel) return nowMs - Number(rel[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as 's'];
  const t = Date.parse(spec);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(spec))
    throw new CliError(`--since ${spec}: give a duration before now (2h, 30m) or a time (RFC 3339)`);
  return t;
}

async function leaderPod(client: KubeClient, namespace: string): Promise<string> {
  const r = await client.request<{ spec?: { holderIdentity?: string } }>(
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/turnpike`,
  );
  if (r.status === 403)
    throw new CliError(
      `you may not read the leader Lease in ${namespace} (to find the leader): ${bindHint(namespace)}`,
    );
  if (r.status === 404)
    throw new CliError(`no leader Lease turnpike in ${namespace}: is the controller running there? (-n NAMESPACE)`);
  if (r.status !== 200) throw new CliError(`reading the leader Lease in ${namespace}: HTTP ${r.status}`);
  const holder = r.body.spec?.holderIdentity;
  if (!holder) throw new CliError(`the leader Lease in ${namespace} has no holder now; name a Pod with --replica`);
  // The controller's identity is its Pod's name, then `_` and a per-process suffix.
  return holder.split('_')[0]!;
}

function fetchCapture(port: number, sinceMs: number): Promise<IncomingMessage> {
  const since = encodeURIComponent(new Date(sinceMs).toISOString());
  return new Promise((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path: `/debug/recorder/capture?since=${since}` }, resolve).on('error', reject);
  });
}

async function readBody(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return text.trim();
}

export function describeCapture(log: ParsedLog): string[] {
  const segs = log.segments ?? [];
  const first = log.checkpoints?.[0]?.at ?? log.events[0]?.at;
  const last = segs.at(-1)?.to ?? log.events.at(-1)?.at;
  const lines = [
    `${segs.length} segment(s), ${log.events.length} event(s) ` +
      `(${log.events[0]?.seq ?? '-'}–${log.events.at(-1)?.seq ?? '-'}), ${log.outputs.length} translation(s), ` +
      `${first ?? '?'} – ${last ?? '?'}`,
  ];
  for (const cp of log.checkpoints ?? [])
    if (cp.gap && cp.gap.reason !== 'before-log')
      lines.push(`gap (${cp.gap.reason}): ${cp.gap.from ?? '?'} – ${cp.gap.to}, not recorded`);
  for (const w of log.warnings ?? []) lines.push(`warning: ${w}`);
  return lines;
}

export function registerCapture(program: Command): void {
  program
    .command('capture')
    .description(
      "fetch a running controller's flight recording (through a port-forward) into one file every log tool reads",
    )
    .option('--kubeconfig <path>', 'the cluster (default: $KUBECONFIG, then ~/.kube/config)')
    .option('--context <name>', 'a context of the kubeconfig other than its current one')
    .option('-n, --namespace <ns>', "the controller's namespace", 'turnpike-system')
    .option('--replica <pod>', 'capture this controller Pod (default: the leader)')
    .option('--since <when>', 'from this long ago (2h, 30m) or this time (RFC 3339); default: all it kept')
    .option('-o, --output <file>', 'the capture file (default: turnpike-capture-TIME.tpk)')
    .option('--port <port>', "the controller's debug port (--debug-address)", '8081')
    .action(async (opts: CaptureOptions) => {
      const kubeconfig = kubeconfigPath(opts.kubeconfig);
      if (kubeconfig === undefined)
        throw new CliError('no cluster: give --kubeconfig PATH, or set $KUBECONFIG, or write ~/.kube/config');
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new CliError(`--port ${opts.port}: not a port`);
      const now = Date.now();
      const sinceMs = opts.since === undefined ? 0 : sinceTime(opts.since, now);
      const out =
        opts.output ?? `turnpike-capture-${new Date(now).toISOString().replace(/[-:]/g, '').slice(0, 15)}.tpk`;
      const client = liveClient({ kubeconfig, ...(opts.context !== undefined ? { context: opts.context } : {}) });
      try {
        const pod = opts.replica ?? (await leaderPod(client, opts.namespace));
        let forward;
        try {
          forward = await forwardToPod(client, opts.namespace, pod, port);
        } catch (e) {
          if (e instanceof KubeApiError && e.status === 403)
            throw new CliError(
              `you may not port-forward to Pods in ${opts.namespace} (pods/portforward): ${bindHint(opts.namespace)}`,
            );
          if (e instanceof KubeApiError) throw new CliError(`port-forward to ${opts.namespace}/${pod}: ${e.message}`);
          throw e;
        }
        const tmp = `${out}.partial`;
        try {
          const res = await fetchCapture(forward.localPort, sinceMs);
          if (res.statusCode !== 200)
            throw new CliError(`${opts.namespace}/${pod}: ${(await readBody(res)) || `HTTP ${res.statusCode}`}`);
          await pipeline(res, createWriteStream(tmp, { mode: 0o600 }));
          renameSync(tmp, out);
        } finally {
          rmSync(tmp, { force: true });
          await forward.close();
        }
        const log = readEventLog(out);
        process.stderr.write(`turnpike: captured ${opts.namespace}/${pod} into ${out}\n`);
        for (const line of describeCapture(log)) process.stderr.write(`turnpike: ${line}\n`);
      } finally {
        client.close();
      }
    });
}
