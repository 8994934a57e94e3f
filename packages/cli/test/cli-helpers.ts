// Runs the built CLI as a process, as users do.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/main.js');

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

export function turnpike(...args: string[]): Result {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function tmp(prefix = 'tp-cli-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function write(dir: string, name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** Starts a long-running command; `stop()` sends SIGTERM and resolves with its output. */
export function start(...args: string[]): { stop: () => Promise<Result>; output: () => string; errors: () => string } {
  const p = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '',
    stderr = '';
  p.stdout.on('data', (d) => (stdout += d));
  p.stderr.on('data', (d) => (stderr += d));
  return {
    output: () => stdout,
    errors: () => stderr,
    stop: () =>
      new Promise((res) => {
        p.on('close', (code) => res({ code: code ?? -1, stdout, stderr }));
        p.kill('SIGTERM');
      }),
  };
}

export async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const MANIFEST = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tp}
spec: {controllerName: turnpike.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: tp
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: apps}
spec: {ports: [{name: http, port: 8080}]}
`;

export const ROUTE = (backend: string) => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: ${backend}, port: 8080}]}]
`;
