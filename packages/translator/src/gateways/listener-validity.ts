// Whether a listener may serve traffic, in one place: the xDS assembly, the infra IR, the status
// (Programmed, ListenersNotValid) and the conflict and overlap rules all ask these questions.
import type { ListenerModel } from '../model.js';

/**
 * The listener's references keep it from serving. Some invalid certificates do not (the others
 * serve), nor do route kinds it cannot serve beside ones it can: the valid kinds are served
 * (ResolvedRefs=False/InvalidRouteKinds still says which were dropped; supportedKinds lists the rest).
 */
export function refsBlockTraffic(l: ListenerModel): boolean {
  if (!l.refsProblem || l.someCertificatesInvalid) return false;
  return !(l.refsProblem.reason === 'InvalidRouteKinds' && l.supportedKinds.length > 0);
}

/** Listener is usable for traffic: accepted, no conflict, references resolved (or enough of them). */
export function listenerProgrammable(l: ListenerModel): boolean {
  return l.attachable && !l.notAccepted && !l.conflicted && !refsBlockTraffic(l);
}

/**
 * A listener that makes its owner ListenersNotValid: invalid configuration, a conflict, route
 * kinds it cannot serve, or a reference no ReferenceGrant permits. A missing or malformed
 * certificate only makes the listener unprogrammed (ResolvedRefs=False).
 */
export function listenerConfigInvalid(l: ListenerModel): boolean {
  return (
    !!l.notAccepted ||
    !!l.conflicted ||
    !l.attachable ||
    l.refsProblem?.reason === 'InvalidRouteKinds' ||
    l.refsProblem?.reason === 'RefNotPermitted'
  );
}

/** Accepted and not in conflict: the listener takes part in the overlap checks (OverlappingTLSConfig). */
export function listenerStands(l: ListenerModel): boolean {
  return !l.notAccepted && !l.conflicted;
}

/**
 * A listener that keeps its port and hostname against a ListenerSet merged after it: one that can
 * serve, even if it conflicts inside its own object, unless it already lost to an earlier listener.
 */
export function listenerClaimsPort(l: ListenerModel): boolean {
  return l.attachable && !l.notAccepted && !l.lostPrecedence && !refsBlockTraffic(l);
}
