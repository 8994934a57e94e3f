// The controller under test: a separate process, `turnpike run --kubeconfig`, authenticated as
// deploy/'s ServiceAccount under deploy/'s RBAC (a missing permission fails the test).
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, waitFor } from './cluster.js';

export class Controller {
  private proc?: ChildProcess;
  out = '';
  healthPort = 0;
  debugPort = 0;
  xdsPort = 0;
  pluginPort = 0;

  constructor(
    private readonly kubeconfig: string,
    private readonly extra: string[] = [],
  ) {}

  async start(): Promise<void> {
    this.out = '';
    this.proc = spawn(
      process.execPath,
      [
        // TURNPIKE_CLI: another build of the CLI (bench/propagation.mjs --cli, to measure a previous commit).
        process.env.TURNPIKE_CLI ?? join(ROOT, 'packages/cli/dist/main.js'),
        'run',
        '--kubeconfig',
        this.kubeconfig,
        '--xds-address',
        '127.0.0.1:0',
        '--plugin-address',
        '127.0.0.1:0',
        '--health-address',
        '127.0.0.1:0',
        '--debug-address',
        '127.0.0.1:0',
        '--quiet-ms',
        '50',
        '--max-delay-ms',
        '250',
        '--log-level',
        'info',
        ...this.extra,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.proc.stdout?.on('data', (b) => {
      this.out += b;
    });
    this.proc.stderr?.on('data', (b) => {
      this.out += b;
    });
    await waitFor(
      'controller health address',
      async () => {
        const m = /"address":"127\.0\.0\.1:(\d+)".*serving \/healthz/.exec(this.out);
        const x = /serving xDS on 127\.0\.0\.1:(\d+)/.exec(this.out);
        const p = /serving plugin content on 127\.0\.0\.1:(\d+)/.exec(this.out);
        const d = /"address":"127\.0\.0\.1:(\d+)".*serving \/debug\/proxies/.exec(this.out);
        if (m && x && d) {
          this.debugPort = Number(d[1]);
          this.healthPort = Number(m[1]);
          this.xdsPort = Number(x[1]);
          this.pluginPort = Number(p?.[1] ?? 0);
          return true;
        }
        if (this.proc?.exitCode !== null) throw new Error(`controller exited: ${this.out.slice(-2000)}`);
        return undefined;
      },
      30_000,
    );
  }

  async ready(): Promise<void> {
    await waitFor(
      'controller /readyz',
      async () => ((await fetch(`http://127.0.0.1:${this.healthPort}/readyz`)).status === 200 ? true : undefined),
      60_000,
    );
  }

  /** A counter or gauge from /metrics, summed over its labels. */
  async metric(name: string, labels?: string): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${this.healthPort}/metrics`)).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name) || line.startsWith('#')) continue;
      if (labels && !line.includes(labels)) continue;
      const rest = line.slice(name.length);
      if (rest[0] !== ' ' && rest[0] !== '{') continue;
      sum += Number(line.split(' ').pop());
    }
    return sum;
  }

  /** SIGSTOP / SIGCONT: the process and its connections stay, it just stops reading. */
  pause(): void {
    this.proc?.kill('SIGSTOP');
  }

  resume(): void {
    this.proc?.kill('SIGCONT');
  }

  /** SIGKILL: no lease release, no goodbye. */
  kill(): void {
    this.killed = true;
    this.proc?.kill('SIGKILL');
  }

  killed = false;

  async stop(): Promise<void> {
    // Its log is kept for diagnosis: $TMPDIR/turnpike-controller-<pid>.log
    if (this.proc?.pid) writeFileSync(join(tmpdir(), `turnpike-controller-${this.proc.pid}.log`), this.out);
    if (!this.proc || this.proc.exitCode !== null) return;
    const done = new Promise((r) => this.proc!.once('exit', r));
    this.proc.kill('SIGTERM');
    await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}
