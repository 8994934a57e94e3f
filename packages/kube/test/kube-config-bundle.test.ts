// The bundle of @kubernetes/client-node the build makes (scripts/bundle-client-node.mjs) is the
// package's own code: it reads a kubeconfig and authenticates requests exactly as the package does.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import * as clientNode from '@kubernetes/client-node';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('the bundled KubeConfig', () => {
  it('loads a kubeconfig and applies its credentials as @kubernetes/client-node does', async () => {
    execFileSync(process.execPath, [join(root, 'scripts/bundle-client-node.mjs')]); // a no-op when built
    const bundle = (await import(pathToFileURL(join(root, 'dist/vendor/client-node.js')).href)) as typeof clientNode;
    const dir = mkdtempSync(join(tmpdir(), 'tp-bundle-'));
    const path = join(dir, 'kubeconfig');
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'b',
        clusters: [
          { name: 'a', cluster: { server: 'https://a.example:6443', 'insecure-skip-tls-verify': true } },
          { name: 'b', cluster: { server: 'https://b.example:443', 'certificate-authority-data': 'Q0E=' } },
        ],
        users: [
          { name: 'token', user: { token: 'secret-token' } },
          { name: 'cert', user: { 'client-certificate-data': 'Q0VSVA==', 'client-key-data': 'S0VZ' } },
        ],
        contexts: [
          { name: 'a', context: { cluster: 'a', user: 'token' } },
          { name: 'b', context: { cluster: 'b', user: 'cert' } },
        ],
      }),
    );
    const seen = async (KubeConfig: typeof clientNode.KubeConfig, context: string) => {
      const kc = new KubeConfig();
      kc.loadFromFile(path);
      kc.setCurrentContext(context);
      const opts: Record<string, unknown> = {};
      await kc.applyToHTTPSOptions(opts);
      // The agent is an instance of each copy's own class: compared by what it was given.
      const { agent, ...rest } = opts as { agent?: { options?: Record<string, unknown> } };
      return { server: kc.getCurrentCluster()?.server, agentOptions: { ...agent?.options }, ...rest };
    };
    for (const context of ['a', 'b']) {
      const fromBundle = await seen(bundle.KubeConfig, context);
      expect(fromBundle).toEqual(await seen(clientNode.KubeConfig, context));
      if (context === 'a') expect(JSON.stringify(fromBundle)).toContain('Bearer secret-token');
      else expect(fromBundle).toMatchObject({ cert: Buffer.from('CERT'), key: Buffer.from('KEY') });
    }
  }, 120_000);
});
