// Envoy's protos loaded into one protobufjs Root (the tree @grpc/grpc-js-xds ships), for
// encoding resources and for reading their validation rules. An include directory of protos.json
// written `./dir` is this package's own (proto/: the OTLP messages that tree lacks); the others are
// the tree's.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import { encodeJsonMessage } from './message-encoder.js';

const require = createRequire(import.meta.url);

const list = require('../protos.json') as { includeDirs: string[]; files: string[] };

export const PROTO_DEPS = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
const PACKAGE_ROOT = dirname(require.resolve('../protos.json'));
export const INCLUDE_DIRS = list.includeDirs.map((d) => join(d.startsWith('./') ? PACKAGE_ROOT : PROTO_DEPS, d));
export const PROTO_FILES = list.files;

let root: protobuf.Root | undefined;

export function envoyRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  // protobufjs ships google/protobuf/descriptor.proto (the validate rules import it).
  const dirs = [...INCLUDE_DIRS, dirname(require.resolve('protobufjs/package.json'))];
  r.resolvePath = (_origin, target) => {
    for (const dir of dirs) {
      const p = join(dir, target);
      if (existsSync(p)) return p;
    }
    return target;
  };
  r.loadSync(PROTO_FILES, { keepCase: true });
  r.resolveAll();
  root = r;
  return r;
}

/**
 * Loads Envoy's protos ahead of the first push (a quarter of a second), at the next turn of the event
 * loop: a controller calls it once its sources are started, so it runs while they list or read.
 */
export function loadEnvoyProtosSoon(): void {
  if (!root) setImmediate(() => envoyRoot());
}

const types = new Map<string, protobuf.Type>();

/** A message type by full name, looked up once. */
export function messageType(name: string): protobuf.Type {
  let t = types.get(name);
  if (!t) types.set(name, (t = envoyRoot().lookupType(name)));
  return t;
}

/** Encodes a JSON-shaped message (Any as `{'@type': url, ...fields}`) into protobuf bytes. */
export function encodeMessage(name: string, value: object): Buffer {
  return encodeJsonMessage(messageType(name), value);
}

export function decodeMessage(name: string, bytes: Uint8Array): Record<string, unknown> {
  const t = messageType(name);
  return t.toObject(t.decode(bytes), {
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
    json: true,
  }) as Record<string, unknown>;
}
