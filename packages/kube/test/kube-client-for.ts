// A KubeClient for a fake API server on loopback: plain HTTP, a token, nothing else.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../src/index.js';

export function kubeClientFor(port: number): KubeClient {
  const path = join(mkdtempSync(join(tmpdir(), 'tp-kc-')), 'kubeconfig');
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'c',
      clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    }),
  );
  return KubeClient.fromKubeconfig(path);
}
