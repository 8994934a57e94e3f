// Tracing (XTelemetryPolicy, GEP-4768) as the proxies get it: every HTTP connection manager of the traced
// Gateway (HTTP and HTTPS listeners) traces through Envoy's OpenTelemetry tracer to the provider's HTTP/2
// cluster, with the sampling, service name and span tags the policy asks for, and every route carries the
// span name; another Gateway's connection managers and routes carry none of it. Every resource passes
// the PGV rules and Envoy's load rules, and the tracer's config encodes and decodes back (its proto loaded).
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, translate } from '@turnpike/translator';
import {
  decodeMessage,
  encodeMessage,
  envoyLoadProblems,
  envoyResourcesFor,
  validateResources,
  type EnvoyResources,
} from '../src/index.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../../translator/test/tls-fixtures.js';

const GW = 'gateway.networking.k8s.io/v1';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const from = { namespaces: { from: 'All' } };
type Json = Record<string, any>;

const gateway = (name: string): KubeObject => ({
  apiVersion: GW,
  kind: 'Gateway',
  metadata: { name, namespace: 'infra', generation: 1 },
  spec: {
    gatewayClassName: 'turnpike',
    listeners: [
      { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: from },
      {
        name: 'https',
        port: 443,
        protocol: 'HTTPS',
        hostname: 'www.example.com',
        tls: { certificateRefs: [{ name: 'cert' }] },
        allowedRoutes: from,
      },
    ],
  },
});

const objects: KubeObject[] = [
  {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'turnpike' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  },
  gateway('traced'),
  gateway('plain'),
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'cert', namespace: 'infra' },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(EXAMPLE_COM_CERT), 'tls.key': b64(EXAMPLE_COM_KEY) },
  },
  ...['web', 'otel'].map((name) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: name === 'otel' ? 'infra' : 'apps' },
    spec: { ports: [{ name: 'p', port: name === 'otel' ? 4317 : 8080, protocol: 'TCP' }] },
  })),
  {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name: 'web', namespace: 'apps', generation: 1 },
    spec: {
      parentRefs: [
        { name: 'traced', namespace: 'infra' },
        { name: 'plain', namespace: 'infra' },
      ],
      rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }],
    },
  },
  {
    apiVersion: 'gateway.networking.x-k8s.io/v1alpha1',
    kind: 'XTelemetryPolicy',
    metadata: { name: 'tp', namespace: 'infra', generation: 1 },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'traced' }],
      tracing: {
        mode: 'Enabled',
        provider: { backendRef: { name: 'otel', port: 4317 }, headers: [{ name: 'X-Api-Key', value: 'k' }] },
        samplingRate: { numerator: 1, denominator: 8 },
        serviceName: 'edge',
        spanName: 'gateway ingress',
        attributes: [
          { name: 'deployment.environment', sourceType: 'Literal', literalValue: 'prod' },
          { name: 'user', sourceType: 'Header', headerName: 'X-User-ID' },
          { name: 'http.request.method', sourceType: 'Attribute', attributeKey: 'http.request.method' },
        ],
      },
    },
  },
];

function build(name: string): EnvoyResources {
  const result = translate(snapshotFromObjects(objects));
  const ir = result.xdsIR.gateways.get(`infra/${name}`)!;
  const lookup = (kind: string, ns: string, n: string) =>
    objects.find((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === n);
  return envoyResourcesFor(ir, lookup, undefined, result.xdsIR.endpoints);
}

/** Every HTTP connection manager of the listeners, as decoded from their bytes. */
function managers(res: EnvoyResources): Json[] {
  const out: Json[] = [];
  for (const l of res.listeners) {
    const decoded = decodeMessage(
      'envoy.config.listener.v3.Listener',
      encodeMessage('envoy.config.listener.v3.Listener', l),
    );
    for (const chain of decoded.filter_chains ?? [])
      for (const f of chain.filters ?? [])
        if (String(f.typed_config?.['@type']).endsWith('HttpConnectionManager')) out.push(f.typed_config);
  }
  return out;
}

describe('tracing (XTelemetryPolicy)', () => {
  it('every connection manager of the traced Gateway traces to the provider, with its tags; the routes name the span', () => {
    const res = build('traced');
    expect(validateResources(res)).toEqual([]);
    expect(envoyLoadProblems(res)).toEqual([]);
    const hcms = managers(res);
    expect(hcms.length).toBe(2); // the HTTP port's and the HTTPS listener's
    for (const hcm of hcms) {
      const t = hcm.tracing;
      expect(t.provider.name).toBe('envoy.tracers.opentelemetry');
      expect(t.provider.typed_config).toEqual({
        '@type': 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig',
        grpc_service: {
          envoy_grpc: { cluster_name: 'infra/otel/4317/h2', authority: 'otel.infra.svc:4317' },
          initial_metadata: [{ key: 'x-api-key', value: 'k' }],
          target_specifier: 'envoy_grpc',
        },
        service_name: 'edge',
      });
      expect(t.random_sampling).toEqual({ value: 12.5 });
      expect(t.spawn_upstream_span).toEqual({ value: true });
      expect(t.custom_tags).toEqual([
        { tag: 'deployment.environment', type: 'literal', literal: { value: 'prod' } },
        { tag: 'user', type: 'request_header', request_header: { name: 'x-user-id' } },
        { tag: 'http.request.method', type: 'request_header', request_header: { name: ':method' } },
      ]);
    }
    // The exporter's cluster is sent (Envoy refuses a gRPC client to an unknown cluster), as HTTP/2.
    const cluster = res.clusters.find((c) => c.name === 'infra/otel/4317/h2');
    expect(cluster).toBeDefined();
    expect(JSON.stringify(cluster)).toContain('http2_protocol_options');
    const routes = res.routes.flatMap((rc) => (rc.virtual_hosts ?? []).flatMap((vh) => vh.routes ?? []));
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) expect(r.decorator).toEqual({ operation: 'gateway ingress' });
    for (const rc of res.routes) encodeMessage('envoy.config.route.v3.RouteConfiguration', rc);
  });

  it('another Gateway on the same route is not traced', () => {
    const res = build('plain');
    expect(validateResources(res)).toEqual([]);
    for (const hcm of managers(res)) expect(hcm.tracing).toBeUndefined();
    expect(res.clusters.some((c) => c.name === 'infra/otel/4317/h2')).toBe(false);
    for (const rc of res.routes)
      for (const vh of rc.virtual_hosts ?? []) for (const r of vh.routes ?? []) expect(r.decorator).toBeUndefined();
  });

  it('a tracing provider whose cluster is not sent is a load problem (Envoy: "Unknown gRPC client cluster")', () => {
    const res = build('traced');
    const without = { ...res, clusters: res.clusters.filter((c) => c.name !== 'infra/otel/4317/h2') };
    expect(envoyLoadProblems(without).map((p) => p.message)).toContain(
      'the tracing provider names gRPC cluster infra/otel/4317/h2, which is not sent',
    );
  });
});
