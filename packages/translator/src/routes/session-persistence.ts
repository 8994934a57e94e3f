// Session persistence on an XBackend of type EndpointSelector (GEP-1619, as the v1.7.0 XBackend CRD has
// it: type, absoluteTimeout, cookie {name, path, lifetimeType}, header {name}) as Envoy's stateful session
// (envoy.filters.http.stateful_session, with envoy.http.stateful_session.cookie or .header). Envoy writes
// the upstream host into the cookie or header, and a request carrying it goes to that host within the
// cluster the router chose; it never changes which backend a weighted split picks. What Envoy cannot
// honour is refused by field, never served another way.
import { durationMs, type SessionPersistenceIR, type XBackend } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';

type SessionPersistence = NonNullable<XBackend['spec']['sessionPersistence']>;

const refused = (message: string): { problem: Problem } => ({ problem: { reason: 'UnsupportedValue', message } });

/**
 * The IR of an XBackend's `spec.sessionPersistence`, or the problem with it. `what` names the XBackend
 * (and the route field that reached it).
 */
export function sessionPersistenceOf(
  sp: SessionPersistence,
  namespace: string,
  name: string,
  what: string,
): { session: SessionPersistenceIR } | { problem: Problem } {
  const field = `${what}: spec.sessionPersistence`;
  // Not in the v1.7.0 XBackend (HTTPRoute's SessionPersistence has it): Envoy's stateful session forgets
  // nothing for lack of use, so an idle timeout could only be served wrongly.
  if ((sp as { idleTimeout?: unknown }).idleTimeout !== undefined)
    return refused(`${field}.idleTimeout is not supported: Envoy's stateful session has no idle timeout`);
  const type = sp.type ?? 'Cookie';
  const absolute = sp.absoluteTimeout;
  if (type === 'Header') {
    if (!sp.header?.name) return refused(`${field}.header.name must be set for type Header`);
    // The header session state carries only the host's address: nothing Envoy could expire it by.
    if (absolute !== undefined)
      return refused(`${field}.absoluteTimeout is not supported for type Header: Envoy's header session never expires`);
    return { session: { type: 'Header', name: sp.header.name } };
  }
  if (type !== 'Cookie') return refused(`${field}.type ${String(type)} is not supported`);
  // "If not specified, a unique cookie name SHOULD be generated": one per XBackend, the same every time.
  const cookieName = sp.cookie?.name ?? `turnpike-session.${namespace}.${name}`;
  const path = sp.cookie?.path ?? '/'; // "implementations MUST default the cookie path to "/""
  const lifetime = sp.cookie?.lifetimeType ?? 'Session';
  if (lifetime === 'Permanent') {
    // "When set to "Permanent", AbsoluteTimeout indicates the cookie's lifetime via the Expires or Max-Age
    // cookie attributes and is required": the cookie's ttl (Max-Age, and the expiry Envoy encodes in it).
    const ms = absolute === undefined ? undefined : durationMs(absolute);
    if (ms === undefined || ms < 1000)
      return refused(
        `${field}.absoluteTimeout must be a duration of at least 1s for lifetimeType Permanent ` +
          `(got ${absolute ?? 'none'})`,
      );
    if (ms % 1000 !== 0)
      return refused(`${field}.absoluteTimeout ${absolute}: a cookie's Max-Age counts whole seconds`);
    return { session: { type: 'Cookie', name: cookieName, path, ttlSeconds: ms / 1000 } };
  }
  if (lifetime !== 'Session') return refused(`${field}.cookie.lifetimeType ${String(lifetime)} is not supported`);
  // "When set to "Session", AbsoluteTimeout indicates the absolute lifetime of the cookie tracked by the
  // gateway": Envoy bounds a cookie's life only by its ttl, which also sets Max-Age and so makes it
  // Permanent. A session cookie (ttl 0s) is all Envoy can do here.
  if (absolute !== undefined)
    return refused(
      `${field}.absoluteTimeout is not supported with cookie.lifetimeType Session: Envoy bounds a cookie's life ` +
        'only by its Max-Age, which would make it Permanent',
    );
  return { session: { type: 'Cookie', name: cookieName, path, ttlSeconds: 0 } };
}
