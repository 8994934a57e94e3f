// File input is checked "as the API server would": this suite holds us to it. Every Gateway API and
// Turnpike object of the project's translator fixtures and quick start, and a table of objects that
// probe each kind of check (bounds, types, patterns, enums, defaults, oneOf, list keys, unknown
// fields, CEL rules, served versions, names), is created with dry run on a real kube-apiserver with
// the CRDs installed. Our verdict must be the API server's for every one, and each field we name
// must be one the API server names.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { normalizeNamespace, parseManifests, validateManifest } from '@turnpike/engine';
import { Cluster, ROOT } from '../harness/cluster.js';
import { ns } from '../harness/fixtures.js';

const GW = 'gateway.networking.k8s.io/v1';
type Spec = Record<string, unknown>;
const gateway = (name: string, listeners: unknown[], extra: Spec = {}): KubeObject =>
  ({
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name, namespace: 'probe' },
    spec: { gatewayClassName: 'tp', listeners, ...extra },
  }) as KubeObject;
const http = (extra: Spec = {}) => ({ name: 'http', port: 80, protocol: 'HTTP', ...extra });
const route = (name: string, spec: Spec, kind = 'HTTPRoute', apiVersion = GW): KubeObject =>
  ({
    apiVersion,
    kind,
    metadata: { name, namespace: 'probe' },
    spec: { parentRefs: [{ name: 'gw' }], ...spec },
  }) as KubeObject;
