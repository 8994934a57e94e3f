// What a debug read (`turnpike proxy-config`) is sent of a Listener: the OpenTelemetry tracer's gRPC
// initial metadata (XTelemetryPolicy tracing.provider.headers, GEP-4768, sent with every export: often a
// collector's API key) with each value replaced by REDACTED, its keys kept to show what is sent. The
// tracer sits in each HTTP connection manager's `tracing.provider` (tracing.ts); nothing else changes.
import type protobuf from 'protobufjs';
import { messageType } from './proto-root.js';
import { REDACTED } from './redacted.js';

type Message = protobuf.Message & Record<string, unknown>;
interface AnyMessage {
  type_url: string;
  value: Uint8Array;
}

const LISTENER = 'envoy.config.listener.v3.Listener';
const HCM = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const OPENTELEMETRY = 'envoy.config.trace.v3.OpenTelemetryConfig';

const nameOf = (any: AnyMessage) => any.type_url.slice(any.type_url.lastIndexOf('/') + 1);

/** An Any re-encoded after `edit` changed its decoded message; false from `edit`: left as it is. */
function editAny(any: AnyMessage | null | undefined, name: string, edit: (m: Message) => boolean): boolean {
  if (!any || nameOf(any) !== name) return false;
  const type = messageType(name);
  const message = type.decode(any.value) as Message;
  if (!edit(message)) return false;
  any.value = type.encode(message).finish();
  return true;
}

function redactTracer(hcm: Message): boolean {
  const provider = (hcm.tracing as Message | null | undefined)?.provider as Message | null | undefined;
  return editAny(provider?.typed_config as AnyMessage | undefined, OPENTELEMETRY, (config) => {
    const metadata = (config.grpc_service as Message | null | undefined)?.initial_metadata as Message[] | undefined;
    if (!metadata?.length) return false;
    for (const m of metadata) m.value = REDACTED;
    return true;
  });
}

/** True when the Listener's bytes may hold tracer metadata: the tracer's type URL is in them (nested Anys are). */
export function mayHoldTracerMetadata(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(OPENTELEMETRY);
}

/** The Listener's bytes with every tracer's initial metadata values replaced by REDACTED. */
export function redactListenerBytes(bytes: Uint8Array): Buffer {
  const type = messageType(LISTENER);
  const listener = type.decode(bytes) as Message;
  const chains = [...((listener.filter_chains as Message[] | undefined) ?? [])];
  if (listener.default_filter_chain) chains.push(listener.default_filter_chain as Message);
  let changed = false;
  for (const chain of chains)
    for (const filter of (chain.filters as Message[] | undefined) ?? [])
      changed = editAny(filter.typed_config as AnyMessage | undefined, HCM, redactTracer) || changed;
  return changed ? Buffer.from(type.encode(listener).finish()) : Buffer.from(bytes);
}
