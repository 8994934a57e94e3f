// Access logs (ProxyConfig.spec.accessLog → GatewayIR.accessLog): on by default as JSON lines on
// stdout; off, Text, JSON fields added, replaced and removed; an OpenTelemetry collector resolved as a
// backend (an HTTP/2 cluster of the Gateway, with its endpoints), and one that does not resolve
// (stdout only, and the ProxyConfig's ResolvedRefs says why, naming the field). Every step that
// changes something is also translated incrementally and checked against a fresh translation.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject, ProxyAccessLog } from '@turnpike/api';
import { snapshotFromObjects, translate, Translator, type TranslateResult } from '../src/index.js';
import { DEFAULT_ACCESS_LOG_FIELDS, ENVOY_DEFAULT_TEXT } from '../src/ir/access-log.js';
import {
  cond,
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  referenceGrant,
  run,
  service,
  sr,
  statusOf,
} from './builders.js';

const proxyConfig = (accessLog?: ProxyAccessLog, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'ProxyConfig',
  metadata: { name: 'pc', namespace: 'infra', generation: 3 },
  spec: { ...(accessLog ? { accessLog } : {}), ...extra },
});
const gw = (withConfig = true) =>
  gateway(
    'gw',
    [http()],
    withConfig ? { infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } } } : {},
  );
const collector = (ns = 'infra') => [
  service('otel', ns, [{ name: 'otlp-grpc', port: 4317, protocol: 'TCP' }]),
  endpointSlice('otel', ns, ['10.9.0.1'], 4317, 'otlp-grpc'),
];
const otel = (backendRef: { name: string; namespace?: string; port: number }): ProxyAccessLog => ({
  openTelemetry: { backendRef },
});

const irOf = (r: TranslateResult) => r.xdsIR.gateways.get('infra/gw')!;
const pcStatus = (r: TranslateResult) => statusOf(r, 'ProxyConfig', 'infra', 'pc');

/** Translates `objects` fresh and through a Translator that saw `before` first: both must agree. */
function translated(objects: KubeObject[], before: KubeObject[] = []): TranslateResult {
  const fresh = translate(snapshotFromObjects(objects));
  const t = new Translator();
  t.translate(snapshotFromObjects(before));
  const live = t.translate(snapshotFromObjects(objects));
  expect(live.xdsIR.gateways.get('infra/gw')).toEqual(fresh.xdsIR.gateways.get('infra/gw'));
  expect(live.statuses.get('ProxyConfig/infra/pc')).toEqual(fresh.statuses.get('ProxyConfig/infra/pc'));
  expect([...live.xdsIR.endpoints.sortedKeys()]).toEqual([...fresh.xdsIR.endpoints.sortedKeys()]);
  return fresh;
}

