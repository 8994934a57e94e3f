// Nothing the API server admits makes Envoy refuse a resource: random Gateways (their listener filters
// naming fixed Lua and Wasm plugins too), routes, BackendTLSPolicies and XBackends shaped by the CRD
// schemas the project carries, kept only when the schema and CEL check (what the API server runs) admits
// them, are translated; every Envoy resource built from them must pass the field rules (PGV), Envoy's load
// rules, and encode.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { crdSchemaFor, validateManifest, type CrdSchema } from '@turnpike/engine';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import fc from 'fast-check';
import { re2ProgramSize } from '@turnpike/api';
import { encodeMessage, envoyLoadProblems, envoyResourcesFor, messageType, validateResources } from '../src/index.js';
import { endpointSlice, gatewayClass, referenceGrant, service, tlsSecret } from '../../translator/test/builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../../translator/test/tls-fixtures.js';
import { schemaArbitrary } from './schema-arbitrary.js';

const RUNS = Number(process.env.FC_RUNS ?? 250);
const GROUP = 'gateway.networking.k8s.io';

function specSchema(kind: string, version: string): CrdSchema {
  const lookup = crdSchemaFor(`${GROUP}/${version}`, kind);
  if (!lookup?.found) throw new Error(`no schema for ${kind} ${version}`);
  return lookup.schema.properties!.spec!;
}

type Json = Record<string, unknown>;

/** Built once per kind: an arbitrary of a whole schema is costly to build. */
const specArbitraries = new Map<string, fc.Arbitrary<unknown>>();
function specArbitrary(kind: string, version: string): fc.Arbitrary<unknown> {
  let a = specArbitraries.get(kind);
  if (!a) specArbitraries.set(kind, (a = schemaArbitrary(specSchema(kind, version))));
  return a;
}

/**
 * Points references where objects exist, so that most of them resolve: parents at the Gateway,
 * backends at the Service (its UDP port for UDPRoutes), certificates at the Secret. Everything
 * else stays as generated.
 */
function wire(value: unknown, kind: string): unknown {
  if (Array.isArray(value)) return value.map((v) => wire(v, kind));
  if (typeof value !== 'object' || value === null) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    if (k === 'backendRef' || k === 'backendRefs') {
      const point = (ref: Json) => ({
        ...ref,
        group: '',
        kind: 'Service',
        name: 'svc',
        port: kind === 'UDPRoute' ? 53 : 8080,
        // A Gateway's (a listener filter's ExternalAuth) reaches it through the ReferenceGrant below.
        namespace: kind === 'Gateway' ? 'apps' : undefined,
      });
      out[k] = Array.isArray(v) ? v.map((r) => point(wire(r, kind) as Json)) : point(wire(v, kind) as Json);
    } else if (k === 'parentRefs') {
      out[k] = (v as Json[]).map((p) => ({ sectionName: p.sectionName, port: p.port, name: 'gw', namespace: 'infra' }));
    } else if (k === 'certificateRefs') {
      out[k] = (v as Json[]).map(() => ({ name: 'cert' }));
    } else if (k === 'clientCertificateRef') {
      out[k] = { name: 'cert' };
    } else out[k] = wire(v, kind);
  }
  return JSON.parse(JSON.stringify(out));
}

/**
 * The cross-field rules of a listener that random fields rarely meet (TLS only on HTTPS and TLS,
 * no hostname on TCP and UDP, certificates when terminating), met, and a unique name: so that
 * most Gateways pass the API server's check and their listeners get programmed. The rest of each
 * listener stays random.
 */
