#!/usr/bin/env node
// Runs jest in ESM mode and ends with the line CI reads: "N passed, N failed". A run that
// executed no test fails. `--e2e` adds the end-to-end suites (real kube-apiserver),
// `--e2e-only` runs only those. Other arguments go to jest (e.g. `-t plugin`).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = {
  ...process.env,
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules --no-warnings`.trim(),
};
const rest = [];
for (const a of process.argv.slice(2)) {
  if (a === '--e2e') env.TURNPIKE_E2E = '1';
  else if (a === '--e2e-only') env.TURNPIKE_E2E = 'only';
  else if (a !== '--') rest.push(a);
}
// The tests run the bundled command (packages/cli/dist/main.js): bring it up to date with the modules
// tsc built (it does nothing when it is).
const bundled = spawnSync(process.execPath, [join(ROOT, 'packages/cli/scripts/bundle-cli.mjs')], { stdio: 'inherit' });
if (bundled.status !== 0) {
  process.stdout.write('0 passed, 1 failed\n');
  process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), 'turnpike-jest-'));
const out = join(dir, 'results.json');
const jest = require.resolve('jest/bin/jest');
// The end-to-end suites start processes and sockets of their own; do not wait on stragglers.
const extra = env.TURNPIKE_E2E ? ['--forceExit'] : [];
const r = spawnSync(process.execPath, [jest, '--json', `--outputFile=${out}`, ...extra, ...rest], {
  stdio: 'inherit',
  env,
});
let passed = 0,
  failed = 0,
  total = 0;
try {
  const res = JSON.parse(readFileSync(out, 'utf8'));
  passed = res.numPassedTests;
  failed = res.numFailedTests + res.numRuntimeErrorTestSuites;
  total = res.numTotalTests;
} catch {
  failed = Math.max(failed, 1); // jest did not finish: count the run as failed
}
rmSync(dir, { recursive: true, force: true });
if (total === 0) process.stdout.write('no test was executed: the run fails\n');
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(r.status === 0 && total > 0 && failed === 0 ? 0 : 1);
