// Helpers the route tests share: a Gateway to attach to, parentRefs to it, backendRefs and rules.
import { endpointSlice, gateway, gatewayClass, http, service } from './builders.js';

/** A GatewayClass, Gateway infra/gw (listener `http` on 80 for *.example.com, `other` on 8080), Service svc with an endpoint. */
export const base = () => [
  gatewayClass(),
  gateway('gw', [http('http', 80, { hostname: '*.example.com' }), http('other', 8080)]),
  service('svc'),
  endpointSlice('svc'),
];

/** A parentRef to Gateway infra/gw. */
export const toGw = (extra: Record<string, unknown> = {}) => ({ name: 'gw', namespace: 'infra', ...extra });

/** A backendRef to port 8080 of a Service (default svc). */
export const backend = (name = 'svc', extra: Record<string, unknown> = {}) => ({ name, port: 8080, ...extra });

/** An Exact path match. */
export const exact = (value: string) => ({ path: { type: 'Exact', value } });

/** A rule sending its matches (all requests without) to port 8080 of `svc`. */
export const rule = (svc: string, matches?: unknown[], extra: Record<string, unknown> = {}) => ({
  ...(matches ? { matches } : {}),
  backendRefs: [{ name: svc, port: 8080 }],
  ...extra,
});
