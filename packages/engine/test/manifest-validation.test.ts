// File input meets the API server's create-time checks: the Gateway API CRDs' OpenAPI schema and CEL
// rules, served versions and object names. Each refusal names the field; valid objects pass untouched.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, translate } from '@turnpike/translator';
import { loadManifests, parseManifests } from '../src/manifests.js';
import { readManifestFile } from '../src/sources/manifest-file.js';
import { crdSchemaFor, type CrdSchema } from '../src/schema/crd-schemas.js';
import { describeInvalidManifest, prepareManifestChecks, validateManifest } from '../src/schema/manifest-validation.js';
import { checkCelRules } from '../src/schema/cel-validation.js';

const GW = 'gateway.networking.k8s.io/v1';
const here = dirname(fileURLToPath(import.meta.url));

function gateway(listeners: unknown[], extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: { gatewayClassName: 'turnpike', listeners, ...extra },
  };
}

function route(spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name: 'r', namespace: 'apps' },
    spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], ...spec },
  };
}

const errorsOf = (o: KubeObject) => validateManifest(o).map((e) => `${e.path}: ${e.message}`);
const http = (extra: Record<string, unknown> = {}) => ({ name: 'http', port: 80, protocol: 'HTTP', ...extra });

describe('OpenAPI schema of the Gateway API CRDs', () => {
  it('a listener port out of range or not a number is refused at its field', () => {
    expect(errorsOf(gateway([http({ port: 70000 })]))).toEqual([
      'spec.listeners[0].port: 70000 is above the maximum 65535',
    ]);
    expect(errorsOf(gateway([http({ port: 'eighty' })]))).toEqual([
      'spec.listeners[0].port: must be an integer, not the string "eighty"',
    ]);
  });

  it('mixed-case and mid-wildcard hostnames are refused; a leading wildcard is fine', () => {
    expect(errorsOf(gateway([http({ hostname: 'Shop.example.com' })]))).toEqual([
      expect.stringMatching(/^spec\.listeners\[0\]\.hostname: "Shop\.example\.com" does not match /),
    ]);
    expect(errorsOf(route({ hostnames: ['shop.*.com'] }))).toEqual([
      expect.stringMatching(/^spec\.hostnames\[0\]: "shop\.\*\.com" does not match /),
    ]);
    expect(errorsOf(gateway([http({ hostname: '*.example.com' })]))).toEqual([]);
  });

  it('a negative backend weight is refused', () => {
    const r = route({ rules: [{ backendRefs: [{ name: 'web', port: 80, weight: -5 }] }] });
    expect(errorsOf(r)).toEqual(['spec.rules[0].backendRefs[0].weight: -5 is below the minimum 0']);
  });

  it('enums, required fields and unknown fields', () => {
    const redirect = route({
      rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 666 } }] }],
    });
    expect(errorsOf(redirect)).toEqual([
      'spec.rules[0].filters[0].requestRedirect.statusCode: 666 is not one of 301, 302, 303, 307, 308',
    ]);
    expect(errorsOf(gateway([{ name: 'http', port: 80 }]))).toEqual(['spec.listeners[0].protocol: is required']);
    // A typo is silently dropped by a lax reader; kubectl's strict validation names it.
    expect(errorsOf(gateway([http({ hostnames: ['a.example.com'] })]))).toEqual([
      'spec.listeners[0].hostnames: unknown field',
    ]);
  });

  it('list-map keys are unique (listener names)', () => {
    expect(errorsOf(gateway([http(), http({ port: 8080 })]))).toEqual([
      'spec.listeners[1]: duplicate name: the same as spec.listeners[0]',
    ]);
  });

  it('defaults apply before the checks: an address without a type is an IPAddress and must be one', () => {
    expect(errorsOf(gateway([http()], { addresses: [{ value: '10.0.0.300' }] }))).toEqual([
      'spec.addresses[0].value: "10.0.0.300" is not an IPv4 address or "10.0.0.300" is not an IPv6 address',
    ]);
    // oneOf: a Hostname address is the other allowed form.
    expect(
      errorsOf(
        gateway([http()], { addresses: [{ value: '10.0.0.1' }, { type: 'Hostname', value: 'lb.example.com' }] }),
      ),
    ).toEqual([]);
  });

  it('the object given is not changed (defaults are applied to a copy)', () => {
    const o = gateway([http()], { addresses: [{ value: '10.0.0.1' }] });
    const before = JSON.stringify(o);
    validateManifest(o);
    expect(JSON.stringify(o)).toBe(before);
  });
});

