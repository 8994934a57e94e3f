// XTelemetryPolicy (GEP-4768) → a Gateway's tracing. Each policy is judged on its own (judgeTelemetryPolicy):
// what of its `tracing` Envoy can do, and its provider resolved as a route's backendRef is (a Service
// port, a ReferenceGrant from the Service's namespace for another namespace). The stage
// (stages/telemetry-stage.ts) then picks, per Gateway, the one policy that applies and writes the statuses.
//
// Envoy's HTTP connection manager traces through its OpenTelemetry tracer (envoy.tracers.opentelemetry,
// OTLP over gRPC, so the provider is an HTTP/2 cluster). What it cannot express is refused with
// Accepted=False/Invalid naming the field, never ignored:
// - parentBasedSampling Disabled: with an incoming traceparent, Envoy's tracer takes the parent's sampled
//   flag as the decision (a sampler extension would be needed to overrule it);
// - parentBasedSampling.samplingRate below 100%: Envoy cannot downsample sampled parents;
// - attributes of sourceType Attribute other than those read from the request's headers: Envoy's
//   custom tags are literals, environment variables, request headers and metadata only, so the response
//   (http.response.status_code, http.response.header.*, error.type), the route (http.route), the
//   connection (client.*, network.*, server.port) and the parts of the URL (url.path, url.query,
//   url.full, url.fragment: :path holds path and query together) cannot be tags of their own.
import type { ClusterIR, TelemetryFraction, TracingIR, XTelemetryPolicy } from '@turnpike/api';
import type { TranslationContext } from '../context.js';
import { resolveBackend } from '../routes/backends.js';
import type { Problem } from '../status/conditions.js';

const GROUP = 'gateway.networking.x-k8s.io';

/**
 * The GEP-5253 attributes Envoy can tag a span with: those read from a request header (pseudo-header
 * or not). `http.request.header.<key>` is the header `<key>` itself.
 */
export const REQUEST_HEADER_ATTRIBUTES: Readonly<Record<string, string>> = Object.freeze({
  'http.request.method': ':method',
  'url.scheme': ':scheme',
  'user_agent.original': 'user-agent',
});
const REQUEST_HEADER_PREFIX = 'http.request.header.';

export interface TelemetryVerdict {
  /** Accepted=False/Invalid: what Envoy cannot do, naming the field. */
  invalid?: Problem;
  /** ResolvedRefs=False: the provider. */
  refs?: Problem;
  /** The provider's cluster, when it resolves. */
  resolved?: string;
  /** tracing.mode Enabled and everything resolves: what the Gateways it applies to get. */
  tracing?: { ir: TracingIR; cluster: ClusterIR };
}

const percent = (f: TelemetryFraction): number | undefined => {
  const d = f.denominator ?? 100;
  // "Permutations of numerator > denominator are invalid and MUST be rejected via validation."
  if (!(d > 0) || f.numerator < 0 || f.numerator > d) return undefined;
  return (f.numerator / d) * 100;
};

export function judgeTelemetryPolicy(
  ctx: Pick<TranslationContext, 'inputs' | 'backendTLS'>,
  p: XTelemetryPolicy,
): TelemetryVerdict {
  const t = p.spec.tracing;
  if (!t || t.mode !== 'Enabled') return {};
  const ref = t.provider?.backendRef;
  const r = ref
    ? resolveBackend(ctx, p, 'XTelemetryPolicy', ref, 'spec.tracing.provider.backendRef', 'h2', GROUP)
    : undefined;
  const refs: TelemetryVerdict = r?.backend ? { resolved: r.backend.cluster.name } : r ? { refs: r.problem! } : {};
  const invalid = (message: string): TelemetryVerdict => ({ ...refs, invalid: { reason: 'Invalid', message } });
  let samplingPercent: number | undefined;
  if (t.samplingRate) {
    samplingPercent = percent(t.samplingRate);
    if (samplingPercent === undefined)
      return invalid('spec.tracing.samplingRate: the numerator must be at most the denominator, which must be > 0');
  }
  const parent = t.parentBasedSampling;
  if (parent?.mode === 'Disabled')
    return invalid(
      'spec.tracing.parentBasedSampling.mode Disabled is not supported: Envoy takes the sampled flag of an ' +
        'incoming traceparent as the sampling decision and cannot apply its own rate instead',
    );
  if (parent?.samplingRate) {
    const pp = percent(parent.samplingRate);
    if (pp === undefined)
      return invalid(
        'spec.tracing.parentBasedSampling.samplingRate: the numerator must be at most the denominator, which must be > 0',
      );
    if (pp < 100)
      return invalid(
        'spec.tracing.parentBasedSampling.samplingRate below 100% is not supported: Envoy cannot downsample ' +
          'requests whose parent is sampled',
      );
  }
  const tags: NonNullable<TracingIR['tags']> = [];
  for (const [i, a] of (t.attributes ?? []).entries()) {
    const field = `spec.tracing.attributes[${i}]`;
    if (a.sourceType === 'Literal' && a.literalValue) tags.push({ name: a.name, literal: a.literalValue });
    else if (a.sourceType === 'Header' && a.headerName)
      tags.push({ name: a.name, requestHeader: a.headerName.toLowerCase() });
    else if (a.sourceType === 'Attribute' && a.attributeKey) {
      const key = a.attributeKey;
      const header = key.startsWith(REQUEST_HEADER_PREFIX)
        ? key.slice(REQUEST_HEADER_PREFIX.length)
        : REQUEST_HEADER_ATTRIBUTES[key];
      if (!header)
        return invalid(
          `${field}: attribute ${key} is not supported: Envoy tags spans with literals and request headers ` +
            `only; supported: ${Object.keys(REQUEST_HEADER_ATTRIBUTES).join(', ')}, ${REQUEST_HEADER_PREFIX}<key>`,
        );
      tags.push({ name: a.name, requestHeader: header });
    } else return invalid(`${field}: sourceType ${a.sourceType} without its value`);
  }
  if (!r) return invalid('spec.tracing.provider is required when mode is Enabled');
  if (!r.backend) return refs;
  const cluster = r.backend.cluster;
  const { namespace, name, port } = cluster.service;
  const ir: TracingIR = {
    cluster: cluster.name,
    authority: `${name}.${namespace}.svc:${port}`,
    policy: `${p.metadata.namespace ?? ''}/${p.metadata.name}`,
  };
  if (samplingPercent !== undefined) ir.samplingPercent = samplingPercent;
  if (t.serviceName) ir.serviceName = t.serviceName;
  if (t.spanName) ir.spanName = t.spanName;
  if (t.provider?.headers?.length) ir.headers = t.provider.headers.map((h) => ({ name: h.name, value: h.value }));
  if (tags.length) ir.tags = tags;
  return { resolved: cluster.name, tracing: { ir, cluster } };
}

/**
 * Which policy applies where several target one Gateway. GEP-4768: "If multiple TelemetryPolicy resources
 * target the same Gateway, precedence MUST be determined using the following criteria, continuing on ties:
 * 1. The older policy by creation timestamp takes precedence. 2. The policy appearing first in alphabetical
 * order by {namespace}/{name}."
 */
export function telemetryPrecedence(a: XTelemetryPolicy, b: XTelemetryPolicy): number {
  const ta = a.metadata.creationTimestamp ?? '',
    tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = `${a.metadata.namespace ?? ''}/${a.metadata.name}`,
    kb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
