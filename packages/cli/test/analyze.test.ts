// `turnpike analyze`: a CI gate. Exit 1 and one line per problem (object, where, condition,
// message) when the statuses would report any; exit 0 with a count when there is none.
import { symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { conditionText, isTrouble } from '../src/status-lines.js';
import { MANIFEST, ROUTE, tmp, turnpike, write } from './cli-helpers.js';

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), '../../translator/test/fixtures');

describe('turnpike analyze', () => {
  it('lists each problem with its object, parent and field, and exits 1', () => {
    const r = turnpike('analyze', '-f', `${fixtures}/backends/input.yaml`);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'HTTPRoute/apps/missing parent infra/gw: ResolvedRefs=False (BackendNotFound): spec.rules[0].backendRefs[1]: Service apps/nope not found',
    );
    expect(r.stdout).toContain('HTTPRoute/apps/cross-ns parent infra/gw: ResolvedRefs=False (RefNotPermitted)');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('4 problem(s) in 7 status(es)');
  });

  it('exits 0 on manifests without problems', () => {
    const dir = tmp();
    write(dir, 'ok.yaml', MANIFEST);
    const r = turnpike('analyze', '-f', dir);
    expect([r.code, r.stdout.trim().split('\n').at(-1)]).toEqual([
      0,
      expect.stringMatching(/^0 problem\(s\) in \d+ status\(es\)$/),
    ]);
  });

  it('reports listeners too, and backends without endpoints only when asked; -o json is machine-readable', () => {
    const plain = turnpike('analyze', '-f', `${fixtures}/route-conditions/input.yaml`, '-o', 'json');
    const found = (JSON.parse(plain.stdout) as { problems: { object: string; type: string }[] }).problems;
    expect(found.map((f) => `${f.object} ${f.type}`)).toEqual([
      'HTTPRoute/apps/first RouteRulesOverlap',
      'HTTPRoute/apps/second RouteRulesOverlap',
    ]);
    const withEndpoints = JSON.parse(
      turnpike('analyze', '-f', `${fixtures}/route-conditions/input.yaml`, '-o', 'json', '--endpoints').stdout,
    ) as { problems: { type: string }[] };
    expect(withEndpoints.problems.map((f) => f.type)).toContain('BackendsAvailable');
    const listeners = turnpike('analyze', '-f', `${fixtures}/listener-validation/input.yaml`, '--validate', 'ignore');
    expect(listeners.stdout).toContain('Gateway/infra/gw listener sctp: Accepted=False (UnsupportedProtocol)');
  });

  it('reports an object the API server would refuse as an error naming the file, the object and the field', () => {
    const r = turnpike('analyze', '-f', `${fixtures}/listener-validation/input.yaml`);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^error: \S+listener-validation\/input\.yaml: Gateway infra\/gw is invalid, as the API server would refuse it: spec\.listeners: hostname must not be specified for protocols \['TCP', 'UDP'\]/m,
    );
    expect(r.stdout).not.toContain('Gateway/infra/gw listener');
  });

  it("warns, with exit 3, about what is not ours to judge: an absent GatewayClass or parent, another controller's class", () => {
    const dir = tmp();
    write(dir, 'ok.yaml', MANIFEST);
    write(
      dir,
      'others.yaml',
      `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: theirs}
spec: {controllerName: example.com/another-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: elsewhere, namespace: infra}
spec: {gatewayClassName: theirs, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: typo, namespace: infra}
spec: {gatewayClassName: tpp, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: lost, namespace: apps}
spec:
  parentRefs: [{name: gw, namespace: infra}, {name: nowhere, namespace: infra}, {name: elsewhere, namespace: infra}]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
`,
    );
    const r = turnpike('analyze', '-f', dir);
    expect(r.code).toBe(3);
    const warnings = r.stdout.split('\n').filter((l) => l.startsWith('warning: '));
    expect(warnings).toEqual([
      'warning: Gateway/infra/elsewhere spec.gatewayClassName: GatewayClass "theirs" belongs to controller example.com/another-controller: not judged here',
      'warning: Gateway/infra/typo spec.gatewayClassName: GatewayClass "tpp" is not in these manifests: no controller would serve this Gateway',
      'warning: HTTPRoute/apps/lost spec.parentRefs[1]: Gateway infra/nowhere is not in these manifests: the route attaches to nothing',
      'warning: HTTPRoute/apps/lost spec.parentRefs[2]: Gateway infra/elsewhere is of GatewayClass "theirs" (controller example.com/another-controller): not judged here',
    ]);
    expect(turnpike('analyze', '--help').stdout).toContain('3 only warnings about objects that are not ours to judge');
  });

  it('reports every backendRef that does not resolve, not only the first that ResolvedRefs names', () => {
    const dir = tmp();
    write(dir, 'ok.yaml', MANIFEST);
    write(
      dir,
      'route.yaml',
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: two, namespace: apps}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - backendRefs: [{name: nope, port: 8080}]
  - backendRefs: [{name: web, port: 8080}, {name: gone, port: 8080, weight: 3}]
`,
    );
    const r = turnpike('analyze', '-f', dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'HTTPRoute/apps/two parent infra/gw: ResolvedRefs=False (BackendNotFound): spec.rules[0].backendRefs[0]: Service apps/nope not found',
    );
    expect(r.stdout).toContain(
      'HTTPRoute/apps/two spec.rules[1].backendRefs[1]: BackendRef=False (BackendNotFound): Service apps/gone not found (its share of the rule, weight 3, answers 500)',
    );
  });

  it('a dangling link and a second copy of an object are skipped, as run --dir skips them, and count as problems', () => {
    const dir = tmp();
    write(dir, 'a.yaml', MANIFEST);
    write(dir, 'b.yaml', MANIFEST.split('---')[0]!);
    symlinkSync(join(dir, 'missing.yaml'), join(dir, 'c.yaml'));
    const r = turnpike('analyze', '-f', dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('GatewayClass//tp is defined twice (first in');
    expect(r.stdout).toMatch(/c\.yaml: cannot read \(ENOENT, a dangling link\?\); skipped/);
    // translate goes on with what it could read, and says what it skipped.
    const t = turnpike('translate', '-f', dir, '-o', 'json');
    expect(t.code).toBe(0);
    expect(t.stderr).toContain('turnpike: warning: ');
    expect(JSON.parse(t.stdout).infraIR.gateways['infra/gw']).toBeDefined();
  });

  it('a policy of a kind turnpike does not read that targets what it serves: a warning naming both, exit 1 (skipped), and explain says it', () => {
    const dir = tmp();
    write(dir, 'ok.yaml', MANIFEST + '---\n' + ROUTE('web'));
    write(
      dir,
      'policies.yaml',
      `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: basic-auth, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  basicAuth: {users: {name: users}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: limits, namespace: apps}
spec:
  targetRef: {group: "", kind: Service, name: web}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: elsewhere, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: not-here}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: apps}
