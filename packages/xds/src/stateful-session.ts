// Session persistence (GEP-1619, an XBackend EndpointSelector's) as Envoy's stateful session filter.
// The filter sits in every connection manager whose routes use it, with no session state of its own
// ("session_state ... will be used to store and get address of the upstream host"; unset, it does
// nothing); each such route sets its own with StatefulSessionPerRoute. Envoy writes the upstream host
// into the cookie or header; a request that carries it prefers that host within the cluster the router
// chose, so a weighted split's choice never changes. Never `strict` ("If set to True, the HTTP request
// must be routed to the requested destination. If the requested destination is not available, Envoy
// returns 503"): a Pod that went away, or a split that chose another backend, must not answer 503; the
// session moves to the host chosen and the cookie or header is written again.
import type { SessionPersistenceIR } from '@turnpike/api';
import { msDuration, typed } from './envoy-values.js';
import type { Any, HttpFilter } from './envoy-types.js';

export const STATEFUL_SESSION_FILTER = 'envoy.filters.http.stateful_session';

const PACKAGE = 'envoy.extensions.filters.http.stateful_session.v3';

/** The connection manager's filter: no session state (routes bring theirs). */
export function statefulSessionFilter(): HttpFilter {
  return { name: STATEFUL_SESSION_FILTER, typed_config: typed(`${PACKAGE}.StatefulSession`, {}) };
}

/** A route's StatefulSessionPerRoute. */
export function statefulSessionPerRoute(s: SessionPersistenceIR): Any {
  const state =
    s.type === 'Cookie'
      ? {
          name: 'envoy.http.stateful_session.cookie',
          typed_config: typed('envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState', {
            // ttl 0s: "Set this to 0s to use a session cookie and disable cookie expiration".
            cookie: { name: s.name, path: s.path, ttl: msDuration(s.ttlSeconds * 1000) },
          }),
        }
      : {
          name: 'envoy.http.stateful_session.header',
          typed_config: typed('envoy.extensions.http.stateful_session.header.v3.HeaderBasedSessionState', {
            name: s.name,
          }),
        };
  return typed(`${PACKAGE}.StatefulSessionPerRoute`, { stateful_session: { session_state: state, strict: false } });
}