const extensionFilter = { type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Auth', name: 'a' } };
const trustBundle = { group: 'certificates.k8s.io', kind: 'ClusterTrustBundle', name: 'roots' };
const rewrite = { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' } } };

const PROBES: KubeObject[] = [
  gateway('ok', [http()]),
  gateway('port-high', [http({ port: 70000 })]),
  gateway('port-zero', [http({ port: 0 })]),
  gateway('port-string', [http({ port: 'eighty' })]),
  gateway('hostname-case', [http({ hostname: 'Shop.example.com' })]),
  gateway('hostname-wild-ok', [http({ hostname: '*.example.com' })]),
  gateway('hostname-star', [http({ hostname: '*' })]),
  gateway('no-protocol', [{ name: 'http', port: 80 }]),
  gateway('unknown-field', [http({ hostnames: ['a.example.com'] })]),
  gateway('dup-name', [http(), http({ port: 8080 })]),
  gateway('dup-combination', [http(), http({ name: 'again' })]),
  gateway('tcp-hostname', [{ name: 'tcp', port: 9000, protocol: 'TCP', hostname: 'db.example.com' }]),
  gateway('tls-no-mode', [{ name: 'tls', port: 443, protocol: 'TLS' }]),
  gateway('https-terminate', [
    { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } },
  ]),
  gateway('address-default-type', [http()], { addresses: [{ value: '10.0.0.1' }] }),
  gateway('address-bad-ip', [http()], { addresses: [{ value: '10.0.0.300' }] }),
  gateway('address-hostname', [http()], { addresses: [{ type: 'Hostname', value: 'lb.example.com' }] }),
  gateway('address-dup', [http()], { addresses: [{ value: '10.0.0.1' }, { value: '10.0.0.1' }] }),
  gateway('no-listeners', []),
  // Gateway API v1.7.0: routability (format.dns1123Subdomain in CEL), listener filters, ClusterTrustBundle refs.
  gateway('routability-cluster', [http()], { addresses: [{ value: '10.0.0.1', routability: 'Cluster' }] }),
  gateway('routability-prefixed', [http()], { addresses: [{ value: '10.0.0.1', routability: 'example.com/vpc' }] }),
  gateway('routability-reserved', [http()], { addresses: [{ value: '10.0.0.1', routability: 'k8s.io/foo' }] }),
  gateway('routability-bad-domain', [http()], { addresses: [{ value: '10.0.0.1', routability: 'Bad_Domain/x' }] }),
  gateway('filters-http', [http({ filters: { requests: [extensionFilter] } })]),
  gateway('filters-tcp', [{ name: 'tcp', port: 9000, protocol: 'TCP', filters: { requests: [extensionFilter] } }]),
  gateway('ctb-namespaced', [http()], {
    tls: { frontend: { default: { validation: { caCertificateRefs: [{ ...trustBundle, namespace: 'probe' }] } } } },
  }),
  gateway('ctb-ok', [http()], { tls: { frontend: { default: { validation: { caCertificateRefs: [trustBundle] } } } } }),
  {
    apiVersion: GW,
    kind: 'ListenerSet',
    metadata: { name: 'ls-filters-tcp', namespace: 'probe' },
    spec: {
      parentRef: { name: 'gw' },
      listeners: [{ name: 'tcp', port: 9000, protocol: 'TCP', filters: { requests: [extensionFilter] } }],
    },
  } as KubeObject,
  route('retry-zero', { rules: [{ retry: { attempts: 0 } }] }),
  route('retry-negative', { rules: [{ retry: { attempts: -1 } }] }),
  route('session-cookie', { rules: [{ sessionPersistence: { type: 'Cookie', cookie: { name: 's' } } }] }),
  route('session-v1.6-shape', { rules: [{ sessionPersistence: { sessionName: 's', cookieConfig: {} } }] }),
  route('session-header-no-name', { rules: [{ sessionPersistence: { type: 'Header' } }] }),
  route('weight-negative', { rules: [{ backendRefs: [{ name: 'web', port: 80, weight: -5 }] }] }),
  route('weight-ok', { rules: [{ backendRefs: [{ name: 'web', port: 80, weight: 0 }] }] }),
  route('backend-no-port', { rules: [{ backendRefs: [{ name: 'web' }] }] }),
  route('hostname-mid-wildcard', { hostnames: ['shop.*.com'] }),
  route('redirect-666', { rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 666 } }] }] }),
  route('redirect-missing', { rules: [{ filters: [{ type: 'RequestRedirect' }] }] }),
  route('redirect-with-backends', {
    rules: [
      {
        filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 301 } }],
        backendRefs: [{ name: 'web', port: 80 }],
      },
    ],
  }),
  route('rewrite-one-prefix', {
    rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], filters: [rewrite] }],
  }),
  route('rewrite-two-matches', {
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/v1' } }, { path: { type: 'Exact', value: '/x' } }],
        filters: [rewrite],
      },
    ],
  }),
  route('header-filter-twice', {
    rules: [
      {
        filters: [
          { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'a', value: 'b' }] } },
          { type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'c', value: 'd' }] } },
        ],
      },
    ],
  }),
  route('header-name-colon', {
    rules: [
      { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'a:b', value: 'x' }] } }] },
    ],
  }),
  route('path-no-slash', { rules: [{ matches: [{ path: { type: 'PathPrefix', value: 'v1' } }] }] }),
  route('query-number', { rules: [{ matches: [{ queryParams: [{ name: 'q', value: 1234 }] }] }] }),
  route('timeouts', { rules: [{ timeouts: { request: '1s', backendRequest: '2s' } }] }),
  route('timeouts-bad', { rules: [{ timeouts: { request: '1s', backendRequest: '2x' } }] }),
  route('rule-names-dup', { rules: [{ name: 'a' }, { name: 'a' }] }),
  route('grpc-ok', { rules: [{ matches: [{ method: { service: 'foo.Bar', method: 'Get' } }] }] }, 'GRPCRoute'),
  route('grpc-no-service-or-method', { rules: [{ matches: [{ method: { type: 'Exact' } }] }] }, 'GRPCRoute'),
  route('tls-no-hostname', { rules: [{ backendRefs: [{ name: 'db', port: 443 }] }] }, 'TLSRoute'),
  route('tls-ok', { hostnames: ['db.example.com'], rules: [{ backendRefs: [{ name: 'db', port: 443 }] }] }, 'TLSRoute'),
  route(
    'tcp-two-rules',
    { rules: [{ backendRefs: [{ name: 'db', port: 5432 }] }, { backendRefs: [{ name: 'db', port: 5433 }] }] },
    'TCPRoute',
  ),
  route('grpc-old-version', { rules: [] }, 'GRPCRoute', 'gateway.networking.k8s.io/v1alpha2'),
  {
    apiVersion: 'gateway.networking.k8s.io/v1alpha2',
    kind: 'ReferenceGrant',
    metadata: { name: 'old-grant', namespace: 'probe' },
    spec: {
      from: [{ group: GW.split('/')[0], kind: 'HTTPRoute', namespace: 'apps' }],
      to: [{ group: '', kind: 'Service' }],
    },
  } as KubeObject,
  {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name: 'grant', namespace: 'probe' },
    spec: {
      from: [{ group: GW.split('/')[0], kind: 'HTTPRoute', namespace: 'apps' }],
      to: [{ group: '', kind: 'Service' }],
    },
  } as KubeObject,
  {
    apiVersion: GW,
    kind: 'BackendTLSPolicy',
    metadata: { name: 'btls-both', namespace: 'probe' },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: 'web' }],
      validation: {
        hostname: 'web.example.com',
        wellKnownCACertificates: 'System',
        caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
      },
    },
  } as KubeObject,
  {
    apiVersion: GW,
    kind: 'BackendTLSPolicy',
    metadata: { name: 'btls-ok', namespace: 'probe' },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: 'web' }],
      validation: { hostname: 'web.example.com', wellKnownCACertificates: 'System' },
    },
  } as KubeObject,
  {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'Bad_Class' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  } as KubeObject,
  { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'no-controller' }, spec: {} } as KubeObject,
  {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'ProxyConfig',
    metadata: { name: 'pc', namespace: 'probe' },
    spec: { replicas: -1 },
  } as KubeObject,
  {
    ...route('old-route', {}),
    metadata: { name: 'old-route', namespace: 'probe', creationTimestamp: '2025-07-12T20:47:53Z' },
  },
  {
    ...route('odd-time', {}),
    metadata: { name: 'odd-time', namespace: 'probe', creationTimestamp: '2025-07-12 20:47:53+00:00' },
  },
];

