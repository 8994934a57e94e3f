// The backend model the conformance route-table check judges retries and timeouts with: Envoy's
// retry_on semantics and echo-basic's retry simulation, on hand-written route actions.
import { describe, expect, it } from '@jest/globals';
import type { RouteAction } from '../../src/envoy-types.js';
import { backendAnswers, retriable, type EchoPod, type Upstream } from './echo-backend.js';
import type { WeightedTarget } from './envoy-router.js';

const echo = (name: string, ports = [3000]): EchoPod => ({
  name: `${name}-6d4f9c8b7-x2k4q`,
  namespace: 'ns',
  kind: 'http',
  tcp: new Map(ports.map((p) => [p, undefined])),
});
const healthy = echo('healthy');
// Listens elsewhere, as HTTPRouteRetryConnectionError's broken Pod (TCP_PORT 3333) does.
const broken = echo('broken', [3333]);

const upstream = (...pods: EchoPod[]): Upstream => ({
  endpoints: pods.map((pod) => ({ pod, port: 3000 })),
  clientCertificateIssuer: () => undefined,
});
const target = (path: string): WeightedTarget => ({
  cluster: 'ns/svc/8080',
  weight: 1,
  request: { host: 'example.com', path, method: 'GET', headers: new Map() },
  responseHeaders: { add: [], remove: [] },
  exists: true,
  healthy: true,
});
const ms = (n: number) => ({ seconds: String(Math.floor(n / 1000)), nanos: (n % 1000) * 1e6 });
const policy = (retryOn: string, more: Partial<NonNullable<RouteAction['retry_policy']>> = {}) => ({
  retry_on: retryOn,
  ...more,
});
/** The statuses a request gets, once per endpoint its first try may go to. */
const statuses = (action: RouteAction, path: string, ...pods: EchoPod[]) =>
  backendAnswers(action, target(path), upstream(...pods), false).map((a) => a.status);

describe('retriable: x-envoy-retry-on', () => {
  const connect = { kind: 'connect-failure', ms: 0, why: 'refused' } as const;
  const timeout = { kind: 'per-try-timeout', ms: 500 } as const;
  const reset = { kind: 'reset', ms: 0 } as const;
  const status = (s: number) =>
    ({ kind: 'response', status: s, ms: 0, endpoint: { pod: healthy, port: 3000 } }) as const;

  it('retries a failed connection under connect-failure, reset-before-request, reset, 5xx and gateway-error', () => {
    for (const on of ['connect-failure', 'reset-before-request', 'reset', '5xx', 'gateway-error'])
      expect([on, retriable(connect, policy(on))]).toEqual([on, true]);
    expect(retriable(connect, policy('retriable-status-codes', { retriable_status_codes: [503] }))).toBe(false);
  });

  it('retries a per-try timeout or a reset after the request was sent under reset, 5xx and gateway-error only', () => {
    for (const attempt of [timeout, reset]) {
      for (const on of ['reset', '5xx', 'gateway-error']) expect(retriable(attempt, policy(on))).toBe(true);
      for (const on of ['reset-before-request', 'connect-failure', 'refused-stream'])
        expect(retriable(attempt, policy(on))).toBe(false);
    }
  });

  it('retries answers by status: 5xx any, gateway-error 502-504, retriable-status-codes the listed ones', () => {
    expect(retriable(status(500), policy('5xx'))).toBe(true);
    expect(retriable(status(500), policy('gateway-error'))).toBe(false);
    expect(retriable(status(503), policy('gateway-error'))).toBe(true);
    expect(retriable(status(500), policy('connect-failure,refused-stream,reset-before-request'))).toBe(false);
    const codes = policy('retriable-status-codes', { retriable_status_codes: [500] });
    expect([retriable(status(500), codes), retriable(status(502), codes)]).toEqual([true, false]);
    // The codes alone retry nothing: retry_on must name them.
    expect(retriable(status(500), policy('connect-failure', { retriable_status_codes: [500] }))).toBe(false);
  });
});