describe('CEL rules of the Gateway API CRDs', () => {
  it('port, protocol and hostname must be unique per listener', () => {
    const errors = errorsOf(gateway([http(), http({ name: 'again' })]));
    expect(errors).toEqual([
      'spec.listeners: Combination of port, protocol and hostname must be unique for each listener',
    ]);
  });

  it('a TCP listener may not have a hostname; a TLS listener needs a mode', () => {
    expect(errorsOf(gateway([{ name: 'tcp', port: 9000, protocol: 'TCP', hostname: 'db.example.com' }]))).toEqual([
      "spec.listeners: hostname must not be specified for protocols ['TCP', 'UDP']",
    ]);
    expect(errorsOf(gateway([{ name: 'tls', port: 443, protocol: 'TLS' }]))).toEqual([
      'spec.listeners: tls mode must be set for protocol TLS',
    ]);
  });

  it('rules reading an indexed field (has(self.matches[0].path)) are evaluated, as CEL allows', () => {
    const rewrite = {
      type: 'URLRewrite',
      urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' } },
    };
    const one = route({ rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], filters: [rewrite] }] });
    expect(errorsOf(one)).toEqual([]);
    const two = route({
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/v1' } }, { path: { type: 'Exact', value: '/x' } }],
          filters: [rewrite],
        },
      ],
    });
    expect(errorsOf(two)).toEqual([
      'spec.rules[0]: When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
    ]);
  });

  it('values that never repeat stop being remembered, and their rules still run on every one', () => {
    // Each route's rule list is its own (a backend named after it): after a few hundred, the rule
    // list's verdicts are no longer kept; a list that breaks a rule must be refused all the same.
    const rules = (i: number, name: string) => [
      { name, backendRefs: [{ name: `app-${i}`, port: 8080 }] },
      { name: 'other', backendRefs: [{ name: `app-${i}`, port: 8081 }] },
    ];
    for (let i = 0; i < 400; i++) expect(errorsOf(route({ rules: rules(i, 'main') }))).toEqual([]);
    expect(errorsOf(route({ rules: rules(400, 'other') })).join('\n')).toMatch(/^spec\.rules: .*unique/i);
    // A value seen before still gets its verdict (remembered or not) with the path of where it is now.
    expect(errorsOf(route({ rules: rules(400, 'other') })).join('\n')).toMatch(/^spec\.rules: .*unique/i);
  });

  it('a filter type must come with its configuration', () => {
    expect(errorsOf(route({ rules: [{ filters: [{ type: 'RequestRedirect' }] }] }))).toEqual([
      'spec.rules[0].filters[0]: filter.requestRedirect must be specified for RequestRedirect filter.type',
    ]);
  });

  it('transition rules (oldSelf) do not apply on create', () => {
    const schema: CrdSchema = {
      type: 'string',
      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'immutable' }],
    };
    expect(checkCelRules('x', schema, 'spec.x')).toEqual([]);
  });

  it('a rule that cannot be evaluated counts as failed, with the reason', () => {
    const schema: CrdSchema = {
      type: 'object',
      'x-kubernetes-validations': [{ rule: 'self.missing == 1', message: 'needs missing' }],
    };
    expect(checkCelRules({}, schema, 'spec')).toEqual([
      { path: 'spec', message: expect.stringMatching(/^needs missing \(the rule could not be evaluated: .+\)$/) },
    ]);
  });

  it('the checks can be made ready ahead: every distinct rule of every schema is compiled once', async () => {
    // 93 distinct expressions in the schemas generated today (v1.7.0); more as CRDs grow.
    let rules = 0;
    await new Promise<void>((done) => (rules = prepareManifestChecks(done).rules));
    expect(rules).toBeGreaterThan(80);
    expect(errorsOf(gateway([http({ port: 70000 })]))).toEqual([
      'spec.listeners[0].port: 70000 is above the maximum 65535',
    ]);
  });

  it('every rule in the schemas we carry compiles', () => {
    const rules: { rule: string }[] = [];
    const collect = (node: unknown) => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach(collect);
      const s = node as CrdSchema & Record<string, unknown>;
      rules.push(...(s['x-kubernetes-validations'] ?? []));
      for (const [k, v] of Object.entries(s))
        if (k !== 'x-kubernetes-validations' && k !== 'default' && k !== 'enum') collect(v);
    };
    for (const [version, kind] of [
      ['v1', 'Gateway'],
      ['v1', 'HTTPRoute'],
      ['v1', 'GRPCRoute'],
      ['v1', 'ListenerSet'],
      ['v1', 'BackendTLSPolicy'],
      ['v1', 'TLSRoute'],
    ]) {
      const found = crdSchemaFor(`gateway.networking.k8s.io/${version}`, kind!);
      collect(found?.found ? found.schema : undefined);
    }
    expect(rules.length).toBeGreaterThan(150);
    const broken = rules.filter((r) =>
      checkCelRules(null, { 'x-kubernetes-validations': [r] }, '').some((e) => e.message.startsWith('cannot check')),
    );
    expect(broken).toEqual([]);
  });
});

