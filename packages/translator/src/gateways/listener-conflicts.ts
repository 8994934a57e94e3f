// Listener conflicts. Two listeners conflict when they share a port but cannot share a socket
// (ProtocolConflict: HTTP vs HTTPS/TLS vs TCP) or when they would receive the same traffic
// (HostnameConflict: same port, family and hostname). TLS listeners that terminate and TLS
// listeners that pass through may share a port (TLSRouteModeMixed): the proxy tells them apart
// by SNI, one filter chain each.
// Inside one object (a Gateway or one ListenerSet) there is no winner: every party is conflicted.
// Across the merged list (Gateway first, then ListenerSets oldest first) the earlier one wins.
import type { Problem } from '../status/conditions.js';
import { portFamily, transport } from './listener-protocols.js';
import type { ListenerModel } from '../model.js';
import { listenerClaimsPort, listenerStands } from './listener-validity.js';

/**
 * A listener as a message names it: by its name within one object; with its Gateway or ListenerSet
 * when the other party belongs to another (a Gateway's "http" and a ListenerSet's "http" are two).
 */
function named(l: ListenerModel, other: ListenerModel): string {
  if (l.owner === other.owner) return `"${l.spec.name}"`;
  return `"${l.spec.name}" of ${l.ownerKind} ${l.owner.metadata.namespace}/${l.owner.metadata.name}`;
}

export function conflictBetween(a: ListenerModel, b: ListenerModel): Problem | undefined {
  const la = a.spec,
    lb = b.spec;
  const na = named(a, b),
    nb = named(b, a);
  if (la.port !== lb.port || transport(la.protocol) !== transport(lb.protocol)) return undefined;
  const where = `port ${la.port}`;
  if (portFamily(la.protocol) !== portFamily(lb.protocol)) {
    return {
      reason: 'ProtocolConflict',
      message: `${where}: listeners ${na} (${la.protocol}) and ${nb} (${lb.protocol}) cannot share a port`,
    };
  }
  if ((la.hostname ?? '') === (lb.hostname ?? '')) {
    return {
      reason: 'HostnameConflict',
      message: `${where}: listeners ${na} and ${nb} have ${la.hostname ? `the same hostname "${la.hostname}"` : 'no hostname (both take any host)'}`,
    };
  }
  return undefined;
}

/** Marks conflicts among one object's own listeners: all parties lose. */
export function markConflictsWithin(listeners: ListenerModel[]): void {
  for (let i = 0; i < listeners.length; i++) {
    for (let j = i + 1; j < listeners.length; j++) {
      const a = listeners[i] as ListenerModel,
        b = listeners[j] as ListenerModel;
      // A listener that cannot be programmed anyway does not claim its port and hostname.
      if (!listenerClaimsPort(a) || !listenerClaimsPort(b)) continue;
      const c = conflictBetween(a, b);
      if (!c) continue;
      a.conflicted ??= c;
      b.conflicted ??= c;
    }
  }
}

/** A ListenerSet listener loses to any earlier accepted listener it conflicts with. */
export function markConflictsAgainst(accepted: readonly ListenerModel[], candidate: ListenerModel): void {
  if (candidate.conflicted || !listenerClaimsPort(candidate)) return;
  for (const a of accepted) {
    const c = conflictBetween(a, candidate);
    if (c) {
      candidate.conflicted = c;
      candidate.lostPrecedence = true;
      return;
    }
  }
}

/**
 * OverlappingTLSConfig (the spec's MUST): HTTPS or TLS listeners on one port whose hostnames
 * differ but overlap (a wildcard covering the other): a client may reuse a connection made for one
 * for the other. Equal hostnames are a HostnameConflict instead.
 */
export function markOverlappingHostnames(listeners: ListenerModel[]): void {
  const tls = listeners.filter((l) => (l.spec.protocol === 'HTTPS' || l.spec.protocol === 'TLS') && listenerStands(l));
  for (let i = 0; i < tls.length; i++) {
    for (let j = i + 1; j < tls.length; j++) {
      const a = tls[i] as ListenerModel,
        b = tls[j] as ListenerModel;
      if (a.spec.port !== b.spec.port || (a.spec.hostname ?? '') === (b.spec.hostname ?? '')) continue;
      if (!hostnamesOverlap(a.spec.hostname, b.spec.hostname)) continue;
      const p: Problem = {
        reason: 'OverlappingHostnames',
        message:
          `port ${a.spec.port}: the hostnames of listeners ${named(a, b)} ` +
          `(${a.spec.hostname ?? 'any'}) and ${named(b, a)} (${b.spec.hostname ?? 'any'}) overlap`,
      };
      a.overlappingTLS ??= p;
      b.overlappingTLS ??= p;
    }
  }
}

/** Two set hostnames where one covers the other (a listener without hostname is the catch-all, not an overlap). */
function hostnamesOverlap(a: string | undefined, b: string | undefined): boolean {
  return !!a && !!b && namesOverlap(a, b);
}

/**
 * OverlappingTLSConfig: terminating listeners on one port whose certificates cover a common
 * hostname, so SNI cannot pick one certificate deterministically.
 */
export function markOverlappingCertificates(listeners: ListenerModel[]): void {
  const terminating = listeners.filter((l) => l.certificates.length > 0 && listenerStands(l));
  for (let i = 0; i < terminating.length; i++) {
    for (let j = i + 1; j < terminating.length; j++) {
      const a = terminating[i] as ListenerModel,
        b = terminating[j] as ListenerModel;
      if (a.spec.port !== b.spec.port) continue;
      const shared = sharedName(a, b);
      if (!shared) continue;
      const p: Problem = {
        reason: 'OverlappingCertificates',
        message:
          `port ${a.spec.port}: the certificates of listeners ${named(a, b)} and ${named(b, a)} both ` +
          `cover ${shared}`,
      };
      // "If a controller ... finds that both are true, it SHOULD set the OverlappingCertificates Reason."
      for (const l of [a, b]) if (l.overlappingTLS?.reason !== 'OverlappingCertificates') l.overlappingTLS = p;
    }
  }
}

function sharedName(a: ListenerModel, b: ListenerModel): string | undefined {
  const sa = new Set(a.certificates.map((c) => c.secret));
  if (b.certificates.every((c) => sa.has(c.secret))) return undefined;
  for (const ca of a.certificates)
    for (const cb of b.certificates) {
      if (ca.secret === cb.secret) continue;
      for (const na of ca.dnsNames)
        for (const nb of cb.dnsNames) if (namesOverlap(na, nb)) return na === nb ? na : `${na} and ${nb}`;
    }
  return undefined;
}

function namesOverlap(a: string, b: string): boolean {
  if (a === b) return true;
  if (a.startsWith('*.') && b.endsWith(a.slice(1))) return true;
  if (b.startsWith('*.') && a.endsWith(b.slice(1))) return true;
  return false;
}