describe('backendAnswers: echo-basic behind Envoy', () => {
  it('reaches the listening Pod past a refusing one only when connection failures are retried', () => {
    const retried = { cluster: 'c', retry_policy: policy('connect-failure', { num_retries: { value: 100 } }) };
    const answers = backendAnswers(retried, target('/retry-on-connection-errors'), upstream(broken, healthy), false);
    expect(answers.map((a) => [a.status, a.pod?.name])).toEqual([
      [200, healthy.name],
      [200, healthy.name],
    ]);
    expect(statuses({ cluster: 'c' }, '/retry-on-connection-errors', broken, healthy)).toEqual([503, 200]);
    // Status codes alone do not cover a refused connection.
    const codesOnly = {
      cluster: 'c',
      retry_policy: policy('retriable-status-codes', { retriable_status_codes: [503] }),
    };
    expect(statuses(codesOnly, '/', broken, healthy)).toEqual([503, 200]);
  });

  it('fails succeedAfter times under /retry/ only, with responseCode or a reset', () => {
    const once = { cluster: 'c', retry_policy: policy('retriable-status-codes', { retriable_status_codes: [500] }) };
    expect(statuses(once, '/retry/x?responseCode=500&succeedAfter=1', healthy)).toEqual([200]);
    expect(statuses(once, '/retry/x?responseCode=500&succeedAfter=2', healthy)).toEqual([500]);
    expect(statuses(once, '/other?responseCode=500&succeedAfter=2', healthy)).toEqual([200]);
    // Without responseCode the simulation resets the connection after reading the request.
    expect(statuses(once, '/retry/x?succeedAfter=1', healthy)).toEqual([503]);
    const onReset = { cluster: 'c', retry_policy: policy('reset') };
    expect(statuses(onReset, '/retry/x?succeedAfter=1', healthy)).toEqual([200]);
    const beforeRequest = { cluster: 'c', retry_policy: policy('reset-before-request') };
    expect(statuses(beforeRequest, '/retry/x?succeedAfter=1', healthy)).toEqual([503]);
  });

  it('does not retry with num_retries 0, and retries once when num_retries is unset', () => {
    const none = { cluster: 'c', retry_policy: policy('5xx', { num_retries: { value: 0 } }) };
    expect(statuses(none, '/retry/x?responseCode=500&succeedAfter=1', healthy)).toEqual([500]);
    const unset = { cluster: 'c', retry_policy: policy('5xx') };
    expect(statuses(unset, '/retry/x?responseCode=500&succeedAfter=1', healthy)).toEqual([200]);
    expect(statuses(unset, '/retry/x?responseCode=500&succeedAfter=2', healthy)).toEqual([500]);
  });

  it('counts delayRetry against the route timeout and delay against the per-try timeout', () => {
    const request500 = {
      cluster: 'c',
      timeout: ms(500),
      retry_policy: policy('retriable-status-codes', { retriable_status_codes: [500], num_retries: { value: 5 } }),
    };
    expect(statuses(request500, '/retry/x?responseCode=500&succeedAfter=1', healthy)).toEqual([200]);
    expect(statuses(request500, '/retry/x?delayRetry=300ms&responseCode=500&succeedAfter=2', healthy)).toEqual([504]);
    expect(statuses(request500, '/retry/x?delayRetry=200ms&responseCode=500&succeedAfter=2', healthy)).toEqual([200]);
    const perTry = (retryOn: string) => ({
      cluster: 'c',
      timeout: ms(15_000),
      retry_policy: policy(retryOn, { per_try_timeout: ms(500), num_retries: { value: 3 } }),
    });
    const slow = '/retry/x?delay=100ms&delayRetry=600ms&responseCode=500&succeedAfter=1';
    // The first try outlasts the per-try timeout: retried under reset, not under reset-before-request.
    expect(statuses(perTry('reset'), slow, healthy)).toEqual([200]);
    expect(statuses(perTry('reset-before-request'), slow, healthy)).toEqual([504]);
    expect(statuses(perTry('reset'), '/?delay=1s', healthy)).toEqual([504]);
  });
});
