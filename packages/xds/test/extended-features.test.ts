// The extended Gateway API features we claim, each checked from manifests to the Envoy resources
// the proxy receives (every resource PGV-valid), in tests named after the upstream conformance
// test that exercises the feature with traffic. Status-only conformance tests run in e2e.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import {
  decodeMessage,
  encodeMessage,
  envoyResourcesFor,
  validateResources,
  type EnvoyResources,
} from '../src/index.js';
import {
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  route,
  service,
  tlsSecret,
} from '../../translator/test/builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../../translator/test/tls-fixtures.js';

const toGw = { name: 'gw', namespace: 'infra' };
const base = [gatewayClass(), gateway('gw', [http()]), service('web'), endpointSlice('web')];

/** The Envoy resources of infra/gw for these objects; fails on any PGV violation. */
function envoy(objects: KubeObject[]): EnvoyResources & { statuses: ReturnType<Translator['translate']>['statuses'] } {
  const snapshot = snapshotFromObjects(objects);
  const r = new Translator().translate(snapshot);
  const lookup = (kind: string, ns: string, name: string) =>
    snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
  const res = envoyResourcesFor(r.xdsIR.gateways.get('infra/gw')!, lookup, undefined, r.xdsIR.endpoints);
  expect(validateResources(res)).toEqual([]);
  for (const rc of res.routes) encodeMessage('envoy.config.route.v3.RouteConfiguration', rc);
  return Object.assign(res, { statuses: r.statuses });
}

const routesOf = (res: EnvoyResources) =>
  res.routes.flatMap((rc) => rc.virtual_hosts ?? []).flatMap((v) => v.routes ?? []);
const one = (spec: Record<string, unknown>, extra: KubeObject[] = []) =>
  routesOf(envoy([...base, ...extra, httpRoute('r', { parentRefs: [toGw], ...spec })]))[0]!;
const hcm = (res: EnvoyResources) =>
  res.listeners[0]!.filter_chains![0]!.filters![0]!.typed_config as unknown as Record<string, any>;

