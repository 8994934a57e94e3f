// The port a proxy listens on inside its pod for each Gateway listener port. Ports below 1024 are
// shifted up by 10000 so the proxy runs without privileges (no root, no NET_BIND_SERVICE); the
// Service maps the listener's port to it. The infra IR (containerPort) and the Envoy listeners
// (port_value) both take it from here, so they cannot disagree.
//
// A shifted port must not land on a port the Gateway also listens on (80 and 10080 would be two
// Envoy listeners on 10080, and Envoy refuses the second), nor on a port the proxy holds itself
// (its admin, readiness and stats listeners, the drain helper): such ports move to the next free one.
export const PRIVILEGED_PORT_SHIFT = 10_000;

/** Envoy's admin listener in the proxy pod (loopback; a listener on 0.0.0.0 would still collide). */
export const PROXY_ADMIN_PORT = 19_000;

export type ProxyTransport = 'tcp' | 'udp';

export function proxyPortKey(transport: ProxyTransport, port: number): string {
  return `${transport}/${port}`;
}

/** The readiness listener: only GET /ready, answered by the admin (LIVE once the initial xDS fetch is done). */
export const PROXY_READINESS_PORT = 19_001;

/** The stats listener: only GET /stats/prometheus, answered by the admin. */
export const PROXY_STATS_PORT = 19_002;

/** The drain helper beside Envoy (`turnpike proxy-drain serve`): GET /wait blocks until the drain is done. */
export const PROXY_DRAIN_PORT = 19_003;

const RESERVED_TCP_PORTS = new Set([PROXY_ADMIN_PORT, PROXY_READINESS_PORT, PROXY_STATS_PORT, PROXY_DRAIN_PORT]);

function reservedInPod(transport: ProxyTransport, port: number): boolean {
  return transport === 'tcp' && RESERVED_TCP_PORTS.has(port);
}

/**
 * The listen port of every (transport, port) of one Gateway, by `proxyPortKey`. Ports from 1024
 * up keep their number; the others (privileged, or reserved in the pod) take `port + 10000`, or
 * the next port above that nothing else of the same transport holds, in ascending order.
 */
export function proxyListenPorts(ports: Iterable<{ transport: ProxyTransport; port: number }>): Map<string, number> {
  const out = new Map<string, number>();
  for (const transport of ['tcp', 'udp'] as const) {
    const numbers = [...new Set([...ports].filter((p) => p.transport === transport).map((p) => p.port))].sort(
      (a, b) => a - b,
    );
    const keeps = (n: number) => n >= 1024 && !reservedInPod(transport, n);
    const taken = new Set(numbers.filter(keeps));
    for (const n of numbers) {
      if (keeps(n)) {
        out.set(proxyPortKey(transport, n), n);
        continue;
      }
      let candidate = n < 1024 ? n + PRIVILEGED_PORT_SHIFT : n + 1;
      while (taken.has(candidate) || reservedInPod(transport, candidate)) candidate++;
      taken.add(candidate);
      out.set(proxyPortKey(transport, n), candidate);
    }
  }
  return out;
}