describe('access logs', () => {
  it('are on by default: JSON lines on stdout with the default fields and the Gateway', () => {
    for (const objects of [
      [gatewayClass(), gw(false)],
      [gatewayClass(), gw(), proxyConfig()],
    ]) {
      const log = irOf(run(objects)).accessLog!;
      expect(log).toEqual({
        format: 'json',
        stdout: true,
        json: { ...DEFAULT_ACCESS_LOG_FIELDS, gateway: 'infra/gw' },
      });
      // Sorted by field, so the IR (and what the proxies are sent) does not depend on the order written.
      expect(Object.keys(log.json!)).toEqual(Object.keys(log.json!).sort());
      expect(log.json!.path).toBe('%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%');
      expect(log.json!.route_name).toBe('%ROUTE_NAME%');
    }
  });

  it('disabled: true (or stdout: false with no collector) logs nothing', () => {
    for (const accessLog of [
      { disabled: true },
      { stdout: false },
      { disabled: true, ...otel({ name: 'otel', port: 4317 }) },
    ]) {
      const r = run([gatewayClass(), gw(), proxyConfig(accessLog), ...collector()]);
      expect(irOf(r).accessLog).toBeUndefined();
      expect(irOf(r).clusters).toEqual([]);
      expect(cond(pcStatus(r).conditions, 'ResolvedRefs')).toBeUndefined();
    }
  });

  it('Text writes the format string as given, or Envoy’s default one', () => {
    const text = '%START_TIME% %REQ(:METHOD)% %RESPONSE_CODE%';
    expect(irOf(run([gatewayClass(), gw(), proxyConfig({ format: 'Text', text })])).accessLog).toEqual({
      format: 'text',
      text,
      stdout: true,
    });
    expect(irOf(run([gatewayClass(), gw(), proxyConfig({ format: 'Text' })])).accessLog!.text).toBe(ENVOY_DEFAULT_TEXT);
  });

  it('json adds and replaces fields, and "" removes a default one', () => {
    const json = { tenant: '%REQ(X-TENANT)%', path: '%REQ(:PATH)%', user_agent: '', gateway: '' };
    const log = irOf(run([gatewayClass(), gw(), proxyConfig({ json })])).accessLog!;
    expect(log.json!.tenant).toBe('%REQ(X-TENANT)%');
    expect(log.json!.path).toBe('%REQ(:PATH)%');
    expect(log.json).not.toHaveProperty('user_agent');
    expect(log.json).not.toHaveProperty('gateway');
    expect(log.json!.method).toBe('%REQ(:METHOD)%');
    expect(Object.keys(log.json!)).toEqual(Object.keys(log.json!).sort());
  });

  it('an OpenTelemetry collector is an HTTP/2 cluster of the Gateway, with its endpoints', () => {
    const objects = [
      gatewayClass(),
      gw(),
      proxyConfig({ stdout: false, ...otel({ name: 'otel', port: 4317 }) }),
      ...collector(),
    ];
    const r = translated(objects, [gatewayClass(), gw(), proxyConfig()]);
    const ir = irOf(r);
    expect(ir.accessLog).toMatchObject({
      format: 'json',
      stdout: false,
      openTelemetry: { cluster: 'infra/otel/4317/h2' },
    });
    expect(ir.clusters).toEqual([
      { name: 'infra/otel/4317/h2', service: { namespace: 'infra', name: 'otel', port: 4317 }, protocol: 'h2' },
    ]);
    expect(r.xdsIR.endpoints.get('infra/otel/4317/h2')).toEqual([
      expect.objectContaining({ address: '10.9.0.1', port: 4317, ready: true }),
    ]);
    const refs = cond(pcStatus(r).conditions, 'ResolvedRefs')!;
    expect(refs).toMatchObject({ status: 'True', reason: 'ResolvedRefs', observedGeneration: 3 });
    expect(refs.message).toContain('spec.accessLog.openTelemetry.backendRef');
    expect(sr(pcStatus(r).conditions, 'Accepted')).toBe('True/Accepted');
  });

  it('a collector Service that does not exist: stdout only, and ResolvedRefs=False naming the field', () => {
    const objects = [gatewayClass(), gw(), proxyConfig({ stdout: false, ...otel({ name: 'otel', port: 4317 }) })];
    const r = translated(objects, [...objects, ...collector()]);
    const ir = irOf(r);
    expect(ir.accessLog).toEqual({ format: 'json', stdout: true, json: expect.any(Object) });
    expect(ir.clusters).toEqual([]);
    const refs = cond(pcStatus(r).conditions, 'ResolvedRefs')!;
    expect(refs).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
    expect(refs.message).toContain('spec.accessLog.openTelemetry.backendRef: Service infra/otel not found');
    expect(refs.message).toContain('stdout only');
    // The Gateway is served as ever.
    expect(sr(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Programmed')).toBe('True/Programmed');
  });

  it('a collector port the Service lacks is BackendNotFound too', () => {
    const r = run([gatewayClass(), gw(), proxyConfig(otel({ name: 'otel', port: 9999 })), ...collector()]);
    expect(irOf(r).accessLog!.openTelemetry).toBeUndefined();
    expect(cond(pcStatus(r).conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
  });

  it('a collector in another namespace needs a ReferenceGrant to kind ProxyConfig', () => {
    const objects = [
      gatewayClass(),
      gw(),
      proxyConfig({ format: 'Text', ...otel({ name: 'otel', namespace: 'observability', port: 4317 }) }),
      ...collector('observability'),
    ];
    const refused = translated(objects);
    expect(irOf(refused).accessLog).toEqual({ format: 'text', text: ENVOY_DEFAULT_TEXT, stdout: true });
    expect(irOf(refused).clusters).toEqual([]);
    const refs = cond(pcStatus(refused).conditions, 'ResolvedRefs')!;
    expect(refs).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
    expect(refs.message).toContain('spec.accessLog.openTelemetry.backendRef');
    expect(refs.message).toContain('ProxyConfig from infra');

    // A grant for routes is not one for ProxyConfigs.
    const routesOnly = referenceGrant(
      'routes',
      'observability',
      [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }],
      [{ group: '', kind: 'Service' }],
    );
    expect(irOf(run([...objects, routesOnly])).clusters).toEqual([]);

    const grant = referenceGrant(
      'otel',
      'observability',
      [{ group: 'turnpike.dev', kind: 'ProxyConfig', namespace: 'infra' }],
      [{ group: '', kind: 'Service', name: 'otel' }],
    );
    const allowed = translated([...objects, grant], objects);
    expect(irOf(allowed).accessLog!.openTelemetry).toEqual({ cluster: 'observability/otel/4317/h2' });
    expect(irOf(allowed).clusters.map((c) => c.name)).toEqual(['observability/otel/4317/h2']);
    expect(sr(pcStatus(allowed).conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
  });

  it('every Gateway of the ProxyConfig names itself; without a collector no ResolvedRefs is written', () => {
    const other = gateway('other', [http()], {
      infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } },
    });
    const r = run([gatewayClass(), gw(), other, proxyConfig({ json: { tenant: '%REQ(X-TENANT)%' } })]);
    expect(irOf(r).accessLog!.json!.gateway).toBe('infra/gw');
    expect(r.xdsIR.gateways.get('infra/other')!.accessLog!.json!.gateway).toBe('infra/other');
    expect(cond(pcStatus(r).conditions, 'ResolvedRefs')).toBeUndefined();
  });
});