spec: {}
`,
    );
    const r = turnpike('analyze', '-f', dir);
    expect(r.code).toBe(1);
    const warnings = r.stdout.split('\n').filter((l) => l.startsWith('warning: ') && !l.includes('ignoring kind'));
    expect(warnings).toEqual([
      'warning: SecurityPolicy/apps/basic-auth spec.targetRefs[0]: targets HTTPRoute apps/web, which turnpike serves; turnpike does not read gateway.envoyproxy.io/SecurityPolicy, so it serves that HTTPRoute without this policy (whatever it asks: authentication, limits, rewrites)',
      'warning: XBackendTrafficPolicy/apps/limits spec.targetRef: targets Service apps/web, a backend of routes turnpike serves; turnpike does not read gateway.networking.x-k8s.io/XBackendTrafficPolicy, so it serves that Service without this policy (whatever it asks: authentication, limits, rewrites)',
    ]);
    expect(r.stdout.trim().split('\n').at(-1)).toContain('2 target(s) served without a policy turnpike does not read');
    const json = JSON.parse(turnpike('analyze', '-f', dir, '-o', 'json').stdout) as {
      ignoredPolicies: { object: string; target: string }[];
    };
    expect(json.ignoredPolicies.map((p) => `${p.object} -> ${p.target}`)).toEqual([
      'SecurityPolicy/apps/basic-auth -> HTTPRoute/apps/web',
      'XBackendTrafficPolicy/apps/limits -> Service/apps/web',
    ]);
    const e = turnpike('explain', 'httproute/apps/web', '-f', dir);
    expect(e.stdout).toContain(
      'warning: SecurityPolicy/apps/basic-auth spec.targetRefs[0]: targets HTTPRoute apps/web, which turnpike serves',
    );
    // Without those policies (a Deployment is only a kind not read): nothing to report.
    const clean = tmp();
    write(clean, 'ok.yaml', MANIFEST + '---\n' + ROUTE('web'));
    write(
      clean,
      'app.yaml',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app, namespace: apps}\nspec: {}\n',
    );
    expect(turnpike('analyze', '-f', clean).code).toBe(0);
    expect(turnpike('analyze', '--help').stdout).toContain(
      'a policy of a kind turnpike does not read that targets an object it serves',
    );
  });

  it('a BackendTLSPolicy whose sectionName names no port of its Service is a problem on its ancestor', () => {
    const dir = tmp();
    write(dir, 'ok.yaml', MANIFEST + '---\n' + ROUTE('web'));
    write(
      dir,
      'policy.yaml',
      `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls, namespace: apps}
spec:
  targetRefs: [{group: "", kind: Service, name: web, sectionName: https}]
  validation: {hostname: web.example.com, wellKnownCACertificates: System}
`,
    );
    const r = turnpike('analyze', '-f', dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'BackendTLSPolicy/apps/tls ancestor infra/gw: Accepted=False (TargetNotFound): spec.targetRefs[0].sectionName: Service apps/web has no port named "https" (its ports: http)',
    );
    const e = turnpike('explain', 'backendtlspolicy/apps/tls', '-f', dir);
    expect(e.stdout).toContain('targetRefs[0] Service apps/web sectionName=https: NOT attached');
  });

  it('one notion of trouble for run and analyze: True is trouble for RouteRulesOverlap and ConfigRejected, False for the others', () => {
    const c = (type: string, status: string) => ({ type, status, reason: 'R', message: 'why', lastTransitionTime: '' });
    expect(conditionText(c('RouteRulesOverlap', 'True'), true)).toBe('RouteRulesOverlap=True(R): why');
    expect(conditionText(c('turnpike.dev/ConfigRejected', 'True'), true)).toBe(
      'turnpike.dev/ConfigRejected=True(R): why',
    );
    expect(conditionText(c('BackendsAvailable', 'False'), true)).toBe('BackendsAvailable=False(R): why');
    expect(isTrouble(c('Conflicted', 'False'))).toBe(false);
    expect(isTrouble(c('Accepted', 'True'))).toBe(false);
  });
});