describe('Gateway API v1.7.0 fields', () => {
  const address = (routability: string) => gateway([http()], { addresses: [{ value: '10.0.0.1', routability }] });
  const ROUTABILITY =
    'spec.addresses[0].routability: Routability must be empty, Cluster, or an implementation-specific prefixed path; ' +
    'k8s.io and its subdomains are reserved';

  it('an address routability is Cluster, empty or a domain-prefixed path outside k8s.io (format.dns1123Subdomain)', () => {
    expect(errorsOf(address('Cluster'))).toEqual([]);
    expect(errorsOf(address(''))).toEqual([]);
    expect(errorsOf(address('example.com/private'))).toEqual([]);
    expect(errorsOf(address('k8s.io/foo'))).toEqual([ROUTABILITY]);
    expect(errorsOf(address('net.k8s.io/foo'))).toEqual([ROUTABILITY]);
    expect(errorsOf(address('Bad_Domain/foo'))).toEqual([ROUTABILITY]);
    expect(errorsOf(address('Internet'))).toEqual([ROUTABILITY]);
    // GEP-5093's examples: the conformance sentinel is admitted; every k8s.io subdomain is reserved.
    expect(errorsOf(address('testing.x-k8s.io/sentinel'))).toEqual([]);
    expect(errorsOf(address('example.k8s.io/value'))).toEqual([ROUTABILITY]);
    expect(errorsOf(address('gateway.networking.k8s.io/value'))).toEqual([ROUTABILITY]);
    expect(errorsOf(address('example.com/'))).toEqual([ROUTABILITY]);
  });

  it("listener filters only on a Gateway's HTTP and HTTPS listeners (v1.7.0's ListenerSet has no such rule)", () => {
    const filters = {
      requests: [{ type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Auth', name: 'a' } }],
    };
    expect(errorsOf(gateway([http({ filters })]))).toEqual([]);
    expect(errorsOf(gateway([{ name: 'tcp', port: 9000, protocol: 'TCP', filters }]))).toEqual([
      'spec.listeners[0]: filters may only be set when protocol is HTTP or HTTPS',
    ]);
    const listenerSet: KubeObject = {
      apiVersion: GW,
      kind: 'ListenerSet',
      metadata: { name: 'ls', namespace: 'apps' },
      spec: { parentRef: { name: 'gw' }, listeners: [{ name: 'tcp', port: 9000, protocol: 'TCP', filters }] },
    };
    // Upstream's ListenerSet CRD carries the field without the rule: the API server accepts it.
    expect(errorsOf(listenerSet)).toEqual([]);
  });

  it('a ClusterTrustBundle CA reference is cluster-scoped: no namespace', () => {
    const withCa = (ref: Record<string, unknown>) =>
      gateway([http()], { tls: { frontend: { default: { validation: { caCertificateRefs: [ref] } } } } });
    const bundle = { group: 'certificates.k8s.io', kind: 'ClusterTrustBundle', name: 'roots' };
    expect(errorsOf(withCa(bundle))).toEqual([]);
    expect(errorsOf(withCa({ ...bundle, namespace: 'infra' }))).toEqual([
      'spec.tls.frontend.default.validation.caCertificateRefs: ClusterTrustBundle references must not specify namespace',
    ]);
    expect(errorsOf(withCa({ group: '', kind: 'ConfigMap', name: 'roots', namespace: 'infra' }))).toEqual([]);
  });

  it('retry attempts: 0 (no retries) is allowed, a negative count is not', () => {
    const retry = (attempts: number) => route({ rules: [{ retry: { attempts } }] });
    expect(errorsOf(retry(0))).toEqual([]);
    expect(errorsOf(retry(-1))).toEqual(['spec.rules[0].retry.attempts: -1 is below the minimum 0']);
  });
});

describe('what else the API server checks on create', () => {
  it('an apiVersion the CRD does not serve is refused, naming the served ones', () => {
    const grant: KubeObject = {
      apiVersion: 'gateway.networking.k8s.io/v1alpha2',
      kind: 'ReferenceGrant',
      metadata: { name: 'g', namespace: 'apps' },
      spec: {},
    };
    expect(errorsOf(grant)).toEqual([
      'apiVersion: gateway.networking.k8s.io/v1alpha2 does not serve ReferenceGrant (served versions: v1, v1beta1)',
    ]);
  });

  it('names: DNS subdomains for most kinds, DNS-1035 labels for Services', () => {
    expect(errorsOf({ ...gateway([http()]), metadata: { name: 'My_Gateway', namespace: 'infra' } })).toEqual([
      expect.stringMatching(/^metadata\.name: "My_Gateway" is not a DNS-1123 subdomain/),
    ]);
    expect(errorsOf({ apiVersion: 'v1', kind: 'Service', metadata: { name: '1web', namespace: 'apps' } })).toEqual([
      expect.stringMatching(/^metadata\.name: "1web" is not a DNS-1035 label/),
    ]);
    expect(
      errorsOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web.config', namespace: 'apps' } }),
    ).toEqual([]);
  });

  it('the one-line description names the file, the object and each field', () => {
    const o = gateway([http({ port: 0 }), http({ name: 'b', hostname: 'A.com' })]);
    expect(describeInvalidManifest('gw.yaml', o, validateManifest(o))).toBe(
      'gw.yaml: Gateway infra/gw is invalid, as the API server would refuse it: spec.listeners[0].port: 0 is below the minimum 1; ' +
        'spec.listeners[1].hostname: "A.com" does not match ^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    );
  });

  it('the quick-start manifests are valid as they stand', () => {
    const dir = resolve(here, '../../../examples/quickstart');
    const objects = ['gateway.yaml', 'shop.yaml'].flatMap((f) => parseManifests(readFileSync(join(dir, f), 'utf8'), f));
    expect(objects.length).toBeGreaterThan(3);
    expect(objects.flatMap((o) => errorsOf({ ...o, metadata: { namespace: 'default', ...o.metadata } }))).toEqual([]);
  });
});

describe('what the API server gives an object on create', () => {
  it('every Namespace is labelled kubernetes.io/metadata.name with its name, over a value given, so a selector on it agrees with a cluster', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-ns-label-'));
    const file = join(dir, 'all.yaml');
    writeFileSync(
      file,
      `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Namespace
metadata: {name: other, labels: {team: a, kubernetes.io/metadata.name: shop}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tp}
spec: {controllerName: turnpike.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: tp
  listeners:
  - name: http
    port: 80
    protocol: HTTP
    allowedRoutes:
      namespaces: {from: Selector, selector: {matchLabels: {kubernetes.io/metadata.name: shop}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec: {parentRefs: [{name: gw, namespace: infra}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: other}
spec: {parentRefs: [{name: gw, namespace: infra}]}
`,
    );
    try {
      const labels = (objects: KubeObject[]) =>
        objects.filter((o) => o.kind === 'Namespace').map((o) => [o.metadata.name, o.metadata.labels]);
      const want = [
        ['shop', { 'kubernetes.io/metadata.name': 'shop' }],
        ['other', { team: 'a', 'kubernetes.io/metadata.name': 'other' }],
      ];
      const loaded = loadManifests([file]);
      expect(labels(loaded.objects)).toEqual(want);
      // The directory source of run --dir reads a file the same way.
      const read = readManifestFile(file, { defaultNamespace: 'default', validation: 'strict' });
      expect('objects' in read && labels(read.objects.map((o) => o.object))).toEqual(want);
      // allowedRoutes "Selector: Routes in namespaces selected by the selector may be used by this Gateway."
      const statuses = translate(snapshotFromObjects(loaded.objects)).statuses;
      const accepted = (ns: string) =>
        (
          statuses.get(`HTTPRoute/${ns}/web`) as { parents: { conditions: { type: string; reason: string }[] }[] }
        ).parents[0]!.conditions.find((c) => c.type === 'Accepted')!.reason;
      expect([accepted('shop'), accepted('other')]).toEqual(['Accepted', 'NotAllowedByListeners']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loading with validation', () => {
  const file = resolve(here, 'fixtures-invalid.yaml');
  it('strict leaves the refused object out and says why; warn keeps it; ignore does not check', () => {
    const strict = loadManifests([file]);
    expect(strict.objects.map((o) => o.metadata.name)).toEqual(['ok']);
    expect(strict.invalid).toEqual([
      expect.stringContaining(
        'fixtures-invalid.yaml: Gateway default/bad is invalid, as the API server would refuse it: spec.listeners[0].port: 70000 is above the maximum 65535',
      ),
    ]);
    const warn = loadManifests([file], { validation: 'warn' });
    expect([warn.objects.length, warn.invalid.length]).toEqual([2, 1]);
    const ignore = loadManifests([file], { validation: 'ignore' });
    expect([ignore.objects.length, ignore.invalid.length]).toEqual([2, 0]);
  });
});
