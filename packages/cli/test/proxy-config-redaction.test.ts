// `turnpike proxy-config` never prints a tracer's export header values (XTelemetryPolicy provider headers,
// often a collector's API key), even from a controller that sent them to a debug read (it did before).
import { describe, expect, it } from '@jest/globals';
import { redactInitialMetadata } from '../src/commands/proxy-config.js';

const API_KEY = 'otlp-api-key-7f3c9a';

describe('proxy-config output', () => {
  it('security: the values of every gRPC initial metadata in a Listener are redacted, their keys kept', () => {
    const tracer = () => ({
      '@type': 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig',
      grpc_service: {
        envoy_grpc: { cluster_name: 'infra/otel/4317/h2' },
        initial_metadata: [{ key: 'x-api-key', value: API_KEY }],
      },
    });
    const listener = {
      name: 'http-80',
      filter_chains: [0, 1].map(() => ({
        filters: [{ typed_config: { tracing: { provider: { typed_config: tracer() } } } }],
      })),
    };
    const printed = JSON.stringify(redactInitialMetadata(listener));
    expect(printed).not.toContain(API_KEY);
    expect(printed.match(/\{"key":"x-api-key","value":"<redacted>"\}/g)).toHaveLength(2);
  });
});