function listenerShape(l: Json, i: number): Json {
  const out: Json = { ...l, name: `l${i}` };
  const protocol = l.protocol as string;
  const tls = (l.tls ?? {}) as Json;
  if (protocol === 'HTTPS') out.tls = { ...tls, mode: 'Terminate', certificateRefs: [{ name: 'cert' }] };
  else if (protocol === 'TLS')
    out.tls = tls.mode === 'Passthrough' ? { mode: 'Passthrough' } : { ...tls, certificateRefs: [{ name: 'cert' }] };
  else delete out.tls;
  if (protocol === 'TCP' || protocol === 'UDP') delete out.hostname;
  // Listener filters (GEP-5224): only on HTTP and HTTPS; an ExtensionRef (where one was generated) names
  // one of the fixed PluginInstallations (Lua or Wasm), the others are each an ExternalAuth with a protocol
  // and distinct header names (the generator knows neither enums nor sets); the rest of each stays random.
  const requests = ((l.filters as Json | undefined)?.requests ?? []) as Json[];
  const distinct = (c: unknown, key: string) => {
    const list = (c as Json | undefined)?.[key] as string[] | undefined;
    return list ? { ...(c as Json), [key]: [...new Set(list.map((h) => h.toLowerCase()))] } : c;
  };
  if (protocol !== 'HTTP' && protocol !== 'HTTPS') delete out.filters;
  else if (requests.length)
    out.filters = {
      requests: requests.map((f) => {
        const ref = f.extensionRef as Json | undefined;
        if (ref)
          return {
            type: 'ExtensionRef',
            extensionRef: {
              group: 'turnpike.dev',
              kind: 'PluginInstallation',
              name: String(ref.name).length % 2 ? 'lua-plugin' : 'wasm-plugin',
            },
          };
        const auth = (f.externalAuth ?? { backendRef: {} }) as Json;
        const http = distinct(distinct(auth.http, 'allowedHeaders'), 'allowedResponseHeaders');
        // The CRD's rules: protocol HTTP with http only, GRPC with grpc only.
        const payload = auth.http
          ? { protocol: 'HTTP', http, grpc: undefined }
          : { protocol: 'GRPC', grpc: distinct(auth.grpc, 'allowedHeaders'), http: undefined };
        return {
          type: 'ExternalAuth',
          externalAuth: { ...auth, ...payload },
        };
      }),
    };
  return out;
}

const object = (kind: string, version: string, name: string, namespace: string) =>
  specArbitrary(kind, version).map((spec): KubeObject => ({
    apiVersion: `${GROUP}/${version}`,
    kind,
    metadata: { name, namespace, generation: 1 },
    spec: wire(spec, kind) as KubeObject['spec'],
  }));

const ROUTE_KINDS = ['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute'];
const world = fc.record({
  gateway: object('Gateway', 'v1', 'gw', 'infra').map((g) => ({
    ...g,
    spec: {
      ...g.spec,
      gatewayClassName: 'turnpike',
      addresses: undefined,
      infrastructure: undefined,
      listeners: (g.spec.listeners as Json[]).map(listenerShape),
    },
  })),
  routes: fc.array(fc.oneof(...ROUTE_KINDS.map((kind) => object(kind, 'v1', `r-${kind.toLowerCase()}`, 'apps'))), {
    maxLength: 4,
  }),
  policy: fc.option(object('BackendTLSPolicy', 'v1', 'tls', 'apps'), { nil: undefined }),
});

/** The PluginInstallations listener filters name, fetched, and their content by sha256. */
const PLUGIN_CONTENT = new Map<string, Buffer>([
  ['a'.repeat(64), Buffer.from('function envoy_on_request(h) h:headers():add("x-tag", "1") end\n')],
  ['b'.repeat(64), Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00])],
]);
const plugins: KubeObject[] = (
  [
    ['lua-plugin', 'lua', 'a'.repeat(64)],
    ['wasm-plugin', 'wasm', 'b'.repeat(64)],
  ] as const
).flatMap(([name, type, sha256]) => [
  {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'PluginInstallation',
    metadata: { name, namespace: 'infra', generation: 1 },
    spec: { image: `registry.example.com/team/${name}:v1`, type },
  },
  {
    apiVersion: 'turnpike.dev/internal',
    kind: 'PluginFetch',
    metadata: { name, namespace: 'infra' },
    status: {
      observedGeneration: 1,
      image: `registry.example.com/team/${name}:v1`,
      fetched: true,
      reason: 'Fetched',
      message: 'Fetched',
      digest: 'sha256:1234',
      sha256,
      size: PLUGIN_CONTENT.get(sha256)!.length,
      storage: { configMap: `turnpike-plugin-${name}` },
    },
  },
]);

const fixed: KubeObject[] = [
  ...plugins,
  gatewayClass(),
  service('svc', 'apps', [
    { name: 'http', port: 8080, protocol: 'TCP' },
    { name: 'dns', port: 53, protocol: 'UDP' },
  ]),
  endpointSlice('svc'),
  tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
  referenceGrant(
    'gateway-to-svc',
    'apps',
    [{ group: GROUP, kind: 'Gateway', namespace: 'infra' }],
    [{ group: '', kind: 'Service' }],
  ),
];

