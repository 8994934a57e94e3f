// Access logs reach every HTTP connection manager, TCP proxy and UDP proxy of a Gateway (HTTP, HTTPS,
// TLS passthrough, TCP and UDP listeners), to stdout and to an OpenTelemetry collector; TCP and UDP
// entries keep the fields that mean something for a connection; and every resource passes the PGV
// rules and Envoy's load rules, and encodes to what decodes back to the same access logs.
import { describe, expect, it } from '@jest/globals';
import type { GatewayIR, KubeObject, ProxyAccessLog } from '@turnpike/api';
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
const ALPHA = 'gateway.networking.k8s.io/v1alpha2';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const from = { namespaces: { from: 'All' } };

function objects(accessLog?: ProxyAccessLog, proxyless = false): KubeObject[] {
  const route = (apiVersion: string, kind: string, name: string, section: string, spec: Record<string, unknown>) => ({
    apiVersion,
    kind,
    metadata: { name, namespace: 'apps', generation: 1 },
    spec: { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: section }], ...spec },
  });
  const web = { backendRefs: [{ name: 'web', port: 8080 }] };
  return [
    {
      apiVersion: GW,
      kind: 'GatewayClass',
      metadata: { name: 'turnpike' },
      spec: { controllerName: 'turnpike.dev/gateway-controller' },
    },
    {
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ProxyConfig',
      metadata: { name: 'pc', namespace: 'infra', generation: 1 },
      spec: { ...(accessLog ? { accessLog } : {}), ...(proxyless ? { proxylessGRPC: true } : {}) },
    },
    {
      apiVersion: GW,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra', generation: 1 },
      spec: {
        gatewayClassName: 'turnpike',
        infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } },
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
          { name: 'tls', port: 8443, protocol: 'TLS', tls: { mode: 'Passthrough' }, allowedRoutes: from },
          { name: 'tcp', port: 9000, protocol: 'TCP', allowedRoutes: from },
          { name: 'udp', port: 53, protocol: 'UDP', allowedRoutes: from },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cert', namespace: 'infra' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(EXAMPLE_COM_CERT), 'tls.key': b64(EXAMPLE_COM_KEY) },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'apps' },
      spec: {
        ports: [
          { name: 'http', port: 8080, protocol: 'TCP' },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'otel', namespace: 'infra' },
      spec: { ports: [{ name: 'otlp-grpc', port: 4317, protocol: 'TCP' }] },
    },
    route(GW, 'HTTPRoute', 'web', 'http', { rules: [web] }),
    route(GW, 'HTTPRoute', 'secure', 'https', { hostnames: ['www.example.com'], rules: [web] }),
    route(GW, 'GRPCRoute', 'rpc', 'http', { hostnames: ['rpc.example.com'], rules: [web] }),
    route(ALPHA, 'TLSRoute', 'pass', 'tls', { hostnames: ['pass.example.com'], rules: [web] }),
    route(ALPHA, 'TCPRoute', 'raw', 'tcp', { rules: [web] }),
    route(ALPHA, 'UDPRoute', 'dns', 'udp', { rules: [{ backendRefs: [{ name: 'web', port: 53 }] }] }),
  ];
}

