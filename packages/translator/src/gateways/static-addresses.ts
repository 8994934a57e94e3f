// A Gateway's addresses: what each spec.addresses entry asks for, against the proxies' Service.
//
// GatewayStaticAddresses: an entry with a value and no routability asks for that address. We request one
// IP address through the Service's spec.loadBalancerIP (the one field every load balancer implementation
// reads) and trust only what the load balancer reports back in the Service's status: until it assigned
// the address, the Gateway is Programmed=False/AddressNotUsable (the conformance test expects that reason
// even beside a usable entry), and its status lists only the requested addresses it holds.
//
// GatewayAddressRoutability, GatewayAddressRoutabilityCluster (Gateway API v1.7, GEP-5093): an entry may
// ask for a reachability scope. `Cluster` is answered by the Service's ClusterIP (every Service has one,
// in the ServiceCIDR, reachable from inside the cluster); a Gateway that asks for Cluster addresses only
// gets a ClusterIP Service unless its ProxyConfig names a type (proxyServiceType). Each entry is judged
// on its own; one that cannot be satisfied is named in AddressesAssigned and the others are kept.
import type { Condition, Gateway, GatewayAddress, Service } from '@turnpike/api';
import type { GatewayModel } from '../model.js';
import { condition, type Problem } from '../status/conditions.js';

/** The address types a Gateway may name; others make it Accepted=False/UnsupportedAddress. */
export const SUPPORTED_ADDRESS_TYPES = new Set(['IPAddress', 'Hostname']);

export const CLUSTER_ROUTABILITY = 'Cluster';
/**
 * GEP-5093: "`testing.x-k8s.io/sentinel` is reserved for conformance. It carries no routability
 * guarantee. Implementations claiming `GatewayAddressRoutability` MUST support and report it".
 */
export const SENTINEL_ROUTABILITY = 'testing.x-k8s.io/sentinel';

/** What one spec.addresses entry asks for. */
interface Entry {
  index: number;
  type: string;
  value?: string;
  /** `default`: no routability requirement (empty, or the sentinel); `cluster`: a ClusterIP. */
  scope?: 'default' | 'cluster';
  /** The routability its status address reports, when the entry names it (the sentinel, Cluster). */
  reports?: string;
  /** Why no address of ours can ever satisfy it. */
  refused?: string;
}

/** An address the proxies' Service has, and its scope. */
interface Candidate {
  type: string;
  value: string;
  routability: '' | typeof CLUSTER_ROUTABILITY;
}

function entryOf(a: GatewayAddress, index: number): Entry {
  const type = a.type ?? 'IPAddress';
  const base = { index, type, ...(a.value ? { value: a.value } : {}) };
  const r = String(a.routability ?? '');
  if (r === '') return { ...base, scope: 'default' };
  if (r === SENTINEL_ROUTABILITY) return { ...base, scope: 'default', reports: r };
  if (r === CLUSTER_ROUTABILITY) {
    // GEP-5093: "An implementation MAY support `Cluster` for a `Hostname`, but in that case it MUST
    // guarantee that every address returned by ordinary in-cluster DNS resolution is in the cluster's
    // ServiceCIDR. Otherwise, it MUST leave the request unsatisfied."
    if (type !== 'IPAddress')
      return {
        ...base,
        refused:
          `routability Cluster is offered for IPAddress entries only (a ClusterIP); Turnpike cannot ` +
          `guarantee that every address a ${type} resolves to in the cluster is in the ServiceCIDR`,
      };
    return { ...base, scope: 'cluster', reports: r };
  }
  // GEP-5093: "Other values using the `testing.x-k8s.io` prefix are reserved and MUST be treated as
  // unsupported", and an implementation "MUST treat an unrecognized routability value as unsatisfiable".
  const refused = r.startsWith('testing.x-k8s.io/')
    ? `routability "${r}" is reserved for conformance testing and not supported (of that prefix only ` +
      `${SENTINEL_ROUTABILITY} is)`
    : r.includes('/')
      ? `routability "${r}" is an implementation-specific scope Turnpike does not offer (it offers the ` +
        `default, Cluster and ${SENTINEL_ROUTABILITY})`
      : `routability "${r}" is not one Turnpike recognizes (empty, Cluster, or a prefixed value)`;
  return { ...base, refused };
}

