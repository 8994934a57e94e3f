// Builds the conformance test binary (e2e/conformance, sigs.k8s.io/gateway-api/conformance
// v1.7.0) once per source version, under ~/.cache; scripts/test.sh builds it before the suites
// (e2e/scripts/build-conformance.sh, keyed the same way), so this builds only for a suite run alone.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cluster.js';

/** v1.7.0 needs Go >= 1.27: the toolchain comes through the module proxy and is cached. */
const GO_TOOLCHAIN = 'go1.27.3';

export function conformanceBinary(): string {
  const src = join(ROOT, 'e2e/conformance');
  const hash = createHash('sha256')
    .update(['go.mod', 'go.sum', 'conformance_test.go'].map((f) => readFileSync(join(src, f), 'utf8')).join('\0'))
    .digest('hex')
    .slice(0, 16);
  const out = join(
    process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '/root', '.cache'),
    'turnpike',
    `conformance-${hash}.test`,
  );
  if (!existsSync(out)) {
    execFileSync('go', ['test', '-c', '-o', out, '.'], {
      cwd: src,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, GOTOOLCHAIN: GO_TOOLCHAIN, GOFLAGS: '-mod=mod' },
    });
  }
  return out;
}

export interface ConformanceResult {
  passed: string[];
  failed: string[];
  skipped: string[];
  output: string;
}

/** Reads `--- PASS/FAIL/SKIP: TestConformance/<Name>` lines of a verbose run. */
export function parseConformance(output: string): ConformanceResult {
  const r: ConformanceResult = { passed: [], failed: [], skipped: [], output };
  for (const m of output.matchAll(/^\s*--- (PASS|FAIL|SKIP): TestConformance\/([A-Za-z0-9]+) /gm)) {
    (m[1] === 'PASS' ? r.passed : m[1] === 'FAIL' ? r.failed : r.skipped).push(m[2]!);
  }
  return r;
}
