// Proxyless gRPC: API listeners and route configurations for gRPC clients that read xDS themselves.
import type { GatewayIR, HTTPRouteIR, VirtualHostIR } from '@turnpike/api';
import { httpConnectionManager } from './http-connection-manager.js';
import { buildRoute } from './http-routes.js';
import type { EnvoyResources } from './resources.js';

/**
 * Proxyless gRPC: each hostname with GRPCRoutes becomes an API listener named after the
 * hostname, so clients dialling `xds:///<hostname>` route per the GRPCRoute with no proxy.
 * A listener with pre-routing filters (GEP-5224) is left out: a gRPC client runs neither ext_authz
 * nor Lua or Wasm, so its requests would reach the routes without the filters the listener runs on
 * every request before routing ("Implementations MUST evaluate route matching exactly once after the
 * last ListenerFilter has run").
 */
export function buildProxyless(gw: GatewayIR, out: EnvoyResources): void {
  const byHost = new Map<string, HTTPRouteIR[]>();
  for (const port of gw.ports)
    for (const l of port.listeners)
      for (const vh of l.preRouting?.length ? [] : (l.virtualHosts ?? [])) {
        for (const r of vh.routes) {
          if (r.source.kind !== 'GRPCRoute') continue;
          for (const d of vh.domains) {
            if (d === '*' || d.startsWith('*.')) continue;
            const list = byHost.get(d) ?? [];
            list.push(r);
            byHost.set(d, list);
          }
        }
      }
  for (const host of [...byHost.keys()].sort()) {
    const routeName = `proxyless/${host}`;
    out.listeners.push({
      name: host,
      // No edge hardening: the "listener" is the gRPC client itself, which reads none of it.
      api_listener: { api_listener: httpConnectionManager(routeName, routeName) },
    });
    const vh: VirtualHostIR = { name: host, domains: [host], routes: byHost.get(host)! };
    // Proxyless clients run no plugins (no Lua or Wasm in gRPC): their routes go without. Nor a stateful
    // session (an XBackend's sessionPersistence): a per-route config for a filter the client does not
    // know, not marked optional, would have it refuse the whole route configuration (gRFC A39).
    const withoutPlugins = (r: HTTPRouteIR): HTTPRouteIR => {
      const out = r.filters?.plugins ? { ...r, filters: { ...r.filters, plugins: undefined } } : r;
      return out.sessionPersistence ? { ...out, sessionPersistence: undefined } : out;
    };
    out.routes.push({
      name: routeName,
      virtual_hosts: [
        { name: vh.name, domains: vh.domains, routes: vh.routes.map((r) => buildRoute(withoutPlugins(r))) },
      ],
    });
  }
}