function entriesOf(gw: Gateway): Entry[] {
  return (gw.spec.addresses ?? []).map(entryOf);
}

/**
 * spec.addresses entries that name a value without asking for a scope (an entry without one leaves the
 * choice to us): what GatewayStaticAddresses requests from the load balancer.
 */
function requestedAddresses(gw: Gateway): (Entry & { value: string })[] {
  return entriesOf(gw).filter((e): e is Entry & { value: string } => e.scope === 'default' && !!e.value);
}

/** The IP address to put in the Service's spec.loadBalancerIP, if the Gateway asks for one. */
export function requestedLoadBalancerIP(gw: Gateway): string | undefined {
  return requestedAddresses(gw).find((a) => a.type === 'IPAddress')?.value;
}

/**
 * The type of the proxies' Service: the ProxyConfig's, else ClusterIP for a Gateway whose every address
 * entry asks for routability Cluster (no load balancer would give it anything it asked for: GEP-5093's
 * "request a cluster-internal address for a Gateway so that it is not exposed to the public internet"),
 * else LoadBalancer. A ProxyConfig's type is kept: a Cluster address "MAY be routable outside the cluster
 * at the network administrator's discretion", and the ClusterIP answers it whatever the type.
 */
export function proxyServiceType(g: GatewayModel): 'ClusterIP' | 'LoadBalancer' | 'NodePort' {
  const configured = g.proxyConfig?.spec.service?.type;
  if (configured) return configured;
  const entries = entriesOf(g.object);
  return entries.length && entries.every((e) => e.scope === 'cluster') ? 'ClusterIP' : 'LoadBalancer';
}

/** Why the requested static addresses are not (yet) the Gateway's, or undefined when they are. */
export function staticAddressProblem(
  gw: Gateway,
  serviceType: string,
  where: string,
  svc: Service | undefined,
): Problem | undefined {
  const requested = requestedAddresses(gw);
  if (!requested.length) return undefined;
  const notUsable = (message: string): Problem => ({ reason: 'AddressNotUsable', message });
  if (serviceType !== 'LoadBalancer') {
    return notUsable(
      `spec.addresses: a static address needs the proxies' Service to be of type LoadBalancer, and it is ` +
        `${serviceType} (ProxyConfig spec.service.type)`,
    );
  }
  const ip = requestedLoadBalancerIP(gw);
  for (const a of requested) {
    if (a.type === 'Hostname') {
      return notUsable(
        `spec.addresses[${a.index}]: the hostname ${a.value} cannot be requested; a LoadBalancer Service takes ` +
          `only an IP address`,
      );
    }
    if (a.value !== ip) {
      return notUsable(
        `spec.addresses[${a.index}]: only one static IP address can be requested (the Service's ` +
          `spec.loadBalancerIP), and it is ${ip}`,
      );
    }
  }
  const ingress = svc?.status?.loadBalancer?.ingress ?? [];
  if (!ingress.some((i) => i.ip === ip)) {
    const has =
      ingress
        .map((i) => i.ip ?? i.hostname)
        .filter(Boolean)
        .join(', ') || 'none';
    const index = requested.find((a) => a.value === ip)!.index;
    return notUsable(
      `spec.addresses[${index}]: the load balancer has not assigned ${ip} to ${where} (it reports: ${has})`,
    );
  }
  return undefined;
}

