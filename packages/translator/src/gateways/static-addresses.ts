// GatewayStaticAddresses: a Gateway's spec.addresses asks for the address its proxies' Service gets.
// We request one IP address through the Service's spec.loadBalancerIP (the one field every load
// balancer implementation reads) and trust only what the load balancer reports back in the
// Service's status: until it assigned the address, the Gateway is Programmed=False/AddressNotUsable,
// and its status lists only the requested addresses it holds.
import type { Gateway, GatewayAddress, Service } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';

/** The address types a Gateway may name; others make it Accepted=False/UnsupportedAddress. */
export const SUPPORTED_ADDRESS_TYPES = new Set(['IPAddress', 'Hostname']);

interface Requested {
  index: number;
  type: string;
  value: string;
}

/**
 * spec.addresses entries that name a value (an entry without one leaves the choice to us). An entry
 * that asks for a routability is never one: it cannot be satisfied (routabilityProblem).
 */
function requestedAddresses(gw: Gateway): Requested[] {
  return (gw.spec.addresses ?? []).flatMap((a, index) =>
    a.value && !a.routability ? [{ index, type: a.type ?? 'IPAddress', value: a.value }] : [],
  );
}

/** The first spec.addresses entry asking for a routability scope (Gateway API v1.7, GEP-5093). */
function routabilityRequest(gw: Gateway): { index: number; routability: string } | undefined {
  const index = (gw.spec.addresses ?? []).findIndex((a) => !!a.routability);
  return index < 0 ? undefined : { index, routability: gw.spec.addresses![index]!.routability! };
}

/**
 * GatewayAddressRoutability is not supported: the proxies' Service gives the Gateway its address, of
 * whatever scope its type has. The GEP forbids satisfying a `Cluster` (or prefixed) request with an
 * address of another scope, so such a request is reported as not assigned, never answered with the
 * load balancer's address.
 */
function routabilityProblem(gw: Gateway): Problem | undefined {
  const asked = routabilityRequest(gw);
  if (!asked) return undefined;
  return {
    reason: 'AddressNotAssigned',
    message:
      `spec.addresses[${asked.index}].routability: "${asked.routability}" cannot be satisfied; Turnpike does not ` +
      `assign addresses by routability (the proxies' Service address is of its type's scope), so none is assigned`,
  };
}

/** The IP address to put in the Service's spec.loadBalancerIP, if the Gateway asks for one. */
export function requestedLoadBalancerIP(gw: Gateway): string | undefined {
  return requestedAddresses(gw).find((a) => a.type === 'IPAddress')?.value;
}

/** Why the requested static addresses are not (yet) the Gateway's, or undefined when they are. */
export function staticAddressProblem(
  gw: Gateway,
  serviceType: string,
  serviceName: string,
  svc: Service | undefined,
): Problem | undefined {
  const routability = routabilityProblem(gw);
  if (routability) return routability;
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
    const where = requested.find((a) => a.value === ip)!.index;
    return notUsable(
      `spec.addresses[${where}]: the load balancer has not assigned ${ip} to Service ` +
        `${gw.metadata.namespace}/${serviceName} (it reports: ${has})`,
    );
  }
  return undefined;
}

/**
 * With static addresses requested, the status lists those the load balancer assigned, and only
 * those; with a routability requested, never the Service's own addresses (they are not of that scope).
 */
export function assignedStaticAddresses(gw: Gateway, svc: Service | undefined): GatewayAddress[] | undefined {
  const requested = requestedAddresses(gw);
  if (!requested.length && !routabilityRequest(gw)) return undefined;
  const assigned = new Set((svc?.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname));
  return requested.filter((a) => assigned.has(a.value)).map((a) => ({ type: a.type, value: a.value }));
}
