// xDS IR → Envoy v3 resources for one Gateway's proxy. Each resource type has its builder
// (listeners.ts, route-configurations.ts with http-routes.ts, clusters.ts, endpoints.ts,
// proxyless.ts); this file puts one Gateway's together. Typed with the generated message types (a
// misspelt field is a compile error); Any values are built through `typed()` so their contents are
// typed too.
import type { ClusterIR, EndpointIR, GatewayIR } from '@turnpike/api';
import type { BootstrapTls } from './bootstrap.js';
import { buildCluster, invalidBackendCluster } from './clusters.js';
import { buildEndpoints } from './endpoints.js';
import type { Cluster, ClusterLoadAssignment, Listener, RouteConfiguration, Secret } from './envoy-types.js';
import { edgeHttp } from './http-connection-manager.js';
import { buildPortListener, type ListenerBuild } from './listeners.js';
import { pluginContentClusters, type PluginLookup } from './plugin-filters.js';
import { buildProxyless } from './proxyless.js';
import type { RouteMemo } from './route-configurations.js';

export { INVALID_BACKEND_CLUSTER } from './clusters.js';
export { buildEndpoints } from './endpoints.js';
export { duration } from './envoy-values.js';
export { buildRoute, INVALID_HTTP_BACKEND } from './http-routes.js';
export type { RouteMemo } from './route-configurations.js';
export type { PluginLookup } from './plugin-filters.js';

export interface EnvoyResources {
  listeners: Listener[];
  routes: RouteConfiguration[];
  clusters: Cluster[];
  endpoints: ClusterLoadAssignment[];
  secrets: Secret[];
}

/** TLS material for SDS, looked up by Secret key `namespace/name`. */
export type SecretLookup = (key: string) => { certificateChain: string; privateKey: string } | undefined;

/** The endpoints of a cluster by name (XdsIR.endpoints); absent means none. */
export type EndpointLookup = (cluster: string) => readonly EndpointIR[] | undefined;

/** How the proxies reach the controller, when it serves them over TLS (plugin content clusters use it). */
export interface ControlPlaneOptions {
  controlPlaneTls?: BootstrapTls;
}

/** Built clusters and routes by the identity of their IR, kept by the caller across builds. */
export interface ResourceMemo {
  clusters: WeakMap<ClusterIR, Cluster>;
  routes: RouteMemo;
}

/**
 * Every Envoy resource of one Gateway's proxy. Without `endpoints` no EDS resource is built (the
 * snapshot builder keeps those per cluster, apart from the rest).
 */
export function buildResources(
  gw: GatewayIR,
  secrets: SecretLookup,
  plugins: PluginLookup = () => undefined,
  endpoints?: EndpointLookup,
  memo?: ResourceMemo,
  options: ControlPlaneOptions = {},
): EnvoyResources {
  const out: EnvoyResources = { listeners: [], routes: [], clusters: [], endpoints: [], secrets: [] };
  const build: ListenerBuild = {
    out,
    edge: edgeHttp(gw.http),
    plugins: { gw, lookup: plugins, used: [] },
    routes: memo?.routes,
    invalidBackendUsed: false,
  };
  for (const port of gw.ports) buildPortListener(port, build);
  if (gw.proxyless) buildProxyless(gw, out);
  out.clusters.push(...pluginContentClusters(build.plugins.used, gw, options.controlPlaneTls));
  for (const c of gw.clusters) {
    // A backend client certificate is the Gateway's, not the cluster's: such clusters are not shared.
    const own = !!(c.tls && c.tls.clientCertificate === undefined && gw.backendClientCertificate);
    let cluster = own ? undefined : memo?.clusters.get(c);
    if (!cluster) {
      cluster = buildCluster(c, own ? gw.backendClientCertificate : undefined);
      if (!own) memo?.clusters.set(c, cluster);
    }
    out.clusters.push(cluster);
    // An external hostname's cluster resolves by DNS: it has no EDS resource.
    if (endpoints && !c.external) out.endpoints.push(buildEndpoints(c, endpoints(c.name) ?? []));
  }
  if (build.invalidBackendUsed) out.clusters.push(invalidBackendCluster());
  for (const { name: key } of gw.secrets) {
    const s = secrets(key);
    if (!s) continue;
    out.secrets.push({
      name: key,
      tls_certificate: {
        certificate_chain: { inline_string: s.certificateChain },
        private_key: { inline_string: s.privateKey },
      },
    });
  }
  return out;
}