/** The Service's addresses: the load balancer's (of no particular scope) and its ClusterIPs. */
function candidatesOf(svc: Service | undefined): { balancer: Candidate[]; cluster: Candidate[] } {
  const balancer: Candidate[] = [];
  // A Service that is no longer of type LoadBalancer may keep a stale ingress until its controller clears it.
  if (svc?.spec?.type === undefined || svc.spec.type === 'LoadBalancer')
    for (const ing of svc?.status?.loadBalancer?.ingress ?? []) {
      if (ing.ip) balancer.push({ type: 'IPAddress', value: ing.ip, routability: '' });
      else if (ing.hostname) balancer.push({ type: 'Hostname', value: ing.hostname, routability: '' });
    }
  const spec = svc?.spec;
  const ips = Array.isArray(spec?.clusterIPs) && spec.clusterIPs.length ? spec.clusterIPs : [spec?.clusterIP];
  const cluster = ips
    .filter((ip): ip is string => typeof ip === 'string' && ip !== '' && ip !== 'None')
    .map((ip): Candidate => ({ type: 'IPAddress', value: ip, routability: CLUSTER_ROUTABILITY }));
  return { balancer, cluster };
}

const statusAddress = (c: Candidate, reports?: string): GatewayAddress => ({
  type: c.type,
  value: c.value,
  routability: reports ?? c.routability,
});

/**
 * The address of the generated Service when spec.addresses is empty, as before routability: the load
 * balancer's, else the ClusterIP. GEP-5093: "Implementations claiming `GatewayAddressRoutability` MUST
 * populate routability for every status address": empty for the load balancer's (no portable guarantee),
 * Cluster for a ClusterIP.
 */
function defaultAddresses(svc: Service | undefined): GatewayAddress[] {
  const { balancer, cluster } = candidatesOf(svc);
  return (balancer.length ? balancer : cluster.slice(0, 1)).map((c) => statusAddress(c));
}

/** What became of each spec.addresses entry, and what the Gateway's status says of its addresses. */
export interface AddressAssignment {
  /** status.addresses. */
  addresses: GatewayAddress[];
  /** The AddressesAssigned condition, or undefined while there is nothing to say yet (no Service). */
  assigned?: Condition;
  /** Why the Gateway is not Programmed for its addresses: AddressNotUsable, AddressNotAssigned. */
  programmed?: Problem;
}

/**
 * Judges each spec.addresses entry on its own (GEP-5093: "Implementations MUST evaluate each address
 * request separately"), giving each satisfied entry one distinct address of the Service.
 */
