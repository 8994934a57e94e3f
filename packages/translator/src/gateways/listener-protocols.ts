// Which route kinds each listener protocol serves, and which protocols may share a port.
import { GATEWAY_GROUP, type Listener, type RouteGroupKind } from '@turnpike/api';

export const SUPPORTED_PROTOCOLS = new Set(['HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP']);

export function tlsMode(l: Listener): 'Terminate' | 'Passthrough' {
  return l.tls?.mode === 'Passthrough' ? 'Passthrough' : 'Terminate';
}

/** Route kinds a listener serves when allowedRoutes.kinds is not set. */
export function kindsForProtocol(l: Listener): string[] {
  switch (l.protocol) {
    case 'HTTP':
    case 'HTTPS':
      return ['HTTPRoute', 'GRPCRoute'];
    case 'TLS':
      return tlsMode(l) === 'Passthrough' ? ['TLSRoute'] : ['TCPRoute', 'TLSRoute'];
    case 'TCP':
      return ['TCPRoute'];
    case 'UDP':
      return ['UDPRoute'];
    default:
      return [];
  }
}

/**
 * Listeners on one port must be served by one socket: HTTP alone, HTTPS and TLS together
 * (filter chains by SNI), TCP alone. UDP ports are a separate space.
 */
export function portFamily(protocol: string): string {
  switch (protocol) {
    case 'HTTP':
      return 'http';
    case 'HTTPS':
    case 'TLS':
      return 'tls';
    case 'TCP':
      return 'tcp';
    case 'UDP':
      return 'udp';
    default:
      return protocol;
  }
}

export function transport(protocol: string): 'udp' | 'tcp' {
  return protocol === 'UDP' ? 'udp' : 'tcp';
}

export function routeGroupKind(kind: string): RouteGroupKind {
  return { group: GATEWAY_GROUP, kind };
}
