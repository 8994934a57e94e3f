#!/usr/bin/env node
// Bundles @kubernetes/client-node's KubeConfig into one file, dist/vendor/client-node.js. The
// package's ESM build is 826 modules (its generated API comes with KubeConfig): importing it takes
// 0.6 s of every start of the controller and of every CLI command; the bundle takes 0.14 s. Only
// the module layout changes: the code is the package's own, of the version in the lockfile. The
// build runs this after tsc; it is skipped when the bundle of this version is there already.
// esbuild-wasm: esbuild compiled to WebAssembly, no native binary.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '..', 'package.json'));
const pkgJson = require.resolve('@kubernetes/client-node/package.json');
const version = JSON.parse(readFileSync(pkgJson, 'utf8')).version;
const out = join(here, '..', 'dist', 'vendor', 'client-node.js');
const header = `// @kubernetes/client-node ${version}, KubeConfig only, bundled by scripts/bundle-client-node.mjs`;
if (existsSync(out) && readFileSync(out, 'utf8').startsWith(header)) process.exit(0);

const esbuild = createRequire(import.meta.url)('esbuild-wasm');
mkdirSync(dirname(out), { recursive: true });
const result = await esbuild.build({
  stdin: {
    contents: "export { KubeConfig } from '@kubernetes/client-node';",
    resolveDir: dirname(pkgJson),
    loader: 'js',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  write: false,
  logLevel: 'error',
  // CommonJS dependencies inside an ES module call `require` for Node's built-ins.
  banner: {
    js: `${header}\nimport { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);`,
  },
});
writeFileSync(out, result.outputFiles[0].text);
