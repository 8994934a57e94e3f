#!/usr/bin/env node
// Writes packages/engine/schemas/crd-schemas.json: the OpenAPI schemas (with their CEL rules) of every
// served version of the Gateway API CRDs (the experimental channel of the version e2e installs) and of
// our own CRDs, without descriptions. File input is checked against them as the API server would check
// a create. Run again when GATEWAY_API_VERSION changes; needs Go (it reads the module cache).
//   node packages/engine/scripts/generate-crd-schemas.mjs
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const harness = readFileSync(join(ROOT, 'e2e/harness/cluster.ts'), 'utf8');
const version = /GATEWAY_API_VERSION = '([^']+)'/.exec(harness)?.[1];
if (!version) throw new Error('GATEWAY_API_VERSION not found in e2e/harness/cluster.ts');

const download = execFileSync('go', ['mod', 'download', '-json', `sigs.k8s.io/gateway-api@${version}`], {
  encoding: 'utf8',
  cwd: join(ROOT, 'e2e/kube'),
  // gateway-api v1.7's go.mod needs Go >= 1.27: a pinned toolchain, not whatever `go` is on PATH.
  env: { ...process.env, GOTOOLCHAIN: 'go1.27.3', GOFLAGS: '-mod=mod' },
});
const upstream = join(JSON.parse(download).Dir, 'config/crd/experimental');
const files = [
  ...readdirSync(upstream)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(upstream, f)),
  join(ROOT, 'deploy/crds/turnpike.dev_proxyconfigs.yaml'),
  join(ROOT, 'deploy/crds/turnpike.dev_plugininstallations.yaml'),
  join(ROOT, 'deploy/crds/turnpike.dev_proxyreports.yaml'),
];

// Descriptions are for people; the checks need only the rest.
const strip = (node) => {
  if (Array.isArray(node)) return node.map(strip);
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'description') continue;
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, strip(s)])) : strip(v);
  }
  return out;
};

const kinds = {};
for (const file of files.sort()) {
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const crd = doc.toJS();
    if (crd?.kind !== 'CustomResourceDefinition') continue;
    const { group, names, scope, versions } = crd.spec;
    kinds[`${group}/${names.kind}`] = {
      scope,
      versions: Object.fromEntries(
        versions.filter((v) => v.served).map((v) => [v.name, strip(v.schema.openAPIV3Schema)]),
      ),
    };
  }
}
const out = {
  source: `sigs.k8s.io/gateway-api ${version} config/crd/experimental (Apache-2.0) and deploy/crds`,
  kinds,
};
writeFileSync(join(ROOT, 'packages/engine/schemas/crd-schemas.json'), JSON.stringify(out) + '\n');
console.log(`${Object.keys(kinds).length} kinds from ${files.length} files`);
