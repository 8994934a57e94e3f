// The command as the image ships it: `pnpm deploy` copies @turnpike/cli with its production
// dependencies into a tree of its own (the Dockerfile's build stage). The bundled dist/main.js finds
// the files beside our modules (CRD schemas, Envoy's proto list, protos) through the installed
// packages there; a file a package leaves out of "files" is missing only in such a tree.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmp } from './cli-helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('the deployed command (pnpm deploy, as in the image)', () => {
  it('translates the quick start to statuses and Envoy resources', () => {
    const out = join(tmp('tp-deploy-'), 'app');
    try {
      // --legacy: pnpm 10 deploys a workspace without injected packages only so (the Dockerfile too).
      const deploy = spawnSync(
        'pnpm',
        ['deploy', '--filter', '@turnpike/cli', '--prod', '--prefer-offline', '--legacy', out],
        { cwd: ROOT, encoding: 'utf8', timeout: 240_000 },
      );
      expect(deploy.stderr + deploy.stdout).not.toMatch(/ERR_PNPM/);
      expect(deploy.status).toBe(0);
      const run = spawnSync(
        process.execPath,
        [join(out, 'dist', 'main.js'), 'translate', '-f', join(ROOT, 'examples/quickstart'), '--to', 'all'],
        { cwd: tmp(), encoding: 'utf8', timeout: 60_000 },
      );
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const result = JSON.parse(run.stdout) as {
        resources: { kind: string; status?: unknown }[];
        xds: Record<string, { listeners?: unknown[] }>;
      };
      const gateway = result.resources.find((r) => r.kind === 'Gateway');
      expect(JSON.stringify(gateway?.status)).toContain('"Programmed"');
      expect(Object.keys(result.xds)).toEqual(['infra/public']);
      expect(result.xds['infra/public']?.listeners?.length).toBeGreaterThan(0);
    } finally {
      rmSync(dirname(out), { recursive: true, force: true });
    }
  }, 300_000);
});