function fixtureObjects(): KubeObject[] {
  const dirs = join(ROOT, 'packages/translator/test/fixtures');
  const files = [
    // Each fixture is a directory with an input.yaml; other files there (feature lists) are not.
    ...readdirSync(dirs)
      .map((d) => join(dirs, d, 'input.yaml'))
      .filter((f) => existsSync(f)),
    ...['gateway.yaml', 'shop.yaml'].map((f) => join(ROOT, 'examples/quickstart', f)),
  ];
  return files.flatMap((f) => parseManifests(readFileSync(f, 'utf8'), f));
}

describe('schema parity with the API server', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start();
  }, 600_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it("our verdict on every probe and fixture object is the API server's, and the fields we name are its fields", async () => {
    const objects = [...PROBES, ...fixtureObjects()].filter(
      (o) => o.apiVersion.includes('gateway.networking.k8s.io') || o.apiVersion.startsWith('turnpike.dev/'),
    );
    for (const o of objects) normalizeNamespace(o, 'default');
    for (const n of new Set(objects.map((o) => o.metadata.namespace).filter((n): n is string => !!n)))
      await cluster.apply(ns(n));
    const disagreements: string[] = [];
    const unnamed: string[] = [];
    let refused = 0;
    for (const o of objects) {
      const ours = validateManifest(o);
      const theirs = await cluster.dryRunCreate(o);
      const who = `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
      if (theirs.accepted === ours.length > 0) {
        disagreements.push(
          `${who}: API server ${theirs.accepted ? 'accepts' : `refuses (${theirs.message})`}; we ${ours.length ? `refuse (${ours.map((e) => `${e.path}: ${e.message}`).join('; ')})` : 'accept'}`,
        );
      }
      if (!theirs.accepted) refused++;
      // Two refusals come before field validation and name no field: a version the CRD does not serve
      // (no endpoint: 404) and a timestamp that does not decode.
      const named = (path: string) =>
        theirs.message.includes(path) ||
        (path === 'apiVersion' && /404 page not found/.test(theirs.message)) ||
        (path === 'metadata.creationTimestamp' && /parsing time/.test(theirs.message));
      for (const e of ours)
        if (!named(e.path)) unnamed.push(`${who}: we name ${e.path}; the API server says ${theirs.message}`);
    }
    expect(disagreements).toEqual([]);
    expect(unnamed).toEqual([]);
    // The probes must exercise both verdicts in earnest.
    expect(refused).toBeGreaterThan(25);
    expect(objects.length - refused).toBeGreaterThan(25);
  }, 120_000);
});
