// Small Envoy values every resource builder uses: typed Any payloads, durations, the ADS config
// source and header mutations.
import type { HeaderChangesIR } from '@turnpike/api';
import type { Any, Duration, HeaderValueOption } from './envoy-types.js';

/** Resources that come over the same ADS stream as the one naming them. */
export const ADS = { ads: {}, resource_api_version: 'V3' as const };

export function typed<T extends object>(message: string, value: T): Any {
  return { '@type': `type.googleapis.com/${message}`, ...value } as Any;
}

/** A Gateway API duration (`1h2m3s4ms`) as a protobuf Duration. */
export function duration(d: string): Duration {
  let ms = 0;
  for (const [, n, unit] of d.matchAll(/(\d+)(h|ms|m|s)/g))
    ms += Number(n) * ({ h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as Record<string, number>)[unit as string]!;
  return msDuration(ms);
}

/** Milliseconds as a protobuf Duration. */
export function msDuration(ms: number): Duration {
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 };
}

export function headerOptions(c: HeaderChangesIR | undefined): HeaderValueOption[] {
  if (!c) return [];
  return [
    ...c.set.map((h): HeaderValueOption => ({
      header: { key: h.name, value: h.value },
      append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
    })),
    ...c.add.map((h): HeaderValueOption => ({
      header: { key: h.name, value: h.value },
      append_action: 'APPEND_IF_EXISTS_OR_ADD',
    })),
  ];
}
