// The rules Envoy enforces when it loads a resource, beyond the field-level protoc-gen-validate
// rules (validate.ts): names and addresses that must be unique, filter chains that must not share
// a match, domains that must not repeat within a route configuration, regular expressions RE2 must
// compile (to a program of at most 100 instructions), and references that would leave a listener
// warming. A resource that breaks one is refused whole by the proxy (a listener: every connection of
// its port), so these are checked before anything is sent (resource-screen.ts) and by the tests on
// every generated resource.
import { RE2JS } from '@bufbuild/re2';
import { ENVOY_RE2_MAX_PROGRAM_SIZE, re2ProgramSize } from '@turnpike/api';
import type {
  Cluster,
  ClusterLoadAssignment,
  FilterChain,
  HttpConnectionManager,
  Listener,
  Route,
  RouteConfiguration,
  Secret,
} from './envoy-types.js';

export interface LoadProblem {
  /** `Listener tcp-80`, `RouteConfiguration tcp-80`, … */
  resource: string;
  /** Where in the resource, e.g. `filter_chains[2].filter_chain_match` or `virtual_hosts[0].routes[3]`. */
  field: string;
  message: string;
}

export interface LoadableResources {
  listeners: Listener[];
  routes: RouteConfiguration[];
  clusters: Cluster[];
  endpoints: ClusterLoadAssignment[];
  secrets: Secret[];
}

const compiled = new Map<string, string | undefined>();

/** Why RE2 refuses a pattern (Envoy compiles every safe_regex with RE2), or undefined. */
export function re2Refusal(pattern: string): string | undefined {
  if (!compiled.has(pattern)) {
    try {
      RE2JS.compile(pattern);
      compiled.set(pattern, undefined);
    } catch (e) {
      compiled.set(pattern, (e as Error).message);
    }
    if (compiled.size > 10_000) compiled.delete(compiled.keys().next().value!);
  }
  return compiled.get(pattern);
}

/**
 * Every RegexMatcher (`{ regex }`) inside a value, with its path. The path is written out only for a
 * regex found (`steps` is the way down): a route has dozens of fields and rarely a regex.
 */
function regexes(value: unknown, steps: (string | number)[], out: { path: string; regex: string }[]): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      steps.push(i);
      regexes(value[i], steps, out);
      steps.pop();
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const k in value) {
      const v = (value as Record<string, unknown>)[k];
      if (k === 'regex' && typeof v === 'string') out.push({ path: pathOf(steps), regex: v });
      else if (typeof v === 'object' && v !== null) {
        steps.push(k);
        regexes(v, steps, out);
        steps.pop();
      }
    }
  }
}

function pathOf(steps: readonly (string | number)[]): string {
  let path = '';
  for (const s of steps) path += typeof s === 'number' ? `[${s}]` : path ? `.${s}` : s;
  return path;
}

/** Header mutations Envoy refuses: ":-prefixed or host headers may not be modified". */
function forbiddenHeader(name: string): boolean {
  const n = name.toLowerCase();
  return n.startsWith(':') || n === 'host';
}

