// The Envoy .proto files Turnpike emits or speaks (listed in ../protos.json), from the tree
// @grpc/grpc-js-xds ships; an include directory written `./dir` is this package's own (../proto).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const list = JSON.parse(readFileSync(join(packageRoot, 'protos.json'), 'utf8'));
const deps = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');

export const INCLUDE_DIRS = list.includeDirs.map((d) => join(d.startsWith('./') ? packageRoot : deps, d));
export const PROTO_FILES = list.files;
