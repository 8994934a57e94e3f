// Nothing the API server admits of an XTelemetryPolicy (GEP-4768) makes Envoy refuse a resource: random
// policies shaped by the v1.7.0 experimental CRD schema, kept only when the schema and CEL check (what the
// API server runs) admits them, target a Gateway; every Envoy resource built for it must pass the field
// rules (PGV, the OpenTelemetry tracer's config included), Envoy's load rules, and encode. The policy's own
// cross-field rules (mode Enabled with a provider, which random fields rarely meet) are met half the time,
// so that Gateways are traced along the way, and the provider points at a Service that exists.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { crdSchemaFor, validateManifest } from '@turnpike/engine';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import fc from 'fast-check';
import { encodeMessage, envoyLoadProblems, envoyResourcesFor, validateResources } from '../src/index.js';
import { endpointSlice, gateway, gatewayClass, http, route, service } from '../../translator/test/builders.js';
import { schemaArbitrary } from './schema-arbitrary.js';

const RUNS = Number(process.env.FC_RUNS ?? 250);
const X = 'gateway.networking.x-k8s.io';
type Json = Record<string, unknown>;

const lookup = crdSchemaFor(`${X}/v1alpha1`, 'XTelemetryPolicy');
if (!lookup?.found) throw new Error('no schema for XTelemetryPolicy');
const spec = schemaArbitrary(lookup.schema.properties!.spec!);

const policy = fc.tuple(spec, fc.boolean()).map(([s, shaped]): KubeObject => {
  const tracing: Json = { ...((s as Json).tracing as Json | undefined) };
  const provider = tracing.provider as Json | undefined;
  if (provider) tracing.provider = { ...provider, backendRef: { name: 'otel', port: 4317 } };
  if (shaped) {
    tracing.mode = 'Enabled';
    tracing.provider = { ...(provider ?? {}), backendRef: { name: 'otel', port: 4317 } };
  }
  return {
    apiVersion: `${X}/v1alpha1`,
    kind: 'XTelemetryPolicy',
    metadata: { name: 'tp', namespace: 'infra', generation: 1 },
    spec: JSON.parse(
      JSON.stringify({
        ...(s as Json),
        targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }],
        tracing,
      }),
    ) as KubeObject['spec'],
  };
});

const fixed: KubeObject[] = [
  gatewayClass(),
  gateway('gw', [http()]),
  service('web'),
  endpointSlice('web'),
  service('otel', 'infra', [{ name: 'otlp', port: 4317, protocol: 'TCP' }]),
  endpointSlice('otel', 'infra', ['10.9.0.1'], 4317, 'otlp'),
  route('HTTPRoute', 'web', {
    parentRefs: [{ name: 'gw', namespace: 'infra' }],
    rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }],
  }),
];

describe('admitted XTelemetryPolicies', () => {
  it('nothing the schema and CEL rules admit makes Envoy refuse a resource', () => {
    let admitted = 0;
    let traced = 0;
    fc.assert(
      fc.property(policy, (p) => {
        if (validateManifest(p).length) return;
        admitted++;
        const result = new Translator().translate(snapshotFromObjects([...fixed, p]));
        const ir = result.xdsIR.gateways.get('infra/gw')!;
        if (ir.tracing) traced++;
        const res = envoyResourcesFor(ir, () => undefined, undefined, result.xdsIR.endpoints);
        const problems = [
          ...validateResources(res),
          ...envoyLoadProblems(res).map((x) => `${x.resource} ${x.field}: ${x.message}`),
        ];
        expect(problems).toEqual([]);
        for (const l of res.listeners) encodeMessage('envoy.config.listener.v3.Listener', l);
        for (const r of res.routes) encodeMessage('envoy.config.route.v3.RouteConfiguration', r);
        for (const c of res.clusters) encodeMessage('envoy.config.cluster.v3.Cluster', c);
        // Every policy gets its status, whatever it asked for.
        expect(result.statuses.get('XTelemetryPolicy/infra/tp')).toBeDefined();
      }),
      { numRuns: Number(process.env.FC_ADMITTED_RUNS ?? Math.min(RUNS, 100)) },
    );
    // Not vacuous: the API server's check admitted policies, and some of them traced the Gateway.
    expect(admitted).toBeGreaterThan(0);
    expect(traced).toBeGreaterThan(0);
  });
});