/** Problems of one Route of a route configuration (`field` is where it sits). */
export function routeLoadProblems(route: Route, resource: string, field: string): LoadProblem[] {
  const out: LoadProblem[] = [];
  const problem = (where: string, message: string) =>
    out.push({ resource, field: where ? `${field}.${where}` : field, message });
  const found: { path: string; regex: string }[] = [];
  regexes(route, [], found);
  for (const { path, regex } of found) {
    const why = re2Refusal(regex);
    if (why) problem(path, `RE2 cannot compile "${regex}": ${why}`);
    else {
      // GoogleRE2: "re2.max_program_size.error_level defaults to 100" (Turnpike's bootstrap keeps it): a
      // larger program is refused, and so is one whose size is not known here (it could be larger).
      const program = re2ProgramSize(regex);
      if (program.size === undefined) problem(path, `"${regex}": ${program.why}`);
      else if (program.size > ENVOY_RE2_MAX_PROGRAM_SIZE)
        problem(
          path,
          `regex '${regex}' RE2 program size of ${program.size} > max program size of ${ENVOY_RE2_MAX_PROGRAM_SIZE}`,
        );
    }
  }
  const action = route.route;
  if (action) {
    // RouteAction.prefix_rewrite: "Only one of regex_rewrite, path_rewrite_policy, or prefix_rewrite may be specified."
    const rewrites = [action.prefix_rewrite, action.regex_rewrite, action.path_rewrite_policy].filter(
      (x) => x !== undefined && x !== '',
    );
    if (rewrites.length > 1) problem('route', 'more than one of prefix_rewrite, regex_rewrite, path_rewrite_policy');
    // WeightedCluster.ClusterWeight.weight: "The sum of weights across all entries in the clusters
    // array must be greater than 0, and must not exceed uint32_t maximal value".
    const weights = (action.weighted_clusters?.clusters ?? []).map((c) => c.weight?.value ?? 0);
    const sum = weights.reduce((a, b) => a + b, 0);
    if (action.weighted_clusters && (sum <= 0 || sum > 4_294_967_295))
      problem('route.weighted_clusters', `the weights sum to ${sum}; Envoy needs 1 to 4294967295`);
  }
  const mutated = [
    ...(route.request_headers_to_add ?? []).map((h) => h.header?.key ?? ''),
    ...(route.request_headers_to_remove ?? []),
  ];
  for (const name of mutated)
    if (forbiddenHeader(name)) problem('request_headers_to_add', `header "${name}" may not be modified`);
  return out;
}

function duplicates<T>(items: readonly T[], keyOf: (t: T) => string | undefined): Map<string, number[]> {
  const seen = new Map<string, number[]>();
  items.forEach((item, i) => {
    const k = keyOf(item);
    if (k === undefined) return;
    seen.set(k, [...(seen.get(k) ?? []), i]);
  });
  return new Map([...seen].filter(([, at]) => at.length > 1));
}

/**
 * Filter chain matches by the SNI each one answers: FilterChainMatch is matched criterion by
 * criterion, and Envoy refuses a listener where two chains answer one connection with the same
 * criteria ("multiple filter chains with the same matching rules are defined"). A chain without
 * server_names answers every SNI the others do not name.
 */
function chainMatchKeys(chain: FilterChain): string[] {
  const { server_names: names, ...rest } = chain.filter_chain_match ?? {};
  const others = JSON.stringify(rest, Object.keys(rest).sort());
  return (names?.length ? names : ['']).map((n) => `${others}\0${n.toLowerCase()}`);
}

/**
 * CommonTlsContext.alpn_protocols: Envoy joins the list with "," and reads that back as the wire
 * list (ContextImpl::parseAlpnProtocols), refusing the context ("Invalid ALPN protocol string")
 * when the string is 65535 bytes or more or a protocol between commas is over 255.
 */
function alpnRefusal(chain: FilterChain): string | undefined {
  const tls = chain.transport_socket?.typed_config as
    { common_tls_context?: { alpn_protocols?: string[] } } | undefined;
  const joined = (tls?.common_tls_context?.alpn_protocols ?? []).join(',');
  if (Buffer.byteLength(joined) >= 65_535) return 'Invalid ALPN protocol string: 65535 bytes or more';
  const long = joined.split(',').find((p) => Buffer.byteLength(p) > 255);
  return long === undefined ? undefined : `Invalid ALPN protocol string: "${long.slice(0, 32)}…" is over 255 bytes`;
}

