// A Gateway's tracing (TracingIR, from the XTelemetryPolicy that applies to it, GEP-4768) as its HTTP
// connection managers run it: Envoy's OpenTelemetry tracer (envoy.tracers.opentelemetry) exporting OTLP
// over gRPC to the provider's cluster (HTTP/2).
//
// Sampling, as Envoy decides it: a request without a trace parent starts a trace with probability
// random_sampling (tracing.samplingRate; Envoy records the decision in the x-request-id it generates);
// a request with a W3C traceparent keeps its parent's sampled flag (the OpenTelemetry tracer takes the
// parent's decision), which is GEP-4768's parent-based sampling; x-client-trace-id forces a trace
// (client_sampling, Envoy's default 100%). overall_sampling stays 100%.
//
// The span name (tracing.spanName) is the operation of a route decorator on each of the Gateway's routes
// (Envoy's connection manager has no span name of its own); the service name is the OpenTelemetry
// resource's service.name. spawn_upstream_span: the Gateway is a hop of its own in the trace, as Envoy's
// documentation asks of a gateway, so the backend's span is the child of an upstream span.
import type { GatewayIR, TracingIR } from '@turnpike/api';
import type { HttpConnectionManager, RouteConfiguration } from './envoy-types.js';
import { typed } from './envoy-values.js';

export type HcmTracing = NonNullable<HttpConnectionManager['tracing']>;

/** envoy.config.trace.v3.OpenTelemetryConfig, the fields we set (its generated type is not in the tree). */
interface OpenTelemetryConfig {
  grpc_service: {
    envoy_grpc: { cluster_name: string; authority: string };
    initial_metadata?: { key: string; value: string }[];
  };
  service_name?: string;
}

export const OPENTELEMETRY_TRACER = 'envoy.tracers.opentelemetry';

/** The connection manager's `tracing` for a Gateway, or undefined when it traces nothing. */
export function hcmTracing(gw: GatewayIR | undefined): HcmTracing | undefined {
  const t = gw?.tracing;
  if (!t) return undefined;
  const config: OpenTelemetryConfig = {
    grpc_service: {
      envoy_grpc: { cluster_name: t.cluster, authority: t.authority },
      ...(t.headers?.length
        ? { initial_metadata: t.headers.map((h) => ({ key: h.name.toLowerCase(), value: h.value })) }
        : {}),
    },
    ...(t.serviceName ? { service_name: t.serviceName } : {}),
  };
  return {
    provider: {
      name: OPENTELEMETRY_TRACER,
      typed_config: typed<OpenTelemetryConfig>('envoy.config.trace.v3.OpenTelemetryConfig', config),
    },
    ...(t.samplingPercent !== undefined ? { random_sampling: { value: t.samplingPercent } } : {}),
    spawn_upstream_span: { value: true },
    ...(t.tags?.length ? { custom_tags: t.tags.map(customTag) } : {}),
  };
}

function customTag(tag: NonNullable<TracingIR['tags']>[number]): NonNullable<HcmTracing['custom_tags']>[number] {
  return tag.literal !== undefined
    ? { tag: tag.name, literal: { value: tag.literal } }
    : { tag: tag.name, request_header: { name: tag.requestHeader! } };
}

/**
 * A route configuration with the span name on every route (a decorator's operation), when the Gateway
 * names one; the same object otherwise (routes are memoised: they are copied, never changed).
 */
export function withSpanName(rc: RouteConfiguration, gw: GatewayIR | undefined): RouteConfiguration {
  const operation = gw?.tracing?.spanName;
  if (!operation) return rc;
  return {
    ...rc,
    virtual_hosts: (rc.virtual_hosts ?? []).map((vh) => ({
      ...vh,
      routes: (vh.routes ?? []).map((r) => ({ ...r, decorator: { operation } })),
    })),
  };
}
