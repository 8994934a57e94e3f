// The route-table check's model of Envoy's tracing (HttpConnectionManager.tracing with the OpenTelemetry
// tracer): for a request the router model (envoy-router.ts) routed, the span Envoy starts, as its
// documentation says it does:
// - the sampling decision: a request with a W3C `traceparent` keeps its parent's sampled flag (the
//   OpenTelemetry tracer extracts the parent context and takes its decision); one with `x-client-trace-id`
//   is traced at `client_sampling` (default 100%); any other starts a trace at `random_sampling` (default
//   100%), decided from the x-request-id Envoy generates, so modelled as a probability;
// - the span's name: the matched route's `decorator.operation` ("the operation name ... will override the
//   default"), else Envoy's default (not modelled: undefined);
// - custom tags: `literal` its value, `request_header` the request's header (pseudo-headers included), and
//   no tag when the header is absent and no default_value is set.
import type { Route } from '../../src/envoy-types.js';
import type { EnvoyResources } from '../../src/index.js';
import { listenerFor, selectFilterChain, type HttpOutcome, type HttpRequestSpec } from './envoy-router.js';
import type { HttpConnectionManager } from '../../src/envoy-types.js';

export interface ModelledSpan {
  /** The exporter's cluster. */
  collector: string;
  serviceName?: string;
  decision: { from: 'parent'; sampled: boolean } | { from: 'client' | 'random'; percent: number };
  name?: string;
  tags: Record<string, string>;
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-([0-9a-f]{2})$/;

/** The span Envoy starts for `req` (routed as `outcome`), or undefined when its connection manager traces nothing. */
export function traceHttp(res: EnvoyResources, req: HttpRequestSpec, outcome: HttpOutcome): ModelledSpan | undefined {
  if (outcome.kind !== 'http') return undefined;
  const listener = listenerFor(res, req.port);
  const chain = listener && selectFilterChain(listener, req.sni);
  const hcm = chain?.filters?.find((f) => f.name === 'envoy.filters.network.http_connection_manager')?.typed_config as
    HttpConnectionManager | undefined;
  const tracing = hcm?.tracing;
  if (!tracing?.provider) return undefined;
  const otel = tracing.provider.typed_config as {
    grpc_service?: { envoy_grpc?: { cluster_name?: string } };
    service_name?: string;
  };
  const headers = new Map<string, string>();
  for (const [k, v] of Object.entries(req.headers ?? {})) headers.set(k.toLowerCase(), v);
  headers.set(':method', req.method ?? 'GET');
  headers.set(':authority', req.authority);
  headers.set(':path', req.path);
  headers.set(':scheme', req.sni !== undefined ? 'https' : 'http');
  const parent = TRACEPARENT.exec(headers.get('traceparent') ?? '');
  const decision: ModelledSpan['decision'] = parent
    ? { from: 'parent', sampled: (parseInt(parent[1]!, 16) & 1) === 1 }
    : headers.has('x-client-trace-id')
      ? { from: 'client', percent: tracing.client_sampling?.value ?? 100 }
      : { from: 'random', percent: tracing.random_sampling?.value ?? 100 };
  const tags: Record<string, string> = {};
  for (const t of tracing.custom_tags ?? []) {
    if (!t.tag) continue;
    if (t.literal?.value !== undefined) tags[t.tag] = t.literal.value;
    else if (t.request_header?.name) {
      const v = headers.get(t.request_header.name.toLowerCase()) ?? t.request_header.default_value;
      if (v !== undefined && v !== '') tags[t.tag] = v;
    }
  }
  const rc = res.routes.find((r) => r.name === hcm?.rds?.route_config_name);
  const route: Route | undefined = rc?.virtual_hosts
    ?.find((vh) => vh.name === outcome.virtualHost)
    ?.routes?.find((r) => r.name === outcome.route);
  return {
    collector: otel.grpc_service?.envoy_grpc?.cluster_name ?? '',
    ...(otel.service_name ? { serviceName: otel.service_name } : {}),
    decision,
    ...(route?.decorator?.operation ? { name: route.decorator.operation } : {}),
    tags,
  };
}