/** Problems of one listener on its own. */
export function listenerLoadProblems(listener: Listener): LoadProblem[] {
  const out: LoadProblem[] = [];
  const resource = `Listener ${listener.name ?? ''}`;
  const chains = listener.filter_chains ?? [];
  const owner = new Map<string, number>();
  chains.forEach((chain, i) => {
    for (const key of chainMatchKeys(chain)) {
      const first = owner.get(key);
      if (first === undefined) owner.set(key, i);
      else
        out.push({
          resource,
          field: `filter_chains[${i}].filter_chain_match`,
          message: `matches what filter_chains[${first}] (${chains[first]!.name ?? ''}) matches (server name "${key.split('\0')[1]}")`,
        });
    }
  });
  chains.forEach((chain, i) => {
    const why = alpnRefusal(chain);
    if (why) out.push({ resource, field: `filter_chains[${i}].transport_socket`, message: why });
  });
  // FilterChain.name: "The unique name (or empty) by which this filter chain is known."
  for (const [name, at] of duplicates(chains, (c) => c.name || undefined))
    out.push({
      resource,
      field: `filter_chains[${at[1]}].name`,
      message: `"${name}" names filter_chains[${at[0]}] too`,
    });
  return out;
}

/** Problems of one route configuration on its own (each route's too). */
export function routeConfigurationLoadProblems(rc: RouteConfiguration): LoadProblem[] {
  const out: LoadProblem[] = [];
  const resource = `RouteConfiguration ${rc.name ?? ''}`;
  const vhosts = rc.virtual_hosts ?? [];
  // VirtualHost.domains: "A domain must be unique across all virtual hosts or the config will fail to load."
  const owner = new Map<string, number>();
  vhosts.forEach((vh, i) => {
    (vh.domains ?? []).forEach((d, j) => {
      const first = owner.get(d.toLowerCase());
      if (first === undefined) owner.set(d.toLowerCase(), i);
      else
        out.push({
          resource,
          field: `virtual_hosts[${i}].domains[${j}]`,
          message: `"${d}" is virtual_hosts[${first}]'s too`,
        });
    });
    (vh.routes ?? []).forEach((r, j) =>
      out.push(...routeLoadProblems(r, resource, `virtual_hosts[${i}].routes[${j}]`)),
    );
  });
  return out;
}

function hcmOf(chain: FilterChain): HttpConnectionManager | undefined {
  const f = (chain.filters ?? []).find((x) => x.name === 'envoy.filters.network.http_connection_manager');
  return f?.typed_config as HttpConnectionManager | undefined;
}

/** Every load problem of a proxy's resources: each on its own, and across them. */
export function envoyLoadProblems(res: LoadableResources): LoadProblem[] {
  return [
    ...res.listeners.flatMap(listenerLoadProblems),
    ...res.routes.flatMap(routeConfigurationLoadProblems),
    ...res.clusters.flatMap(clusterLoadProblems),
    ...crossResourceProblems(res),
  ];
}

/**
 * A DNS cluster's own endpoints. LOGICAL_DNS: Envoy's LogicalDnsCluster refuses a load_assignment
 * other than one locality with one endpoint ("LOGICAL_DNS clusters must have a single
 * locality_lb_endpoint and a single lb_endpoint"); both DNS types resolve `socket_address.address`
 * and need a port_value (a named port is not resolved).
 */
export function clusterLoadProblems(c: Cluster): LoadProblem[] {
  if (c.type !== 'LOGICAL_DNS' && c.type !== 'STRICT_DNS') return [];
  const out: LoadProblem[] = [];
  const problem = (field: string, message: string) => out.push({ resource: `Cluster ${c.name ?? ''}`, field, message });
  const localities = c.load_assignment?.endpoints ?? [];
  if (c.type === 'LOGICAL_DNS' && (localities.length !== 1 || (localities[0]!.lb_endpoints ?? []).length !== 1))
    problem('load_assignment', 'a LOGICAL_DNS cluster needs one locality with one endpoint');
  localities.forEach((l, i) =>
    (l.lb_endpoints ?? []).forEach((e, j) => {
      const s = e.endpoint?.address?.socket_address;
      if (!s?.address || s.port_value === undefined)
        problem(
          `load_assignment.endpoints[${i}].lb_endpoints[${j}]`,
          'a DNS endpoint needs an address and a port_value',
        );
    }),
  );
  return out;
}