export function assignAddresses(
  g: GatewayModel,
  service: { namespace: string; name: string },
  svc: Service | undefined,
  generation: number | undefined,
): AddressAssignment {
  const gw = g.object;
  const where = `Service ${service.namespace}/${service.name}`;
  const staticProblem = staticAddressProblem(gw, proxyServiceType(g), where, svc);
  const entries = entriesOf(gw);
  if (!entries.length) {
    const addresses = defaultAddresses(svc);
    // GEP-5093: the condition "MUST be omitted until the controller has reconciled address assignment";
    // with spec.addresses empty it is True "if default address selection has completed".
    const assigned = addresses.length
      ? condition(
          'AddressesAssigned',
          true,
          'AddressesAssigned',
          `The proxies' ${where} has its address: ${addresses.map((a) => a.value).join(', ')}`,
          generation,
        )
      : undefined;
    return { addresses, ...(assigned ? { assigned } : {}) };
  }

  const { balancer, cluster } = candidatesOf(svc);
  const taken = new Set<string>();
  const key = (c: Candidate) => `${c.type}/${c.value}`;
  const got = new Map<number, GatewayAddress>();
  const unsatisfied = new Map<number, string>();
  // The most constrained first: a named value, then a Cluster entry, then those that take either scope,
  // so that an empty entry beside a Cluster one does not take the only ClusterIP.
  const rank = (e: Entry) => (e.value ? 0 : e.scope === 'cluster' ? 1 : 2);
  for (const e of [...entries].sort((a, b) => rank(a) - rank(b) || a.index - b.index)) {
    if (e.refused) {
      unsatisfied.set(e.index, e.refused);
      continue;
    }
    // GEP-5093: "An unset or empty request matches either an explicit empty value or `Cluster`"; a static
    // value without a scope is the load balancer's to assign (GatewayStaticAddresses); "An implementation
    // MUST NOT satisfy a `Cluster` or prefixed entry with an address of a different routability value".
    const pool = e.scope === 'cluster' ? cluster : e.value ? balancer : [...balancer, ...cluster];
    const match = pool.find((c) => c.type === e.type && (!e.value || c.value === e.value) && !taken.has(key(c)));
    if (match) {
      taken.add(key(match));
      got.set(e.index, statusAddress(match, e.reports));
      continue;
    }
    unsatisfied.set(e.index, notFound(e, where, svc, { balancer, cluster }));
  }

  const addresses = entries.flatMap((e) => (got.has(e.index) ? [got.get(e.index)!] : []));
  const missing = entries.filter((e) => unsatisfied.has(e.index));
  const list = missing.map((e) => `spec.addresses[${e.index}]: ${unsatisfied.get(e.index)}`).join('; ');
  // Until the Service exists, an entry it could satisfy is not judged yet (the condition is omitted).
  const pending = !svc && missing.some((e) => !e.refused);
  let assigned: Condition | undefined;
  if (!missing.length)
    assigned = condition(
      'AddressesAssigned',
      true,
      'AddressesAssigned',
      `Every entry of spec.addresses is assigned an address of the proxies' ${where}`,
      generation,
    );
  else if (!pending)
    // GEP-5093: some satisfied: "MUST set `AddressesAssigned=False` with reason `PartiallyAssigned`, with a
    // message enumerating the unsatisfied entries"; none: "MUST set `AddressesAssigned=False` with reason
    // `NotAssigned`".
    assigned = condition(
      'AddressesAssigned',
      false,
      addresses.length ? 'PartiallyAssigned' : 'NotAssigned',
      `${missing.length} of ${entries.length} spec.addresses entries not assigned: ${list}`,
      generation,
    );
  // GEP-5093: "If ***no*** entries can be satisfied, the Gateway MUST NOT be programmed" ("MUST set
  // `Programmed=False` with reason `AddressNotAssigned`"); some satisfied: "the implementation SHOULD
  // program the Gateway using the addresses it can satisfy". A static address the load balancer does not
  // hold keeps the Gateway from Programmed (AddressNotUsable), as GatewayStaticAddresses expects.
  const programmed: Problem | undefined =
    staticProblem ??
    (addresses.length
      ? undefined
      : { reason: 'AddressNotAssigned', message: `No entry of spec.addresses is assigned an address: ${list}` });
  return { addresses, ...(assigned ? { assigned } : {}), ...(programmed ? { programmed } : {}) };
}

/** Why an entry our Service could satisfy has no address of it (yet). */
function notFound(
  e: Entry,
  where: string,
  svc: Service | undefined,
  c: { balancer: Candidate[]; cluster: Candidate[] },
): string {
  if (!svc) return `waiting for the proxies' ${where} to be created`;
  const has = (l: Candidate[]) => l.map((x) => x.value).join(', ') || 'none';
  if (e.scope === 'cluster') {
    // GEP-5093: "For an `IPAddress` result, `Cluster` MUST use a ClusterIP from the ServiceCIDR."
    if (e.value)
      return (
        `${e.value} is not a ClusterIP of the proxies' ${where} (it has: ${has(c.cluster)}); Turnpike does not ` +
        `choose a ClusterIP, the API server allocates it`
      );
    return `no ClusterIP of the proxies' ${where} is left for it (it has: ${has(c.cluster)})`;
  }
  if (e.value) return `the load balancer has not assigned ${e.value} to the proxies' ${where}`;
  return (
    `no ${e.type} address of the proxies' ${where} is left for it (the load balancer reports: ` +
    `${has(c.balancer)}; ClusterIP: ${has(c.cluster)})`
  );
}
