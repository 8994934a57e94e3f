// A fake kubelet: one Ready Node; every pending Pod is bound to it and marked Running and Ready
// with a pod IP, so Deployments (through kube-controller-manager) become available without a
// container runtime; deleted Pods are removed at once. A test may keep some Pods from becoming
// Ready (`unready`), to hold a rollout in progress or make it miss its deadline. A container whose
// readiness probe asks Envoy's /ready is Ready only while `envoyLive` says its Envoy would answer
// 200 (LIVE: its first configuration arrived); one without a readiness probe is Ready once running,
// as a kubelet has it. Port-forward works through the API server: the Node's kubelet endpoint is
// kubelet-streaming (e2e/kube/cmd/kubelet-streaming, the kubelet's own port-forward code), which forwards
// each stream to 127.0.0.1:<port>, where every fake Pod runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { KubeClient } from '@turnpike/kube';
import { kubeBinDir } from './cluster.js';

export interface Pod {
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: {
    nodeName?: string;
    containers: { name: string; image?: string; readinessProbe?: { httpGet?: { path?: string } } }[];
  };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

/** Starts kubelet-streaming on a free loopback port; resolves to the port once it listens. */
function startStreaming(): Promise<{ child: ChildProcess; port: number }> {
  // stdin is a pipe it exits on when closed: it does not outlive this process.
  const child = spawn(join(kubeBinDir(), 'kubelet-streaming'), ['--exit-with-stdin'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (b) => {
    err = (err + b).slice(-4000);
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      const port = Number(line);
      if (Number.isInteger(port) && port > 0) resolve({ child, port });
      else reject(new Error(`kubelet-streaming printed ${JSON.stringify(line)}: ${err}`));
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`kubelet-streaming exited (${code}): ${err}`)));
  });
}

export class FakeKubelet {
  private timer?: NodeJS.Timeout;
  private streaming?: ChildProcess;
  private nextIp = 2;
  private readonly ips = new Map<string, string>();
  readonly node = 'fake-node';
  stopped = false;
  /** Pods for which this says true run but never become Ready (their containers fail their probes). */
  unready: (pod: Pod) => boolean = () => false;
  /** For a Pod probed on /ready: whether its Envoy is LIVE. */
  envoyLive: (pod: Pod) => boolean = () => true;

  constructor(private readonly client: KubeClient) {}

  async start(): Promise<void> {
    const streaming = await startStreaming();
    this.streaming = streaming.child;
    await this.client.request('POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: this.node, labels: { 'kubernetes.io/hostname': this.node } },
    });
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const node = await this.client.must<Record<string, unknown>>('GET', `/api/v1/nodes/${this.node}`);
    await this.client.must('PUT', `/api/v1/nodes/${this.node}/status`, {
      ...node,
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'fake kubelet',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: streaming.port } },
        capacity: { cpu: '64', memory: '256Gi', pods: '1000' },
        allocatable: { cpu: '64', memory: '256Gi', pods: '1000' },
      },
    });
    const loop = async () => {
      if (this.stopped) return;
      try {
        await this.sync();
      } catch {
        /* next round */
      }
      this.timer = setTimeout(() => void loop(), 300);
    };
    void loop();
  }

  private ipFor(key: string): string {
    let ip = this.ips.get(key);
    if (!ip) {
      const n = this.nextIp++;
      ip = `10.244.${Math.floor(n / 250)}.${(n % 250) + 1}`;
      this.ips.set(key, ip);
    }
    return ip;
  }

  private async sync(): Promise<void> {
    const pods = await this.client.must<{ items: Pod[] }>('GET', '/api/v1/pods');
    for (const p of pods.items) {
      const { name, namespace } = p.metadata;
      // A kubelet finishes a deletion once the containers stopped: here, at once.
      if (p.metadata.deletionTimestamp) {
        await this.client.request('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}?gracePeriodSeconds=0`);
        continue;
      }
      if (!p.spec.nodeName) {
        await this.client.request('POST', `/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace },
          target: { apiVersion: 'v1', kind: 'Node', name: this.node },
        });
        continue;
      }
      const ready = p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      const probesEnvoy = p.spec.containers.some((c) => c.readinessProbe?.httpGet?.path === '/ready');
      const wantReady = !this.unready(p) && (!probesEnvoy || this.envoyLive(p));
      if (p.status?.phase === 'Running' && ready === wantReady) continue;
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const ip = this.ipFor(`${namespace}/${name}`);
      const cond = (type: string) => ({
        type,
        status: wantReady || (type !== 'Ready' && type !== 'ContainersReady') ? 'True' : 'False',
        lastTransitionTime: now,
      });
      await this.client.request('PUT', `/api/v1/namespaces/${namespace}/pods/${name}/status`, {
        ...p,
        status: {
          phase: 'Running',
          hostIP: '127.0.0.1',
          podIP: ip,
          podIPs: [{ ip }],
          startTime: now,
          conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(cond),
          containerStatuses: p.spec.containers.map((c) => ({
            name: c.name,
            image: c.image ?? '',
            imageID: '',
            ready: wantReady,
            started: true,
            restartCount: 0,
            state: { running: { startedAt: now } },
          })),
        },
      });
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.streaming?.kill('SIGKILL');
  }
}