function build(accessLog?: ProxyAccessLog, proxyless = false): { ir: GatewayIR; res: EnvoyResources } {
  const all = objects(accessLog, proxyless);
  const snapshot = snapshotFromObjects(all);
  const result = translate(snapshot);
  const ir = result.xdsIR.gateways.get('infra/gw')!;
  const lookup = (kind: string, ns: string, name: string) =>
    all.find((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === name);
  return { ir, res: envoyResourcesFor(ir, lookup, undefined, result.xdsIR.endpoints) };
}

type Json = Record<string, any>;

/** Every HTTP connection manager, TCP proxy and UDP proxy of the listeners, as decoded from their bytes. */
function proxies(res: EnvoyResources): { kind: 'http' | 'tcp' | 'udp'; where: string; config: Json }[] {
  const out: { kind: 'http' | 'tcp' | 'udp'; where: string; config: Json }[] = [];
  for (const l of res.listeners) {
    const decoded = decodeMessage(
      'envoy.config.listener.v3.Listener',
      encodeMessage('envoy.config.listener.v3.Listener', l),
    );
    for (const f of decoded.listener_filters ?? [])
      if (String(f.typed_config?.['@type']).endsWith('UdpProxyConfig'))
        out.push({ kind: 'udp', where: decoded.name, config: f.typed_config });
    for (const chain of decoded.filter_chains ?? [])
      for (const f of chain.filters ?? []) {
        const type = String(f.typed_config?.['@type']);
        const where = `${decoded.name} ${chain.name ?? ''}`;
        if (type.endsWith('HttpConnectionManager')) out.push({ kind: 'http', where, config: f.typed_config });
        if (type.endsWith('TcpProxy')) out.push({ kind: 'tcp', where, config: f.typed_config });
      }
    if (decoded.api_listener)
      out.push({ kind: 'http', where: `${decoded.name} (API listener)`, config: decoded.api_listener.api_listener });
  }
  return out;
}

/** The fields of a decoded stdout JSON access log. */
const stdoutFields = (log: Json): Json =>
  Object.fromEntries(
    Object.entries(log.typed_config.log_format.json_format.fields).map(([k, v]) => [k, (v as Json).stringValue]),
  );

function checked(res: EnvoyResources): void {
  expect(validateResources(res)).toEqual([]);
  expect(envoyLoadProblems(res)).toEqual([]);
  for (const r of res.routes) encodeMessage('envoy.config.route.v3.RouteConfiguration', r);
  for (const c of res.clusters) encodeMessage('envoy.config.cluster.v3.Cluster', c);
  for (const e of res.endpoints) encodeMessage('envoy.config.endpoint.v3.ClusterLoadAssignment', e);
}

describe('access logs in the xDS resources', () => {
  it('by default every connection manager and proxy writes JSON lines to stdout', () => {
    const { res } = build();
    checked(res);
    const all = proxies(res);
    expect(all.map((p) => p.kind).sort()).toEqual(['http', 'http', 'tcp', 'tcp', 'udp']);
    for (const p of all) {
      expect([p.where, p.config.access_log?.length]).toEqual([p.where, 1]);
      const [log] = p.config.access_log;
      expect(log.name).toBe('envoy.access_loggers.stdout');
      expect(log.typed_config['@type']).toBe(
        'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog',
      );
      expect(log.typed_config.log_format.json_format_options).toEqual({ sort_properties: true });
      expect(stdoutFields(log).gateway).toBe('infra/gw');
    }
    const http = stdoutFields(all.find((p) => p.kind === 'http')!.config.access_log[0]);
    expect(http).toMatchObject({
      method: '%REQ(:METHOD)%',
      path: '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%',
      response_code: '%RESPONSE_CODE%',
      route_name: '%ROUTE_NAME%',
      listener: '%FILTER_CHAIN_NAME%',
    });
  });

  it('HTTP filter chains are named after their listener, for the listener field', () => {
    const { res } = build();
    const chains = res.listeners.flatMap((l) => (l.filter_chains ?? []).map((c) => `${l.name}: ${c.name}`));
    expect(chains).toEqual(
      expect.arrayContaining([
        'tcp-80: Gateway/infra/gw/http',
        'tcp-443: Gateway/infra/gw/https',
        'tcp-9000: Gateway/infra/gw/tcp',
      ]),
    );
  });

  it('TCP entries keep what a connection has, and name the route and the listener', () => {
    const { res } = build();
    const tcp = proxies(res)
      .filter((p) => p.kind === 'tcp')
      .map((p) => stdoutFields(p.config.access_log[0]));
    for (const fields of tcp) {
      for (const httpOnly of [
        'method',
        'authority',
        'path',
        'protocol',
        'response_code',
        'response_code_details',
        'user_agent',
        'x_forwarded_for',
        'request_id',
        'upstream_service_time',
      ])
        expect(fields).not.toHaveProperty(httpOnly);
      expect(fields).toMatchObject({
        start_time: '%START_TIME%',
        bytes_received: '%BYTES_RECEIVED%',
        bytes_sent: '%BYTES_SENT%',
        duration_ms: '%DURATION%',
        response_flags: '%RESPONSE_FLAGS%',
        upstream_cluster: '%UPSTREAM_CLUSTER%',
        upstream_host: '%UPSTREAM_HOST%',
        downstream_remote_address: '%DOWNSTREAM_REMOTE_ADDRESS%',
      });
    }
    expect(tcp.map((f) => [f.route_name, f.listener]).sort()).toEqual([
      ['tcproute/apps/raw/rule/0', 'Gateway/infra/gw/tcp'],
      ['tlsroute/apps/pass/rule/0', 'Gateway/infra/gw/tls'],
    ]);
  });

  it('UDP entries take their bytes and cluster from the UDP proxy', () => {
    const { res } = build();
    const udp = stdoutFields(proxies(res).find((p) => p.kind === 'udp')!.config.access_log[0]);
    expect(udp).toEqual({
      bytes_received: '%DYNAMIC_METADATA(udp.proxy:bytes_received)%',
      bytes_sent: '%DYNAMIC_METADATA(udp.proxy:bytes_sent)%',
      downstream_remote_address: '%DOWNSTREAM_REMOTE_ADDRESS%',
      gateway: 'infra/gw',
      listener: 'Gateway/infra/gw/udp',
      route_name: 'udproute/apps/dns/rule/0',
      start_time: '%START_TIME%',
      upstream_cluster: '%DYNAMIC_METADATA(udp.proxy:cluster_name)%',
      upstream_host: '%UPSTREAM_HOST%',
    });
  });

  it('an OpenTelemetry collector gets every entry too, over its HTTP/2 cluster', () => {
    const { ir, res } = build({
      openTelemetry: { backendRef: { name: 'otel', port: 4317 } },
      json: { tenant: '%REQ(X-TENANT)%' },
    });
    checked(res);
    expect(ir.accessLog!.openTelemetry).toEqual({ cluster: 'infra/otel/4317/h2' });
    const cluster = res.clusters.find((c) => c.name === 'infra/otel/4317/h2')!;
    expect(cluster).toMatchObject({ type: 'EDS', http2_protocol_options: {} });
    expect(res.endpoints.map((e) => e.cluster_name)).toContain('infra/otel/4317/h2');
    for (const p of proxies(res)) {
      expect([p.where, p.config.access_log.map((l: Json) => l.name)]).toEqual([
        p.where,
        ['envoy.access_loggers.stdout', 'envoy.access_loggers.open_telemetry'],
      ]);
      const otel = p.config.access_log[1].typed_config;
      expect(otel.common_config).toMatchObject({
        log_name: `turnpike/${p.kind}`,
        transport_api_version: 'V3',
        grpc_service: { envoy_grpc: { cluster_name: 'infra/otel/4317/h2' } },
      });
      const attributes = Object.fromEntries(otel.attributes.values.map((kv: Json) => [kv.key, kv.value.string_value]));
      expect(attributes).toEqual(stdoutFields(p.config.access_log[0]));
      if (p.kind === 'http') expect(attributes.tenant).toBe('%REQ(X-TENANT)%');
      else expect(attributes).not.toHaveProperty('tenant');
    }
  });

  it('Text goes as a line to stdout and as the body to the collector', () => {
    const text = '%START_TIME% %ROUTE_NAME% %BYTES_SENT%';
    const { res } = build({ format: 'Text', text, openTelemetry: { backendRef: { name: 'otel', port: 4317 } } });
    checked(res);
    const byKind = new Map(proxies(res).map((p) => [p.kind, p.config.access_log]));
    expect(byKind.get('http')[0].typed_config.log_format).toMatchObject({
      text_format_source: { inline_string: `${text}\n` },
    });
    expect(byKind.get('http')[1].typed_config.body).toMatchObject({ string_value: text });
    expect(byKind.get('udp')[0].typed_config.log_format.text_format_source.inline_string).toBe(
      '%START_TIME% udproute/apps/dns/rule/0 %DYNAMIC_METADATA(udp.proxy:bytes_sent)%\n',
    );
    const attributes = byKind.get('tcp')[1].typed_config.attributes.values.map((kv: Json) => kv.key);
    expect(attributes).toEqual(['gateway', 'listener']);
  });

  it('disabled: no access log anywhere, and the API listeners of proxyless gRPC clients never have one', () => {
    for (const p of proxies(build({ disabled: true }).res))
      expect([p.where, p.config.access_log]).toEqual([p.where, undefined]);
    const api = proxies(build(undefined, true).res).filter((p) => p.where.endsWith('(API listener)'));
    expect(api.length).toBeGreaterThan(0);
    for (const p of api) expect(p.config.access_log).toBeUndefined();
  });
});
