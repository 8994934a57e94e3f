#!/usr/bin/env node
// Bundles the turnpike command (dist/cli.js, built from src/cli.ts, and everything it imports) into
// one module, dist/main.js: the file users and tests run. Unbundled, a start opens about 970 files
// (rxjs alone is 223, then yaml, grpc-js, @peculiar's ASN.1, protobufjs, prom-client's OpenTelemetry
// API), and Node's loaders resolve, read and wrap each one: `turnpike run --help` took 1.09 s, and
// takes 0.63 s bundled. Only the module layout changes: the code is ours and the lockfile's. The
// build runs this after tsc, and so does the test runner; it does nothing when the bundle is newer
// than every module it is made of.
//
// Our modules find files beside themselves through `import.meta.url` (the CRD schemas, Envoy's
// protos, the read worker, the client-node bundle, the console's assets). In the bundle each such
// use is replaced by the URL the module would have had: found at run time through its package's
// entry point, so the bundle works in the workspace and in a `pnpm deploy` tree alike. A module
// loaded at run time by URL (a worker, the client-node bundle, CEL) is loaded as before.
// esbuild-wasm: esbuild compiled to WebAssembly, no native binary.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const cliDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = join(cliDir, '..');
const entry = join(cliDir, 'dist', 'cli.js');
const out = join(cliDir, 'dist', 'main.js');
const posixDirname = posix.dirname;

/** The nearest package.json at or above `dir`, with the directory it is in. */
function packageOf(dir) {
  for (let d = dir; ; d = dirname(d)) {
    try {
      const pkg = JSON.parse(readFileSync(join(d, 'package.json'), 'utf8'));
      if (pkg.name) return { dir: d, pkg };
    } catch {
      if (dirname(d) === d) throw new Error(`bundle-cli: no package.json above ${dir}`);
    }
  }
}

const workspaceNames = readdirSync(packagesDir)
  .filter((d) => existsSync(join(packagesDir, d, 'package.json')))
  .map((d) => JSON.parse(readFileSync(join(packagesDir, d, 'package.json'), 'utf8')).name)
  .filter((name) => name !== '@turnpike/cli');

/**
 * The expression that stands for `import.meta.url` in a module of ours: a module of the CLI itself is
 * beside the bundle; one of another workspace package is found through that package's entry point.
 */
function ownModuleUrl(file) {
  const rel = relative(packagesDir, file);
  if (rel.startsWith('..') || rel.split(sep).includes('node_modules')) return undefined;
  const { dir, pkg } = packageOf(dirname(file));
  if (pkg.name === '@turnpike/cli') {
    return `new URL(${JSON.stringify(`./${relative(dirname(out), file).split(sep).join('/')}`)}, import.meta.url).href`;
  }
  const main = join(dir, pkg.exports['.'].default);
  const fromMain = `./${relative(dirname(main), file).split(sep).join('/')}`;
  return `__turnpikeModuleUrl(${JSON.stringify(pkg.name)}, ${JSON.stringify(fromMain)})`;
}

/**
 * What stands for `__dirname` and `__filename` in a bundled CommonJS module of a dependency: its own
 * directory, found at run time through its package (grpc-js loads protos beside itself for channelz
 * and ORCA, pino its transport workers; none of which the controller uses today).
 */
function dependencyPaths(file) {
  const { dir, pkg } = packageOf(dirname(file));
  const inPackage = relative(dir, file).split(sep).join('/');
  const at = (path) => `__bundledPath(${JSON.stringify(pkg.name)}, ${JSON.stringify(path)})`;
  return { dirname: at(posixDirname(inPackage)), filename: at(inPackage) };
}

const moduleUrls = {
  name: 'module-urls',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?js$/ }, async (args) => {
      const code = readFileSync(args.path, 'utf8');
      const own = code.includes('import.meta.url') ? ownModuleUrl(args.path) : undefined;
      if (own) return { contents: code.replaceAll('import.meta.url', own), loader: 'js' };
      if (!args.path.split(sep).includes('node_modules')) return undefined;
      let contents = code;
      if (/\b__(dirname|filename)\b/.test(code)) {
        const paths = dependencyPaths(args.path);
        contents = code.replace(/\b__dirname\b/g, () => paths.dirname).replace(/\b__filename\b/g, () => paths.filename);
      }
      return { contents: await keepingNames(contents, args.path), loader: 'js' };
    });
  },
};

/**
 * A dependency's functions and classes keep the names they were written with, though the bundle
 * renames those that collide: some read them (asn1js compares `constructor.name` to "Sequence"; pino
 * logs an error's class name). Done per dependency module rather than with esbuild's `keepNames` for
 * the whole bundle, which wraps every named closure our own hot loops make in a call to
 * `Object.defineProperty` (0.5 s of the main thread's 7 s to the first configuration of a 10k-route
 * directory). Our own code never tells classes apart by name (errors.ts uses instanceof).
 */
async function keepingNames(code, path) {
  return (await esbuild.transform(code, { keepNames: true, loader: 'js', sourcefile: path, logLevel: 'error' })).code;
}

const banner = `// The turnpike command in one module, bundled by packages/cli/scripts/bundle-cli.mjs from dist/cli.js.
import { createRequire as __bundleRequire } from 'node:module';
import { dirname as __bundleDirname, join as __bundleJoin } from 'node:path';
import { pathToFileURL as __bundlePathToUrl } from 'node:url';
const require = __bundleRequire(import.meta.url);
const __turnpikeMains = new Map();
function __turnpikeModuleUrl(pkg, fromMain) {
  let main = __turnpikeMains.get(pkg);
  if (main === undefined) __turnpikeMains.set(pkg, (main = __bundlePathToUrl(require.resolve(pkg))));
  return new URL(fromMain, main).href;
}
const __bundledPackageDirs = new Map();
function __bundledPath(pkg, path) {
  let dir = __bundledPackageDirs.get(pkg);
  if (dir === undefined) {
    const from = [require, ...${JSON.stringify(workspaceNames)}.map((w) => __bundleRequire(require.resolve(w)))];
    for (const r of from) {
      try {
        dir = __bundleDirname(r.resolve(pkg + '/package.json'));
        break;
      } catch {}
    }
    if (dir === undefined) throw new Error('the bundled ' + pkg + ' reads files beside itself, and ' + pkg + ' is not installed beside the bundle');
    __bundledPackageDirs.set(pkg, dir);
  }
  return __bundleJoin(dir, path);
}`;

/** The newest modification time among the workspace's built modules, the lockfile and this script. */
function newestInput() {
  // This script too: a change to how the bundle is made makes it again.
  let newest = Math.max(
    statSync(join(packagesDir, '..', 'pnpm-lock.yaml')).mtimeMs,
    statSync(fileURLToPath(import.meta.url)).mtimeMs,
  );
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path !== out && /\.(js|json)$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const d of readdirSync(packagesDir))
    if (existsSync(join(packagesDir, d, 'dist'))) walk(join(packagesDir, d, 'dist'));
  return newest;
}

if (!existsSync(entry)) throw new Error(`bundle-cli: ${entry} is missing: build with tsc first`);
if (existsSync(out) && statSync(out).mtimeMs > newestInput()) process.exit(0);

const esbuild = createRequire(import.meta.url)('esbuild-wasm');
const result = await esbuild.build({
  entryPoints: [entry],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  write: false,
  logLevel: 'error',
  // Loaded only where the build's own client-node bundle is missing: not worth 826 modules here.
  external: ['@kubernetes/client-node'],
  plugins: [moduleUrls],
  banner: { js: banner },
});
writeFileSync(out, result.outputFiles[0].text);