describe('extended features', () => {
  for (const [code, envoyCode] of [
    [303, 'SEE_OTHER'],
    [307, 'TEMPORARY_REDIRECT'],
    [308, 'PERMANENT_REDIRECT'],
  ] as const) {
    it(`HTTPRoute${code}Redirect: statusCode ${code} is the redirect's response code`, () => {
      const r = one({
        rules: [
          { filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: code, hostname: 'example.org' } }] },
        ],
      });
      expect(r.redirect).toMatchObject({ response_code: envoyCode, host_redirect: 'example.org' });
    });
  }

  it('HTTPRouteCORS: the route carries a CORS policy and the listener runs the CORS filter', () => {
    const res = envoy([
      ...base,
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [
          {
            filters: [
              {
                type: 'CORS',
                cors: {
                  allowOrigins: ['https://app.example.com', 'https://*.example.org'],
                  allowMethods: ['GET', 'POST'],
                  allowHeaders: ['x-a'],
                  exposeHeaders: ['x-b'],
                  allowCredentials: true,
                  maxAge: 600,
                },
              },
            ],
            backendRefs: [{ name: 'web', port: 8080 }],
          },
        ],
      }),
    ]);
    const policy = routesOf(res)[0]!.typed_per_filter_config!['envoy.filters.http.cors'] as unknown as Record<
      string,
      any
    >;
    expect(policy.allow_origin_string_match).toEqual([
      { exact: 'https://app.example.com' },
      // A '*' is greedy: it matches any characters, dots included.
      { safe_regex: { regex: '^https://.+\\.example\\.org$' } },
    ]);
    expect(policy).toMatchObject({
      allow_methods: 'GET,POST',
      allow_headers: 'x-a',
      expose_headers: 'x-b',
      allow_credentials: { value: true },
      max_age: '600',
    });
    expect(hcm(res).http_filters.map((f: { name: string }) => f.name)).toContain('envoy.filters.http.cors');
  });

  it('HTTPRouteRetryCodes: listed codes and failures before the request was sent; a backend timeout adds reset', () => {
    const r = one({
      rules: [
        {
          retry: { codes: [500, 503], attempts: 3, backoff: '100ms' },
          timeouts: { backendRequest: '2s' },
          backendRefs: [{ name: 'web', port: 8080 }],
        },
      ],
    });
    expect(r.route!.retry_policy).toEqual({
      retry_on: 'retriable-status-codes,connect-failure,refused-stream,reset-before-request,reset',
      num_retries: { value: 3 },
      retriable_status_codes: [500, 503],
      retry_back_off: { base_interval: { seconds: '0', nanos: 100_000_000 } },
      per_try_timeout: { seconds: '2', nanos: 0 },
    });
  });

  it('HTTPRouteRetryConnectionError: without codes only failures before the request was sent are retried', () => {
    const r = one({ rules: [{ retry: {}, backendRefs: [{ name: 'web', port: 8080 }] }] });
    // Not `5xx` nor `reset`: v1.7 says a request that may have been processed SHOULD NOT be retried.
    expect(r.route!.retry_policy).toEqual({
      retry_on: 'connect-failure,refused-stream,reset-before-request',
      num_retries: { value: 1 },
    });
  });

  it('HTTPRouteRetry: attempts 0 disables retries (num_retries 0) and the rule is served', () => {
    const r = one({ rules: [{ retry: { codes: [500], attempts: 0 }, backendRefs: [{ name: 'web', port: 8080 }] }] });
    expect(r.direct_response).toBeUndefined();
    expect(r.route!.retry_policy!.num_retries).toEqual({ value: 0 });
  });

  it('HTTPRouteRetry: a retry stanza with an impossible code makes the rule invalid (500), naming the field', () => {
    const res = envoy([
      ...base,
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [{ retry: { codes: [200] }, backendRefs: [{ name: 'web', port: 8080 }] }],
      }),
    ]);
    expect(routesOf(res)[0]!.direct_response).toEqual({ status: 500 });
    expect(JSON.stringify(res.statuses.get('HTTPRoute/apps/r'))).toContain(
      'spec.rules[0].retry.codes[0]: 200 is not an HTTP status code from 400 to 599',
    );
  });

  it("GRPCRouteRequestHeaderModifier: set, add and remove on a GRPCRoute rule become the route's header changes", () => {
    const res = envoy([
      ...base,
      route('GRPCRoute', 'g', {
        parentRefs: [toGw],
        rules: [
          {
            filters: [
              {
                type: 'RequestHeaderModifier',
                requestHeaderModifier: {
                  set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }],
                  add: [{ name: 'X-Header-Add', value: 'header-val-1' }],
                  remove: ['X-Header-Remove'],
                },
              },
            ],
            backendRefs: [{ name: 'web', port: 8080 }],
          },
        ],
      }),
    ]);
    const r = routesOf(res)[0]!;
    expect(r.request_headers_to_add).toEqual([
      { header: { key: 'X-Header-Set', value: 'set-overwrites-values' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
      { header: { key: 'X-Header-Add', value: 'header-val-1' }, append_action: 'APPEND_IF_EXISTS_OR_ADD' },
    ]);
    expect(r.request_headers_to_remove).toEqual(['X-Header-Remove']);
    // A gRPC backend is reached over HTTP/2, header changes and all.
    expect(res.clusters.find((c) => c.name === r.route!.cluster)!.http2_protocol_options).toEqual({});
  });

  it('HTTPRouteBackendRequestHeaderModifier and HTTPRouteRequestHeaderModifierBackendWeights: per-backend header changes on each weighted cluster', () => {
    const mod = (v: string) => [
      {
        type: 'RequestHeaderModifier',
        requestHeaderModifier: { set: [{ name: 'x-backend', value: v }], remove: ['x-drop'] },
      },
    ];
    const r = one(
      {
        rules: [
          {
            backendRefs: [
              { name: 'web', port: 8080, weight: 70, filters: mod('web') },
              { name: 'alt', port: 8080, weight: 30, filters: mod('alt') },
            ],
          },
        ],
      },
      [service('alt'), endpointSlice('alt')],
    );
    const clusters = r.route!.weighted_clusters!.clusters!;
    expect(
      clusters.map((c) => [
        c.name,
        c.weight,
        c.request_headers_to_add?.[0]?.header?.value,
        c.request_headers_to_remove,
      ]),
    ).toEqual([
      ['apps/web/8080', { value: 70 }, 'web', ['x-drop']],
      ['apps/alt/8080', { value: 30 }, 'alt', ['x-drop']],
    ]);
  });

  it('HTTPRouteNamedRule: a rule name reaches the Envoy route metadata and survives encoding; duplicate names are invalid', () => {
    const r = one({ rules: [{ name: 'checkout', backendRefs: [{ name: 'web', port: 8080 }] }] });
    const back = decodeMessage(
      'envoy.config.route.v3.Route',
      encodeMessage('envoy.config.route.v3.Route', r),
    ) as Record<string, any>;
    expect(back.metadata.filter_metadata['turnpike.dev'].fields.rule_name.stringValue).toBe('checkout');
    const dup = envoy([
      ...base,
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [
          {
            name: 'a',
            matches: [{ path: { type: 'PathPrefix', value: '/x' } }],
            backendRefs: [{ name: 'web', port: 8080 }],
          },
          {
            name: 'a',
            matches: [{ path: { type: 'PathPrefix', value: '/y' } }],
            backendRefs: [{ name: 'web', port: 8080 }],
          },
        ],
      }),
    ]);
    expect(JSON.stringify(dup.statuses.get('HTTPRoute/apps/r'))).toContain(
      'spec.rules[1].name: \\"a\\" is already the name of spec.rules[0]',
    );
  });

  it('GRPCRouteNamedRule: GRPCRoute rule names reach the Envoy route too', () => {
    const res = envoy([
      ...base,
      route('GRPCRoute', 'g', {
        parentRefs: [toGw],
        rules: [{ name: 'echo', backendRefs: [{ name: 'web', port: 8080 }] }],
      }),
    ]);
    expect(
      (routesOf(res)[0]!.metadata!.filter_metadata!['turnpike.dev'] as unknown as Record<string, any>).fields.rule_name,
    ).toEqual({ stringValue: 'echo' });
  });

  it('HTTPRouteBackendProtocolH2C: a Service port with appProtocol kubernetes.io/h2c gets an HTTP/2 cluster', () => {
    const res = envoy([
      gatewayClass(),
      gateway('gw', [http()]),
      service('web', 'apps', [{ name: 'h2c', port: 8080, protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' }]),
      endpointSlice('web', 'apps', ['10.1.0.1'], 8080, 'h2c'),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
    ]);
    // The name says what the route asks (HTTP), not what the Service says: an appProtocol change
    // re-configures the one cluster and leaves every route that sends to it as it was.
    expect(res.clusters.find((c) => c.name === 'apps/web/8080')!.http2_protocol_options).toEqual({});
    const plain = envoy([
      gatewayClass(),
      gateway('gw', [http()]),
      service('web', 'apps', [{ name: 'h2c', port: 8080, protocol: 'TCP' }]),
      endpointSlice('web', 'apps', ['10.1.0.1'], 8080, 'h2c'),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
      route('GRPCRoute', 'g', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
    ]);
    // A GRPCRoute speaks HTTP/2 to a plain port; the HTTPRoute beside it keeps HTTP/1.1.
    expect(plain.clusters.find((c) => c.name === 'apps/web/8080/h2')!.http2_protocol_options).toEqual({});
    expect(plain.clusters.find((c) => c.name === 'apps/web/8080')!.http2_protocol_options).toBeUndefined();
  });

  it('HTTPRouteBackendProtocolWebSocket: the connection manager lets WebSocket upgrades through', () => {
    const res = envoy([
      gatewayClass(),
      gateway('gw', [http()]),
      service('web', 'apps', [{ name: 'ws', port: 8080, protocol: 'TCP', appProtocol: 'kubernetes.io/ws' }]),
      endpointSlice('web', 'apps', ['10.1.0.1'], 8080, 'ws'),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
    ]);
    expect(hcm(res).upgrade_configs).toEqual([{ upgrade_type: 'websocket' }]);
    expect(res.clusters.find((c) => c.name === 'apps/web/8080')!.http2_protocol_options).toBeUndefined();
  });

  const policy = (sans?: unknown[]) =>
    ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'p', namespace: 'apps', generation: 1 },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'web' }],
        validation: {
          hostname: 'web.apps.svc',
          caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
          ...(sans ? { subjectAltNames: sans } : {}),
        },
      },
    }) as never;
  const ca = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'ca', namespace: 'apps' },
    data: { 'ca.crt': EXAMPLE_COM_CERT },
  } as never;
  const upstreamTls = (res: EnvoyResources) =>
    res.clusters.find((c) => c.name === 'apps/web/8080')!.transport_socket!.typed_config as unknown as Record<
      string,
      any
    >;

  it('BackendTLSPolicySANValidation: subjectAltNames (hostname and URI) replace the hostname as what the backend certificate must match', () => {
    const res = envoy([
      ...base,
      ca,
      policy([
        { type: 'Hostname', hostname: 'alt.example.com' },
        { type: 'URI', uri: 'spiffe://cluster.local/ns/apps/sa/web' },
      ]),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
    ]);
    const t = upstreamTls(res);
    expect(t.sni).toBe('web.apps.svc');
    expect(t.common_tls_context.validation_context.match_typed_subject_alt_names).toEqual([
      { san_type: 'DNS', matcher: { exact: 'alt.example.com' } },
      { san_type: 'URI', matcher: { exact: 'spiffe://cluster.local/ns/apps/sa/web' } },
    ]);
  });

  it('BackendTLSPolicy subjectAltNames: the SAN type is the one `type` names, not guessed from the value', () => {
    const res = envoy([
      ...base,
      ca,
      // A URN has no `://`, and a hostname-typed name could hold one: neither may change type.
      policy([
        { type: 'URI', uri: 'urn:example:backend' },
        { type: 'Hostname', hostname: 'web.apps.svc' },
      ]),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
    ]);
    expect(upstreamTls(res).common_tls_context.validation_context.match_typed_subject_alt_names).toEqual([
      { san_type: 'URI', matcher: { exact: 'urn:example:backend' } },
      { san_type: 'DNS', matcher: { exact: 'web.apps.svc' } },
    ]);
  });

  it('BackendTLSPolicyGRPCRoute: a GRPCRoute to a TLS backend offers ALPN h2; an HTTP/1.1 cluster offers none', () => {
    const res = envoy([
      ...base,
      ca,
      policy(),
      route('GRPCRoute', 'g', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
    ]);
    const tlsOf = (c: { transport_socket?: { typed_config?: unknown } }) =>
      (c.transport_socket!.typed_config as Record<string, any>).common_tls_context;
    const h2 = res.clusters.filter((c) => c.http2_protocol_options);
    const h1 = res.clusters.filter((c) => !c.http2_protocol_options && c.transport_socket);
    expect(h2).toHaveLength(1);
    expect(h1).toHaveLength(1);
    expect(tlsOf(h2[0]!).alpn_protocols).toEqual(['h2']);
    expect(tlsOf(h1[0]!).alpn_protocols).toBeUndefined();
    expect(validateResources(res)).toEqual([]);
  });

  it("GatewayTLSBackendClientCertificate: the Gateway's client certificate is presented to TLS backends over SDS", () => {
    const gw = gateway('gw', [http()], { tls: { backend: { clientCertificateRef: { name: 'client' } } } });
    const res = envoy([
      gatewayClass(),
      gw,
      service('web'),
      endpointSlice('web'),
      ca,
      policy(),
      tlsSecret('client', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
    ]);
    expect(upstreamTls(res).common_tls_context.tls_certificate_sds_secret_configs).toEqual([
      { name: 'infra/client', sds_config: { ads: {}, resource_api_version: 'V3' } },
    ]);
    expect(res.secrets.map((s) => s.name)).toEqual(['infra/client']);
  });

  const frontend = (mode?: string) =>
    gateway(
      'gw',
      [
        {
          name: 'https',
          port: 443,
          protocol: 'HTTPS',
          hostname: 'example.com',
          tls: { certificateRefs: [{ name: 'cert' }] },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ],
      {
        tls: {
          frontend: {
            default: {
              validation: {
                caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'client-ca' }],
                ...(mode ? { mode } : {}),
              },
            },
          },
        },
      },
    );
  const clientCa = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'client-ca', namespace: 'infra' },
    data: { 'ca.crt': EXAMPLE_COM_CERT },
  } as never;
  const downstream = (mode?: string) => {
    const res = envoy([
      gatewayClass(),
      frontend(mode),
      clientCa,
      tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      service('web'),
      endpointSlice('web'),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
    ]);
    return res.listeners[0]!.filter_chains![0]!.transport_socket!.typed_config as unknown as Record<string, any>;
  };

  it('GatewayFrontendClientCertificateValidation: clients must present a certificate from the CA', () => {
    const t = downstream();
    expect(t.require_client_certificate).toEqual({ value: true });
    expect(t.common_tls_context.validation_context.trusted_ca.inline_string).toBe(EXAMPLE_COM_CERT);
    expect(t.common_tls_context.validation_context.trust_chain_verification).toBeUndefined();
  });

  it('GatewayFrontendClientCertificateValidationInsecureFallback: a missing or untrusted certificate does not refuse the connection', () => {
    const t = downstream('AllowInsecureFallback');
    expect(t.require_client_certificate).toEqual({ value: false });
    expect(t.common_tls_context.validation_context.trust_chain_verification).toBe('ACCEPT_UNTRUSTED');
  });

  it('GatewayHTTPListenerIsolation: a request host is answered only by the routes of the most specific listener that matches it', () => {
    const listeners = [
      http('empty', 80),
      http('wild', 80, { hostname: '*.example.com' }),
      http('wild-foo', 80, { hostname: '*.foo.example.com' }),
      http('abc-foo', 80, { hostname: 'abc.foo.example.com' }),
      http('quiet', 80, { hostname: 'quiet.example.com' }),
    ];
    const onListener = (name: string, section: string, hostnames?: string[]) =>
      httpRoute(name, {
        parentRefs: [{ ...toGw, sectionName: section }],
        ...(hostnames ? { hostnames } : {}),
        rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }],
      });
    const res = envoy([
      gatewayClass(),
      gateway('gw', listeners),
      service('web'),
      endpointSlice('web'),
      onListener('r-empty', 'empty'),
      onListener('r-wild', 'wild'),
      onListener('r-wild-foo', 'wild-foo'),
      onListener('r-abc-foo', 'abc-foo'),
      // Names a host that a more specific listener owns: it must not be served there through "wild".
      onListener('r-wild-greedy', 'wild', ['abc.foo.example.com', 'bar.example.com']),
    ]);
    const vhosts = new Map(
      res.routes[0]!.virtual_hosts!.map((v) => [v.domains![0]!, (v.routes ?? []).map((r) => r.name!.split('/')[2])]),
    );
    expect(vhosts.get('abc.foo.example.com')).toEqual(['r-abc-foo']);
    expect(vhosts.get('*.foo.example.com')).toEqual(['r-wild-foo']);
    expect(vhosts.get('*.example.com')).toEqual(['r-wild']);
    // The same listener's wider host follows: a request to bar.example.com that no rule of
    // r-wild-greedy matches is r-wild's.
    expect(vhosts.get('bar.example.com')).toEqual(['r-wild-greedy', 'r-wild']);
    expect(vhosts.get('*')).toEqual(['r-empty']);
    // A listener with no route still owns its host: the proxy answers 404 rather than a wider listener's routes.
    expect(vhosts.get('quiet.example.com')).toEqual([]);
  });

  it('HTTPRouteHTTPSListenerDetectMisdirectedRequests: on a connection for one HTTPS listener, a host it does not serve is answered 421', () => {
    const https = (name: string, hostname: string) => ({
      name,
      port: 443,
      protocol: 'HTTPS',
      hostname,
      tls: { certificateRefs: [{ name: 'cert' }] },
      allowedRoutes: { namespaces: { from: 'All' } },
    });
    const res = envoy([
      gatewayClass(),
      gateway('gw', [https('a', 'a.example.com'), https('b', 'b.example.com')]),
      tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      service('web'),
      endpointSlice('web'),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }),
    ]);
    for (const rc of res.routes) {
      const domains = rc.virtual_hosts!.map((v) => v.domains![0]);
      expect(domains.length).toBe(2);
      const fallback = rc.virtual_hosts!.find((v) => v.domains![0] === '*')!;
      expect(fallback.routes![0]!.direct_response).toEqual({ status: 421 });
    }
    expect(res.routes.map((rc) => rc.virtual_hosts!.find((v) => v.domains![0] !== '*')!.domains![0]).sort()).toEqual([
      'a.example.com',
      'b.example.com',
    ]);
  });

  it('TLSRouteMixedTerminationSameNamespace: on one port, the terminating chain has a TLS transport socket and the passthrough chain none', () => {
    const res = envoy([
      gatewayClass(),
      tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      service('web'),
      endpointSlice('web'),
      gateway('gw', [
        {
          name: 'term',
          port: 8443,
          protocol: 'TLS',
          hostname: 'a.test',
          tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
        {
          name: 'pass',
          port: 8443,
          protocol: 'TLS',
          hostname: 'b.test',
          tls: { mode: 'Passthrough' },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ]),
      route('TLSRoute', 't', {
        parentRefs: [{ ...toGw, sectionName: 'term' }],
        rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }],
      }),
      route('TLSRoute', 'p', {
        parentRefs: [{ ...toGw, sectionName: 'pass' }],
        rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }],
      }),
    ]);
    const chains = res.listeners[0]!.filter_chains!.map((c) => [
      c.filter_chain_match!.server_names,
      !!c.transport_socket,
    ]);
    expect(chains).toEqual([
      [['b.test'], false],
      [['a.test'], true],
    ]);
  });
});
