// Tracing (XTelemetryPolicy, GEP-4768) through the route-table check: a request through the traced
// Gateway is routed as before and starts a span named, sampled and tagged as the policy says (its
// traceparent's sampled flag deciding, as GEP-4768's parent-based sampling asks); the same request through
// another Gateway on the same route starts none.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, translate } from '@turnpike/translator';
import { envoyLoadProblems, envoyResourcesFor, validateResources, type EnvoyResources } from '../../src/index.js';
import { endpointSlice, gateway, gatewayClass, http, route, service } from '../../../translator/test/builders.js';
import { routeHttp } from './envoy-router.js';
import { traceHttp } from './envoy-tracing.js';

const objects: KubeObject[] = [
  gatewayClass(),
  gateway('traced', [http()]),
  gateway('plain', [http()]),
  service('web'),
  endpointSlice('web'),
  service('otel', 'infra', [{ name: 'otlp', port: 4317, protocol: 'TCP' }]),
  endpointSlice('otel', 'infra', ['10.9.0.1'], 4317, 'otlp'),
  route('HTTPRoute', 'web', {
    parentRefs: [
      { name: 'traced', namespace: 'infra' },
      { name: 'plain', namespace: 'infra' },
    ],
    rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }],
  }),
  {
    apiVersion: 'gateway.networking.x-k8s.io/v1alpha1',
    kind: 'XTelemetryPolicy',
    metadata: { name: 'tp', namespace: 'infra', generation: 1 },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'traced' }],
      tracing: {
        mode: 'Enabled',
        provider: { backendRef: { name: 'otel', port: 4317 } },
        samplingRate: { numerator: 5, denominator: 100 },
        parentBasedSampling: { mode: 'Enabled' },
        serviceName: 'edge',
        spanName: 'edge-ingress',
        attributes: [
          { name: 'env', sourceType: 'Literal', literalValue: 'prod' },
          { name: 'user', sourceType: 'Header', headerName: 'X-User-ID' },
          { name: 'http.request.method', sourceType: 'Attribute', attributeKey: 'http.request.method' },
          { name: 'ua', sourceType: 'Attribute', attributeKey: 'user_agent.original' },
        ],
      },
    },
  },
];

function served(name: string): EnvoyResources {
  const result = translate(snapshotFromObjects(objects));
  const ir = result.xdsIR.gateways.get(`infra/${name}`)!;
  const res = envoyResourcesFor(ir, () => undefined, undefined, result.xdsIR.endpoints);
  expect(validateResources(res)).toEqual([]);
  expect(envoyLoadProblems(res)).toEqual([]);
  return res;
}

const request = (headers: Record<string, string>) => ({
  port: 80,
  authority: 'www.example.com',
  method: 'POST',
  path: '/orders?id=1',
  headers,
});

describe('tracing through the route-table check', () => {
  it('a request through the traced Gateway reaches its backend and its span is named, sampled and tagged as configured', () => {
    const res = served('traced');
    const sampledParent = request({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      'x-user-id': 'u-42',
      'user-agent': 'curl/8.5',
    });
    const out = routeHttp(res, sampledParent);
    expect(out.kind === 'http' && out.targets?.map((t) => t.cluster)).toEqual(['apps/web/8080']);
    expect(traceHttp(res, sampledParent, out)).toEqual({
      collector: 'infra/otel/4317/h2',
      serviceName: 'edge',
      // "When Mode is "Enabled", the proxy will respect the upstream trace parent's sampling decision."
      decision: { from: 'parent', sampled: true },
      name: 'edge-ingress',
      tags: { env: 'prod', user: 'u-42', 'http.request.method': 'POST', ua: 'curl/8.5' },
    });
    // A parent that is not sampled is not traced, whatever samplingRate says.
    const unsampled = request({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' });
    expect(traceHttp(res, unsampled, routeHttp(res, unsampled))!.decision).toEqual({ from: 'parent', sampled: false });
    // Without a parent, a new trace at samplingRate; a header that is absent is no tag.
    const fresh = request({});
    const span = traceHttp(res, fresh, routeHttp(res, fresh))!;
    expect(span.decision).toEqual({ from: 'random', percent: 5 });
    expect(span.tags).toEqual({ env: 'prod', 'http.request.method': 'POST' });
  });

  it('the same request through another Gateway on the same route starts no span', () => {
    const res = served('plain');
    const req = request({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    const out = routeHttp(res, req);
    expect(out.kind === 'http' && out.targets?.map((t) => t.cluster)).toEqual(['apps/web/8080']);
    expect(traceHttp(res, req, out)).toBeUndefined();
  });
});
