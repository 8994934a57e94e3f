// The port a proxy listens on inside its pod for a Gateway listener's port. Ports below 1024 are
// shifted up by 10000 so the proxy runs without privileges (no root, no NET_BIND_SERVICE); the
// Service maps the listener's port to it. The infra IR (containerPort) and the Envoy listeners
// (port_value) both take it from here, so they cannot disagree.
export const PRIVILEGED_PORT_SHIFT = 10_000;

export function proxyListenPort(port: number): number {
  return port < 1024 ? port + PRIVILEGED_PORT_SHIFT : port;
}
