// The fast YAML path (js-yaml) and the careful one (`yaml`, with positions) must read the same
// objects; errors must still name file, line and column.
import { describe, expect, it } from '@jest/globals';
import { createRequire } from 'node:module';
import { ManifestError, parseManifests } from '../src/manifests.js';

const require = createRequire(import.meta.url);
const YAML = require('yaml') as typeof import('yaml');

const TRICKY = `apiVersion: v1
kind: ConfigMap
metadata:
  name: tricky
  creationTimestamp: 2026-01-01T00:00:00Z
data:
  yes: yes
  off: off
  octal: 0755
  hex: 0x1F
  float: 1.50
  tilde: ~
  empty:
  quoted: "0755"
  folded: >
    two
    lines
  literal: |
    keep
      indent
---
# a comment only
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Service, metadata: {name: a, namespace: x}, spec: {ports: [{port: 80}]}}
`;

describe('manifest parsing', () => {
  it('the fast path reads what the YAML 1.2 core parser reads (no timestamps, no YAML 1.1 booleans)', () => {
    const careful = YAML.parseAllDocuments(TRICKY)
      .map((d) => d.toJS())
      .filter((v) => v !== null);
    const expected = [careful[0], ...(careful[1] as { items: unknown[] }).items];
    expect(parseManifests(TRICKY, 'tricky.yaml')).toEqual(expected);
    expect(
      (parseManifests(TRICKY, 'tricky.yaml')[0] as unknown as { data: Record<string, unknown> }).data,
    ).toMatchObject({ yes: 'yes', octal: 755, hex: 31, tilde: null });
  });

  it('anchors and aliases go the careful way and resolve', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {k: v}\nother: *d\n';
    expect((parseManifests(text, 'a.yaml')[0] as unknown as { other: unknown }).other).toEqual({ k: 'v' });
  });

  it('a syntax error names file:line:column, an object without a name names the document line', () => {
    expect(() => parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [a\n', 'bad.yaml')).toThrow(
      /^bad\.yaml:\d+:\d+: YAML syntax error/,
    );
    expect(() =>
      parseManifests(
        'apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\napiVersion: v1\nkind: B\nmetadata: {}\n',
        'b.yaml',
      ),
    ).toThrow(new ManifestError('b.yaml:5: B has no "metadata.name"'));
  });
});