describe('admitted inputs', () => {
  it('nothing the schema and CEL rules admit makes Envoy refuse a resource', () => {
    const admitted = new Map<string, number>();
    let extAuthz = 0;
    let pluginFilters = 0;
    fc.assert(
      fc.property(world, ({ gateway, routes, policy }) => {
        const candidates = [gateway, ...routes, ...(policy ? [policy] : [])];
        const objects = candidates.filter((o) => validateManifest(o).length === 0);
        for (const o of objects) admitted.set(o.kind, (admitted.get(o.kind) ?? 0) + 1);
        const unique = new Map(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
        const result = new Translator().translate(snapshotFromObjects([...fixed, ...unique.values()]));
        const lookup = (kind: string, ns: string, name: string) =>
          fixed.find((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === name);
        for (const [key, ir] of result.xdsIR.gateways) {
          const res = envoyResourcesFor(ir, lookup, (sha) => PLUGIN_CONTENT.get(sha), result.xdsIR.endpoints);
          const problems = [
            ...validateResources(res),
            ...envoyLoadProblems(res).map((p) => `${p.resource} ${p.field}: ${p.message}`),
          ];
          expect({ key, problems }).toEqual({ key, problems: [] });
          // They encode, to the bytes protobufjs writes from the same object (message-encoder.ts).
          const encodes = (name: string, value: object) => {
            const t = messageType(name);
            const bytes = encodeMessage(name, value);
            expect(bytes.equals(Buffer.from(t.encode(t.fromObject(value)).finish()))).toBe(true);
          };
          for (const l of res.listeners) encodes('envoy.config.listener.v3.Listener', l);
          if (res.listeners.some((l) => JSON.stringify(l).includes('ext_authz.v3.ExtAuthz'))) extAuthz++;
          if (ir.ports.some((p) => p.listeners.some((l) => l.preRouting?.some((f) => f.type === 'ExtensionRef'))))
            pluginFilters++;
          for (const r of res.routes) encodes('envoy.config.route.v3.RouteConfiguration', r);
          for (const c of res.clusters) encodes('envoy.config.cluster.v3.Cluster', c);
        }
      }),
      { numRuns: Number(process.env.FC_ADMITTED_RUNS ?? Math.min(RUNS, 100)) },
    );
    // Not vacuous: the API server's check admitted Gateways and routes of every kind along the way.
    for (const kind of ['Gateway', ...ROUTE_KINDS]) expect([kind, (admitted.get(kind) ?? 0) > 0]).toEqual([kind, true]);
    // And listener filters (GEP-5224) served as ext_authz, and as plugins.
    expect(extAuthz).toBeGreaterThan(0);
    expect(pluginFilters).toBeGreaterThan(0);
  });
});

/**
 * XBackends (GEP-4894) as the schema and CEL rules admit them, shaped to what is served (an
 * ExternalHostname; a validated TLS mode names the system CA, a random caCertificateRef names nothing),
 * each reached by an HTTPRoute, a GRPCRoute and a TCPRoute: every resource built passes PGV and the
 * load rules, and what resolves is a LOGICAL_DNS cluster.
 */
const X_GROUP = 'gateway.networking.x-k8s.io';
function xbackendSpec(): fc.Arbitrary<unknown> {
  const lookup = crdSchemaFor(`${X_GROUP}/v1alpha1`, 'XBackend');
  if (!lookup?.found) throw new Error('no schema for XBackend');
  return schemaArbitrary(lookup.schema.properties!.spec!);
}

function xbackendShape(raw: unknown, type: 'ExternalHostname' | 'EndpointSelector' = 'ExternalHostname'): KubeObject {
  const spec: Json = { ...(raw as Json), type };
  if (type === 'ExternalHostname') {
    spec.externalHostname ??= { hostname: 'api.example.com' };
    delete spec.endpointSelector;
    delete spec.sessionPersistence;
  } else {
    // The Pods it selects, with their random labels and session persistence as the schema makes them.
    // Random label keys are seldom qualified names (the CRD's rule): one key, the random value kept.
    const value = Object.values(((spec.endpointSelector as Json | undefined)?.matchLabels ?? {}) as Json)[0];
    spec.endpointSelector = { matchLabels: { app: typeof value === 'string' ? value : 'web' } };
    delete spec.externalHostname;
    const sp = spec.sessionPersistence as Json | undefined;
    if (sp) {
      // The CRD's rules: cookie set exactly for type Cookie (the default), header exactly for Header, and
      // an absoluteTimeout for a Permanent cookie. An absoluteTimeout on a session cookie or a header is
      // refused (Envoy cannot bound those): kept only where it is served, so sessions are served often.
      const header = sp.type === 'Header';
      const cookie = (sp.cookie ?? {}) as Json;
      const permanent = !header && cookie.lifetimeType === 'Permanent';
      spec.sessionPersistence = {
        ...sp,
        cookie: header ? undefined : cookie,
        header: header ? (sp.header ?? { name: 'x-session' }) : undefined,
        absoluteTimeout: permanent ? (sp.absoluteTimeout ?? '1h') : undefined,
      };
    }
  }
  const tls = spec.tls as Json | undefined;
  if (tls) {
    const t: Json = { ...tls };
    if (t.mode === 'None') delete t.validation;
    else
      t.validation = {
        hostname: 'api.example.com',
        ...(t.validation as Json | undefined),
        wellKnownCACertificates: 'System',
        caCertificateRefs: undefined,
      };
    if (t.mode === 'ClientAndServer') t.clientCertificateRef = { name: 'cert' };
    else delete t.clientCertificateRef;
    spec.tls = t;
  }
  return JSON.parse(
    JSON.stringify({
      apiVersion: `${X_GROUP}/v1alpha1`,
      kind: 'XBackend',
      metadata: { name: 'xb', namespace: 'apps', generation: 1 },
      spec,
    }),
  ) as KubeObject;
}

describe('admitted XBackends', () => {
  it.each(['ExternalHostname', 'EndpointSelector'] as const)(
    'nothing an admitted %s XBackend becomes makes Envoy refuse a resource',
    (type) => {
      const gw: KubeObject = {
        apiVersion: `${GROUP}/v1`,
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'infra', generation: 1 },
        spec: {
          gatewayClassName: 'turnpike',
          listeners: [
            { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
            { name: 'tcp', port: 5432, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } },
          ],
        },
      };
      const ref = { group: X_GROUP, kind: 'XBackend', name: 'xb' };
      const routes = ['HTTPRoute', 'GRPCRoute', 'TCPRoute'].map((kind): KubeObject => ({
        apiVersion: `${GROUP}/v1`,
        kind,
        metadata: { name: kind.toLowerCase(), namespace: 'apps', generation: 1 },
        spec: {
          parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: kind === 'TCPRoute' ? 'tcp' : 'http' }],
          rules: [{ backendRefs: [ref] }],
        },
      }));
      const secrets = [tlsSecret('cert', 'apps', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY)];
      let admitted = 0;
      let dns = 0;
      let pods = 0;
      let sticky = 0;
      fc.assert(
        fc.property(xbackendSpec(), (raw) => {
          const xb = xbackendShape(raw, type);
          if (validateManifest(xb).length) return;
          admitted++;
          const labels = (xb.spec as { endpointSelector?: { matchLabels?: Record<string, string> } }).endpointSelector
            ?.matchLabels;
          // A ready Pod the selector selects (slimPod's form): its address is the cluster's endpoint.
          const pod: KubeObject[] = labels
            ? [
                {
                  apiVersion: 'v1',
                  kind: 'Pod',
                  metadata: { name: 'p', namespace: 'apps', labels },
                  status: {
                    phase: 'Running',
                    podIPs: [{ ip: '10.4.0.1' }],
                    conditions: [{ type: 'Ready', status: 'True' }],
                  },
                },
              ]
            : [];
          const all = [gatewayClass(), gw, ...routes, ...secrets, xb, ...pod];
          const result = new Translator().translate(snapshotFromObjects(all));
          const lookup = (kind: string, ns: string, name: string) =>
            all.find((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === name);
          const res = envoyResourcesFor(
            result.xdsIR.gateways.get('infra/gw')!,
            lookup,
            undefined,
            result.xdsIR.endpoints,
          );
          const problems = [
            ...validateResources(res),
            ...envoyLoadProblems(res).map((p) => `${p.resource} ${p.field}: ${p.message}`),
          ];
          expect({ spec: xb.spec, problems }).toEqual({ spec: xb.spec, problems: [] });
          if (res.clusters.some((c) => c.type === 'LOGICAL_DNS')) dns++;
          if (res.endpoints.some((e) => e.endpoints?.some((l) => l.lb_endpoints?.length))) pods++;
          if (JSON.stringify(res.routes).includes('StatefulSessionPerRoute')) sticky++;
        }),
        { numRuns: Number(process.env.FC_ADMITTED_RUNS ?? Math.min(RUNS, 100)) },
      );
      // Not vacuous: XBackends were admitted, and served as DNS clusters, or as Pods' endpoints, some with
      // a stateful session.
      if (type === 'ExternalHostname') expect([admitted > 0, dns > 0]).toEqual([true, true]);
      else expect([admitted > 0, pods > 0, sticky > 0]).toEqual([true, true, true]);
    },
  );
});

