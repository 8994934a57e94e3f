// The conformance suite's echo backend as the route-table check sees it: it answers 200 with the
// request it received, waits `delay` first, and under the retry simulation fails `succeedAfter`
// times with `responseCode`. The proxy's side follows RouteAction and RetryPolicy: the route
// timeout ("defaults to 15s ... A value of 0 will disable the route's timeout") covers all tries;
// per_try_timeout bounds each; retry_on decides which answers are tried again, num_retries how often.
import type { RouteAction } from '../../src/envoy-types.js';
import { duration } from '../../src/index.js';
import type { WeightedTarget } from './envoy-router.js';

export interface BackendAnswer {
  status: number;
}

const CLUSTER_NOT_FOUND: Record<string, number> = {
  SERVICE_UNAVAILABLE: 503,
  NOT_FOUND: 404,
  INTERNAL_SERVER_ERROR: 500,
};

function durationMs(d: { seconds?: string | number; nanos?: number } | undefined): number | undefined {
  return d === undefined ? undefined : Number(d.seconds ?? 0) * 1000 + (d.nanos ?? 0) / 1e6;
}

function retriable(status: number, policy: NonNullable<RouteAction['retry_policy']>): boolean {
  const on = (policy.retry_on ?? '').split(',');
  if (on.includes('5xx') && status >= 500) return true;
  if (on.includes('gateway-error') && [502, 503, 504].includes(status)) return true;
  if (on.includes('retriable-status-codes') && (policy.retriable_status_codes ?? []).includes(status)) return true;
  return false;
}

export function backendAnswer(action: RouteAction, target: WeightedTarget, path: string): BackendAnswer {
  if (!target.exists)
    return { status: CLUSTER_NOT_FOUND[action.cluster_not_found_response_code ?? 'SERVICE_UNAVAILABLE']! };
  if (!target.healthy) return { status: 503 };
  const query = new URLSearchParams(path.includes('?') ? path.slice(path.indexOf('?') + 1) : '');
  const delay = query.get('delay') ? durationMs(duration(query.get('delay')!))! : 0;
  const failCode = query.get('responseCode') ? Number(query.get('responseCode')) : undefined;
  const succeedAfter = Number(query.get('succeedAfter') ?? 0);
  const policy = action.retry_policy;
  const tries = 1 + (policy ? Number(policy.num_retries?.value ?? 1) : 0);
  const perTry = durationMs(policy?.per_try_timeout) || undefined;
  const routeTimeout = durationMs(action.timeout) ?? 15_000;
  let elapsed = 0;
  let status = 200;
  for (let attempt = 0; attempt < tries; attempt++) {
    const timedOut = perTry !== undefined && delay >= perTry;
    elapsed += timedOut ? perTry : delay;
    if (routeTimeout > 0 && elapsed >= routeTimeout) return { status: 504 };
    status = timedOut ? 504 : failCode !== undefined && attempt < succeedAfter ? failCode : 200;
    if (status < 500 || !policy || !retriable(status, policy)) break;
  }
  return { status };
}
