// XTelemetryPolicy (GEP-4768): tracing for the Gateways a policy targets, its status with one ancestor per
// targeted Gateway, conflicts (oldest wins), ResolvedRefs for the provider, and what Envoy cannot do
// refused with a condition naming the field. Each case is translated fresh and incrementally.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject, TelemetryTracing } from '@turnpike/api';
import { explain, snapshotFromObjects, translate, Translator, type TranslateResult } from '../src/index.js';
import {
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  referenceGrant,
  service,
  sr,
  statusOf,
} from './builders.js';

const X = 'gateway.networking.x-k8s.io';
const policy = (
  name: string,
  tracing: TelemetryTracing | undefined,
  targets = ['gw'],
  created = '2026-01-01T00:00:00Z',
  ns = 'infra',
): KubeObject => ({
  apiVersion: `${X}/v1alpha1`,
  kind: 'XTelemetryPolicy',
  metadata: { name, namespace: ns, generation: 2, creationTimestamp: created },
  spec: {
    targetRefs: targets.map((t) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: t })),
    ...(tracing ? { tracing } : {}),
  },
});
const provider = (name = 'otel', namespace?: string, port = 4317) => ({
  backendRef: { name, port, ...(namespace ? { namespace } : {}) },
});
const enabled = (extra: Partial<TelemetryTracing> = {}): TelemetryTracing => ({
  mode: 'Enabled',
  provider: provider(),
  ...extra,
});
const collector = (ns = 'infra') => [
  service('otel', ns, [{ name: 'otlp-grpc', port: 4317, protocol: 'TCP' }]),
  endpointSlice('otel', ns, ['10.9.0.1'], 4317, 'otlp-grpc'),
];
const base = () => [gatewayClass(), gateway('gw', [http()]), gateway('other', [http()]), ...collector()];

/** Translates `objects` fresh and through a Translator that saw `before` first: both must agree. */
function translated(objects: KubeObject[], before: KubeObject[] = base()): TranslateResult {
  const fresh = translate(snapshotFromObjects(objects));
  const t = new Translator();
  t.translate(snapshotFromObjects(before));
  const live = t.translate(snapshotFromObjects(objects));
  for (const g of ['infra/gw', 'infra/other']) expect(live.xdsIR.gateways.get(g)).toEqual(fresh.xdsIR.gateways.get(g));
  for (const k of fresh.statuses.sortedKeys())
    if (k.startsWith('XTelemetryPolicy/')) expect(live.statuses.get(k)).toEqual(fresh.statuses.get(k));
  expect(live.statuses.sortedKeys().filter((k) => k.startsWith('XTelemetryPolicy/'))).toEqual(
    fresh.statuses.sortedKeys().filter((k) => k.startsWith('XTelemetryPolicy/')),
  );
  return fresh;
}

const ancestor = (r: TranslateResult, name: string, gw = 'gw') => {
  const s = statusOf(r, 'XTelemetryPolicy', 'infra', name);
  const a = (s.ancestors as Record<string, any>[]).find((x) => x.ancestorRef.name === gw);
  if (!a) throw new Error(`no ancestor ${gw} on ${name}: ${JSON.stringify(s)}`);
  return a;
};

