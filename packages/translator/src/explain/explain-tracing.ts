// What `explain` says of a Gateway's tracing (XTelemetryPolicy, GEP-4768): which policy applies, where
// spans go, how they are sampled, named and tagged. Export header values are not printed: they are
// often a collector's API key.
import type { TracingIR } from '@turnpike/api';

export function tracingText(t: TracingIR): string {
  const parts = [`spans to ${t.authority} (cluster ${t.cluster})`];
  // Envoy's default when the policy sets no rate: every new trace (random_sampling absent = 100 %).
  parts.push(`${t.samplingPercent ?? 100}% of new traces sampled, a sampled parent's decision kept`);
  if (t.serviceName) parts.push(`service.name ${t.serviceName}`);
  if (t.spanName) parts.push(`every span named ${t.spanName}`);
  const tags = (t.tags ?? []).map((g) =>
    g.requestHeader !== undefined ? `${g.name} from header ${g.requestHeader}` : `${g.name}=${g.literal ?? ''}`,
  );
  if (tags.length) parts.push(`tags ${tags.join(', ')}`);
  const headers = t.headers ?? [];
  if (headers.length) parts.push(`export headers ${headers.map((h) => h.name).join(', ')} (values not shown)`);
  return `traced by XTelemetryPolicy ${t.policy}: ${parts.join('; ')}`;
}
