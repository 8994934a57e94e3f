#!/usr/bin/env node
// Runs jest in ESM mode. `--e2e` adds the end-to-end suites (real kube-apiserver), `--e2e-only`
// runs only those. Other arguments go to jest (e.g. `-t plugin`).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules --no-warnings`.trim() };
const rest = [];
for (const a of args) {
  if (a === '--e2e') env.TURNPIKE_E2E = '1';
  else if (a === '--e2e-only') env.TURNPIKE_E2E = 'only';
  else if (a !== '--') rest.push(a);
}
const jest = require.resolve('jest/bin/jest');
const r = spawnSync(process.execPath, [jest, ...rest], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