describe('XTelemetryPolicy', () => {
  it('traces the Gateway it targets through the provider Service (an HTTP/2 cluster), and no other', () => {
    const r = translated([
      ...base(),
      policy(
        'tp',
        enabled({
          samplingRate: { numerator: 25, denominator: 100 },
          serviceName: 'edge-gateway',
          spanName: 'ingress',
          provider: { ...provider(), headers: [{ name: 'Authorization', value: 'Bearer t' }] },
          attributes: [
            { name: 'env', sourceType: 'Literal', literalValue: 'prod' },
            { name: 'user', sourceType: 'Header', headerName: 'X-User-ID' },
            { name: 'method', sourceType: 'Attribute', attributeKey: 'http.request.method' },
            { name: 'tenant', sourceType: 'Attribute', attributeKey: 'http.request.header.x-tenant' },
          ],
        }),
      ),
    ]);
    const ir = r.xdsIR.gateways.get('infra/gw')!;
    expect(ir.tracing).toEqual({
      cluster: 'infra/otel/4317/h2',
      authority: 'otel.infra.svc:4317',
      samplingPercent: 25,
      serviceName: 'edge-gateway',
      spanName: 'ingress',
      headers: [{ name: 'Authorization', value: 'Bearer t' }],
      tags: [
        { name: 'env', literal: 'prod' },
        { name: 'user', requestHeader: 'x-user-id' },
        { name: 'method', requestHeader: ':method' },
        { name: 'tenant', requestHeader: 'x-tenant' },
      ],
      policy: 'infra/tp',
    });
    expect(ir.clusters.map((c) => c.name)).toContain('infra/otel/4317/h2');
    expect(ir.clusters.find((c) => c.name === 'infra/otel/4317/h2')!.protocol).toBe('h2');
    expect(r.xdsIR.endpoints.get('infra/otel/4317/h2')).toBeDefined();
    expect(r.xdsIR.gateways.get('infra/other')!.tracing).toBeUndefined();
    const a = ancestor(r, 'tp');
    expect(a.ancestorRef).toEqual({
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      namespace: 'infra',
      name: 'gw',
    });
    expect(sr(a.conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(a.conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(statusOf(r, 'XTelemetryPolicy', 'infra', 'tp').ancestors).toHaveLength(1);
  });

  it('"If multiple TelemetryPolicy resources target the same Gateway ... The older policy by creation timestamp takes precedence", then {namespace}/{name}; the others Accepted=False/Conflicted', () => {
    const objects = [
      ...base(),
      policy('young', enabled({ serviceName: 'young' }), ['gw'], '2026-03-01T00:00:00Z'),
      policy('old-b', enabled({ serviceName: 'old-b' }), ['gw', 'other'], '2026-02-01T00:00:00Z'),
      policy('old-a', enabled({ serviceName: 'old-a' }), ['gw'], '2026-02-01T00:00:00Z'),
    ];
    const r = translated(objects);
    expect(r.xdsIR.gateways.get('infra/gw')!.tracing!.serviceName).toBe('old-a');
    // old-b loses on gw only: it is the one policy on other.
    expect(r.xdsIR.gateways.get('infra/other')!.tracing!.serviceName).toBe('old-b');
    expect(sr(ancestor(r, 'old-a').conditions, 'Accepted')).toBe('True/Accepted');
    // "For any TelemetryPolicy that does not take precedence, the controller MUST set the `Accepted`
    // condition on the policy status to `status: False` with Reason `Conflicted`."
    expect(sr(ancestor(r, 'old-b').conditions, 'Accepted')).toBe('False/Conflicted');
    expect(sr(ancestor(r, 'old-b', 'other').conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(ancestor(r, 'young').conditions, 'Accepted')).toBe('False/Conflicted');
    expect(ancestor(r, 'young').conditions.find((c: any) => c.type === 'Accepted').message).toContain('infra/old-a');
    // The winner gone, the next oldest applies (incrementally too).
    const after = translated(
      objects.filter((o) => o.metadata.name !== 'old-a'),
      objects,
    );
    expect(after.xdsIR.gateways.get('infra/gw')!.tracing!.serviceName).toBe('old-b');
    expect(sr(ancestor(after, 'old-b').conditions, 'Accepted')).toBe('True/Accepted');
    expect(after.statuses.get('XTelemetryPolicy/infra/old-a')).toBeUndefined();
  });

  it('"the implementation MUST set the "ResolvedRefs" condition ... with Reason "BackendNotFound", "InvalidKind", or "RefNotPermitted""', () => {
    const cases: [TelemetryTracing['provider'], string, KubeObject[]][] = [
      [provider('missing'), 'False/BackendNotFound', []],
      [provider('otel', undefined, 9999), 'False/BackendNotFound', []],
      [{ backendRef: { group: 'example.com', kind: 'Collector', name: 'otel', port: 4317 } }, 'False/InvalidKind', []],
      [provider('otel', 'observability'), 'False/RefNotPermitted', collector('observability')],
    ];
    for (const [p, want, extra] of cases) {
      const r = translated([...base(), ...extra, policy('tp', enabled({ provider: p! }))]);
      const a = ancestor(r, 'tp');
      expect(sr(a.conditions, 'ResolvedRefs')).toBe(want);
      expect(sr(a.conditions, 'Accepted')).toBe('True/Accepted');
      // No provider, no tracing: spans would go nowhere.
      expect(r.xdsIR.gateways.get('infra/gw')!.tracing).toBeUndefined();
    }
    // "Cross-namespace references are only valid if they are explicitly allowed by ReferenceGrant in the
    // target namespace."
    const grant = referenceGrant(
      'otel',
      'observability',
      [{ group: X, kind: 'XTelemetryPolicy', namespace: 'infra' }],
      [{ group: '', kind: 'Service' }],
    );
    const objects = [
      ...base(),
      ...collector('observability'),
      grant,
      policy('tp', enabled({ provider: provider('otel', 'observability') })),
    ];
    const r = translated(
      objects,
      objects.filter((o) => o !== grant),
    );
    expect(sr(ancestor(r, 'tp').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(r.xdsIR.gateways.get('infra/gw')!.tracing!.cluster).toBe('observability/otel/4317/h2');
  });

  it('refuses what Envoy cannot express with Accepted=False/Invalid naming the field, never ignores it', () => {
    const cases: [Partial<TelemetryTracing>, string][] = [
      [{ parentBasedSampling: { mode: 'Disabled' } }, 'parentBasedSampling.mode Disabled'],
      [{ parentBasedSampling: { mode: 'Enabled', samplingRate: { numerator: 50, denominator: 100 } } }, 'below 100%'],
      [
        { attributes: [{ name: 's', sourceType: 'Attribute', attributeKey: 'http.response.status_code' }] },
        'http.response.status_code',
      ],
      [{ attributes: [{ name: 'r', sourceType: 'Attribute', attributeKey: 'http.route' }] }, 'attributes[0]'],
      // "Permutations of numerator > denominator are invalid and MUST be rejected via validation."
      [{ samplingRate: { numerator: 3, denominator: 2 } }, 'samplingRate'],
    ];
    for (const [extra, names] of cases) {
      const r = translated([...base(), policy('tp', enabled(extra))]);
      const c = ancestor(r, 'tp').conditions.find((x: any) => x.type === 'Accepted');
      expect(`${c.status}/${c.reason}`).toBe('False/Invalid');
      expect(c.message).toContain(names);
      expect(r.xdsIR.gateways.get('infra/gw')!.tracing).toBeUndefined();
    }
    // Parent-based sampling as Envoy does it (the parent's sampled flag decides) is accepted.
    const ok = translated([
      ...base(),
      policy(
        'tp',
        enabled({ parentBasedSampling: { mode: 'Enabled', samplingRate: { numerator: 100, denominator: 100 } } }),
      ),
    ]);
    expect(sr(ancestor(ok, 'tp').conditions, 'Accepted')).toBe('True/Accepted');
    expect(ok.xdsIR.gateways.get('infra/gw')!.tracing).toBeDefined();
  });

  it('a refused policy does not take precedence: the next one applies', () => {
    const r = translated([
      ...base(),
      policy('old', enabled({ parentBasedSampling: { mode: 'Disabled' } }), ['gw'], '2026-01-01T00:00:00Z'),
      policy('new', enabled({ serviceName: 'new' }), ['gw'], '2026-02-01T00:00:00Z'),
    ]);
    expect(sr(ancestor(r, 'old').conditions, 'Accepted')).toBe('False/Invalid');
    expect(sr(ancestor(r, 'new').conditions, 'Accepted')).toBe('True/Accepted');
    expect(r.xdsIR.gateways.get('infra/gw')!.tracing!.serviceName).toBe('new');
  });

  it('mode Disabled or ImplementationDefault traces nothing (our default), and a missing Gateway is TargetNotFound', () => {
    for (const mode of ['Disabled', 'ImplementationDefault'] as const) {
      const r = translated([...base(), policy('tp', { mode })]);
      expect(r.xdsIR.gateways.get('infra/gw')!.tracing).toBeUndefined();
      expect(sr(ancestor(r, 'tp').conditions, 'Accepted')).toBe('True/Accepted');
    }
    const r = translated([...base(), policy('tp', enabled(), ['nope'])]);
    expect(sr(ancestor(r, 'tp', 'nope').conditions, 'Accepted')).toBe('False/TargetNotFound');
  });

  it('a Gateway of another controller is not our ancestor', () => {
    const foreign = gateway('foreign', [http()], { gatewayClassName: 'theirs' });
    const r = translated([
      ...base(),
      gatewayClass('theirs', { controllerName: 'example.com/other' }),
      foreign,
      policy('tp', enabled(), ['foreign']),
    ]);
    expect(r.statuses.get('XTelemetryPolicy/infra/tp')).toBeUndefined();
  });

  it('follows its provider: the Service appearing later resolves it', () => {
    const withoutService = [
      gatewayClass(),
      gateway('gw', [http()]),
      gateway('other', [http()]),
      policy('tp', enabled()),
    ];
    const r = translated([...withoutService, ...collector()], withoutService);
    expect(sr(ancestor(r, 'tp').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(r.xdsIR.gateways.get('infra/gw')!.tracing).toBeDefined();
  });

  it('explain names the policy tracing a Gateway and a route on it, never an export header value', () => {
    const objects = [
      ...base(),
      service('svc', 'infra'),
      httpRoute(
        'web',
        { parentRefs: [{ name: 'gw' }, { name: 'other' }], rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }] },
        'infra',
      ),
      policy(
        'tp',
        enabled({
          samplingRate: { numerator: 5, denominator: 100 },
          spanName: 'ingress',
          provider: { ...provider(), headers: [{ name: 'Authorization', value: 'Bearer s3cret' }] },
          attributes: [{ name: 'user', sourceType: 'Header', headerName: 'X-User-ID' }],
        }),
      ),
    ];
    const snapshot = snapshotFromObjects(objects);
    const gw = explain(snapshot, 'Gateway', 'infra', 'gw').lines.join('\n');
    expect(gw).toContain('traced by XTelemetryPolicy infra/tp: spans to otel.infra.svc:4317');
    expect(gw).toContain('5% of new traces sampled');
    expect(gw).toContain('every span named ingress');
    expect(gw).toContain('user from header x-user-id');
    expect(gw).toContain('export headers Authorization (values not shown)');
    expect(explain(snapshot, 'Gateway', 'infra', 'other').lines.join('\n')).not.toContain('traced by');
    const route = explain(snapshot, 'HTTPRoute', 'infra', 'web').lines;
    // Only the Gateway the policy targets traces the route's requests.
    expect(route.filter((l) => l.includes('traced by'))).toEqual([
      expect.stringMatching(/^ {2}on Gateway infra\/gw: traced by XTelemetryPolicy infra\/tp/),
    ]);
    expect([...gw, ...route.join('')].join('')).not.toContain('s3cret');
  });
});
