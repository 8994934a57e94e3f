#!/usr/bin/env node
// Generates TypeScript types for the Envoy protos (proto-loader-gen-types), so a misspelt field
// in the resources we build is a compile error. Output: src/generated (not committed; the build
// runs this first, and skips it when the output is newer than this script).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INCLUDE_DIRS, PROTO_FILES } from './protos.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'src', 'generated');
const stamp = join(out, 'ads.ts');
if (existsSync(stamp) && statSync(stamp).mtimeMs > statSync(join(here, '..', 'protos.json')).mtimeMs) process.exit(0);
rmSync(out, { recursive: true, force: true });
const require = createRequire(import.meta.url);
const bin = join(
  dirname(require.resolve('@grpc/proto-loader/package.json')),
  'build',
  'bin',
  'proto-loader-gen-types.js',
);
// File names first: the array option --includeDirs would swallow what follows it.
const r = spawnSync(
  process.execPath,
  [
    bin,
    ...PROTO_FILES,
    '--keepCase',
    '--longs=String',
    '--enums=String',
    '--oneofs',
    '--grpcLib=@grpc/grpc-js',
    '--importFileExtension=.js',
    `--outDir=${out}`,
    ...INCLUDE_DIRS.map((d) => `--includeDirs=${d}`),
  ],
  { stdio: 'inherit' },
);
if (r.status !== 0) process.exit(r.status ?? 1);
