// GatewayHTTPSListenerDetectMisdirectedRequests: HTTPS listeners share a port and pick their
// certificate by SNI. A request that arrives on a connection made for one listener but names a
// host that another listener of the port serves (an HTTP/2 connection reused across certificates)
// is answered 421, so the client reconnects with the right SNI; a host no listener serves is a 404.
import type { GatewayListenerIR, PortIR } from '@turnpike/api';
import { intersectHostnames } from '../routes/hostnames.js';

/**
 * For each HTTPS listener of the port: a listener with a hostname answers 421 for every host it
 * does not serve, more specific listeners' hosts under its wildcard included; a listener without
 * one serves every host, except those other listeners of the port claim (421 there, 404 when no
 * route serves a host).
 */
export function markMisdirectedHosts(port: PortIR): void {
  const https = port.listeners.filter((l) => l.protocol === 'HTTPS');
  for (const listener of https) {
    const own = new Set((listener.virtualHosts ?? []).flatMap((v) => v.domains));
    const claimedElsewhere = https
      .filter((other) => other !== listener && other.hostname && other.hostname !== listener.hostname)
      .map((other) => other.hostname!)
      .filter((host) => !own.has(host) && moreSpecificWithin(listener, host));
    const hosts = [...new Set(claimedElsewhere)].sort();
    if (hosts.length) listener.misdirectedHosts = hosts;
    if (listener.hostname) listener.misdirectedStatus = 421;
  }
}

/** Whether `host` (another listener's) falls within what this listener would otherwise serve. */
function moreSpecificWithin(listener: GatewayListenerIR, host: string): boolean {
  if (!listener.hostname) return true;
  return intersectHostnames(listener.hostname, host) === host && host !== listener.hostname;
}