/** Load problems across resources: names and addresses taken twice, references to what is not sent. */
export function crossResourceProblems(res: LoadableResources): LoadProblem[] {
  const out: LoadProblem[] = [];
  const unique = <T>(type: string, list: readonly T[], nameOf: (t: T) => string | undefined) => {
    for (const [name, at] of duplicates(list, nameOf))
      out.push({
        resource: `${type} ${name}`,
        field: 'name',
        message: `${at.length} resources of this type have this name`,
      });
  };
  unique('Listener', res.listeners, (l) => l.name);
  unique('RouteConfiguration', res.routes, (r) => r.name);
  unique('Cluster', res.clusters, (c) => c.name);
  unique('ClusterLoadAssignment', res.endpoints, (e) => e.cluster_name);
  unique('Secret', res.secrets, (s) => s.name);
  // Listener.address: "In general, the address must be unique" (the OS refuses the second bind).
  for (const [address, at] of duplicates(res.listeners, (l) => {
    const s = l.address?.socket_address;
    return s ? `${s.protocol ?? 'TCP'} ${s.address}:${s.port_value}` : undefined;
  }))
    for (const i of at.slice(1))
      out.push({
        resource: `Listener ${res.listeners[i]!.name ?? ''}`,
        field: 'address',
        message: `${address} is taken by Listener ${res.listeners[at[0]!]!.name ?? ''}`,
      });
  const routeNames = new Set(res.routes.map((r) => r.name));
  const secretNames = new Set(res.secrets.map((s) => s.name));
  const clusterNames = new Set(res.clusters.map((c) => c.name));
  for (const listener of res.listeners) {
    (listener.filter_chains ?? []).forEach((chain, i) => {
      // An ext_authz gRPC service names an Envoy cluster the listener's filter is built against
      // (async_client_manager_impl.cc: "Unknown gRPC client cluster").
      for (const f of hcmOf(chain)?.http_filters ?? []) {
        const grpc = (f.typed_config as { grpc_service?: { envoy_grpc?: { cluster_name?: string } } } | undefined)
          ?.grpc_service?.envoy_grpc?.cluster_name;
        if (grpc !== undefined && !clusterNames.has(grpc))
          out.push({
            resource: `Listener ${listener.name ?? ''}`,
            field: `filter_chains[${i}]`,
            message: `HTTP filter ${f.name ?? ''} names gRPC cluster ${grpc}, which is not sent`,
          });
      }
      // The tracer's OTLP exporter too (tracing.ts): Envoy makes its gRPC client with the connection manager.
      const provider = hcmOf(chain)?.tracing?.provider?.typed_config as
        { grpc_service?: { envoy_grpc?: { cluster_name?: string } } } | undefined;
      const exporter = provider?.grpc_service?.envoy_grpc?.cluster_name;
      if (exporter !== undefined && !clusterNames.has(exporter))
        out.push({
          resource: `Listener ${listener.name ?? ''}`,
          field: `filter_chains[${i}]`,
          message: `the tracing provider names gRPC cluster ${exporter}, which is not sent`,
        });
      // A listener waits (warms) for the route configuration and the SDS secrets it names.
      const rds = hcmOf(chain)?.rds?.route_config_name;
      if (rds !== undefined && !routeNames.has(rds))
        out.push({
          resource: `Listener ${listener.name ?? ''}`,
          field: `filter_chains[${i}]`,
          message: `names RouteConfiguration ${rds}, which is not sent`,
        });
      const tls = chain.transport_socket?.typed_config as
        { common_tls_context?: { tls_certificate_sds_secret_configs?: { name?: string }[] } } | undefined;
      for (const sds of tls?.common_tls_context?.tls_certificate_sds_secret_configs ?? [])
        if (sds.name && !secretNames.has(sds.name))
          out.push({
            resource: `Listener ${listener.name ?? ''}`,
            field: `filter_chains[${i}].transport_socket`,
            message: `names Secret ${sds.name}, which is not sent`,
          });
    });
  }
  return out;
}
