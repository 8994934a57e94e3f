// One header value in a contributor's manifest used to hang `analyze -f` and freeze `run --dir`: the
// CRD's pattern ran on a backtracking regex engine. Now (RE2) both refuse it at once, naming the file,
// the object and the field, and go on with the rest.
import { describe, expect, it } from '@jest/globals';
import { MANIFEST, start, tmp, turnpike, waitFor, write } from './cli-helpers.js';

const VALUE = `${'a'.repeat(40)} `;
const ROUTE = `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: tagged, namespace: apps}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        add:
        - {name: X-Tag, value: "${VALUE}"}
    backendRefs: [{name: web, port: 8080}]
`;
const REFUSAL =
  /\S+route\.yaml: HTTPRoute apps\/tagged is invalid, as the API server would refuse it: spec\.rules\[0\]\.filters\[0\]\.requestHeaderModifier\.add\[0\]\.value: "a{40} " does not match \^\[!-~\]\+\(\[\\t \]\?\[!-~\]\+\)\*\$/;

describe('a header value that stalls a backtracking regex engine', () => {
  it('analyze -f exits with the field named', () => {
    const r = turnpike('analyze', '-f', write(tmp(), 'route.yaml', MANIFEST + ROUTE));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(REFUSAL);
  });

  it('run --dir reports it and serves the others', async () => {
    const dir = tmp();
    write(dir, 'base.yaml', MANIFEST);
    write(dir, 'route.yaml', ROUTE);
    const run = start('run', '--dir', dir, '--no-xds', '--plugin-address', '127.0.0.1:0');
    try {
      await waitFor(() => run.output().includes('Gateway/infra/gw') && REFUSAL.test(run.errors()));
      expect(run.output()).not.toContain('HTTPRoute/apps/tagged');
    } finally {
      await run.stop();
    }
  }, 30_000);
});