/**
 * Regular expressions as tenants write them, of every size: literals long and short, classes, counted
 * repetitions, alternations, case folding and Unicode classes. Envoy refuses one whose RE2 program is over
 * re2.max_program_size.error_level (100), and the whole route configuration of the port with it.
 */
const regex: fc.Arbitrary<string> = fc.letrec<{ re: string }>((tie) => ({
  re: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', '/', '\\.', '[a-z]', '[^/]', '\\d', '.', 'é', '\\pL', '(?i)k', '(?i)é', '[\\x{80}-\\x{7FF}]'),
    fc.string({ unit: fc.constantFrom('a', 'b', '/', '-', '_'), minLength: 1, maxLength: 120 }),
    fc.tuple(tie('re'), tie('re')).map(([a, b]) => a + b),
    fc
      .tuple(tie('re'), fc.constantFrom('*', '+', '?', '{2,5}', '{0,30}', '{10}', '{40}'))
      .map(([a, op]) => `(?:${a})${op}`),
    fc.array(tie('re'), { minLength: 2, maxLength: 4 }).map((xs) => `(${xs.join('|')})`),
  ),
})).re;

describe('admitted regular expressions', () => {
  it('no regex match the API server and the translator admit makes Envoy refuse its route configuration', () => {
    let served = 0;
    let refused = 0;
    const rule = fc
      .record({ path: regex, header: regex, query: regex, service: regex, method: regex })
      .map(({ path, header, query, service, method }): KubeObject[] => {
        const parentRefs = [{ name: 'gw', namespace: 'infra' }];
        const backendRefs = [{ name: 'svc', port: 8080 }];
        const meta = (name: string) => ({ name, namespace: 'apps', generation: 1 });
        return [
          {
            apiVersion: `${GROUP}/v1`,
            kind: 'HTTPRoute',
            metadata: meta('http'),
            spec: {
              parentRefs,
              rules: [
                { matches: [{ path: { type: 'RegularExpression', value: path } }], backendRefs },
                { matches: [{ headers: [{ name: 'x-a', type: 'RegularExpression', value: header }] }], backendRefs },
                { matches: [{ queryParams: [{ name: 'q', type: 'RegularExpression', value: query }] }], backendRefs },
              ],
            },
          },
          {
            apiVersion: `${GROUP}/v1`,
            kind: 'GRPCRoute',
            metadata: meta('grpc'),
            spec: {
              parentRefs,
              rules: [{ matches: [{ method: { type: 'RegularExpression', service, method } }], backendRefs }],
            },
          },
        ];
      });
    const gateway: KubeObject = {
      apiVersion: `${GROUP}/v1`,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra', generation: 1 },
      spec: {
        gatewayClassName: 'turnpike',
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
      },
    };
    fc.assert(
      fc.property(rule, (routes) => {
        const objects = routes.filter((o) => validateManifest(o).length === 0);
        const result = new Translator().translate(snapshotFromObjects([...fixed, gateway, ...objects]));
        const lookup = (kind: string, ns: string, name: string) =>
          fixed.find((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === name);
        const ir = result.xdsIR.gateways.get('infra/gw')!;
        const res = envoyResourcesFor(ir, lookup, undefined, result.xdsIR.endpoints);
        const problems = envoyLoadProblems(res).map((p) => `${p.resource} ${p.field}: ${p.message}`);
        expect(problems).toEqual([]);
        for (const rc of res.routes)
          for (const vh of rc.virtual_hosts ?? []) for (const r of vh.routes ?? []) if (r.match?.safe_regex) served++;
        for (const o of objects) {
          const status = result.statuses.get(`${o.kind}/apps/${o.metadata.name}`) as
            { parents: { conditions: { type: string; message: string }[] }[] } | undefined;
          for (const c of status?.parents[0]?.conditions ?? [])
            if (/RE2 program of \d+ instructions|program size is not known/.test(c.message)) refused++;
        }
      }),
      { numRuns: Number(process.env.FC_ADMITTED_RUNS ?? Math.min(RUNS, 100)) },
    );
    // Not vacuous: regexes were served, and others refused for their size.
    expect(served).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    // The arbitrary reaches both sides of the limit.
    expect(re2ProgramSize('/' + 'a'.repeat(120)).size).toBeGreaterThan(100);
  });
});
