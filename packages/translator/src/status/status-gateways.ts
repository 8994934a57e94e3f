// Status of GatewayClasses, Gateways, their listeners and ListenerSets.
import type { Condition, Gateway, GatewayStatus, ListenerStatus, Service } from '@turnpike/api';

export type ServiceLookup = (namespace: string, name: string) => Service | undefined;
import { condition, conditionOf, resolvedRefsCondition, sortConditions } from './conditions.js';
import type { ClassResult } from '../gateways/gateway-classes.js';
import { mergedListeners } from '../gateways/gateways.js';
import { listenerConfigInvalid as configInvalid, listenerProgrammable } from '../gateways/listener-validity.js';
import { proxyPlacement } from '../ir/proxy-placement.js';
import { proxyNames, type GatewayProxies } from '../proxies/gateway-proxies.js';
import { assignAddresses } from '../gateways/static-addresses.js';
import type { GatewayModel, ListenerModel, ListenerSetModel } from '../model.js';
import type { Problem } from './conditions.js';

export const CONFIG_REJECTED = 'turnpike.dev/ConfigRejected';
/** Whether every connected proxy acknowledged the configuration served now (from their ACKs). */
export const PROXIES_IN_SYNC = 'turnpike.dev/ProxiesInSync';
/**
 * Set while the serving path withholds part of the configuration because Envoy would refuse it
 * (one bad route must not take its port down): names the object and field, and what Envoy says.
 */
export const CONFIG_WITHHELD = 'turnpike.dev/ConfigWithheld';

export function gatewayClassStatus(c: ClassResult): Record<string, unknown> {
  const gen = c.model.object.metadata.generation;
  const accepted = conditionOf(
    'Accepted',
    c.problem,
    { reason: 'Accepted', message: 'GatewayClass is accepted by turnpike.dev/gateway-controller' },
    gen,
  );
  const status: Record<string, unknown> = { conditions: [accepted] };
  if (!c.problem) status.supportedFeatures = c.supportedFeatures.map((name) => ({ name }));
  return status;
}

/**
 * A listener's status. `notServed` says why its owner serves nothing at all (a Gateway that is not
 * accepted, a ListenerSet its Gateway does not accept): then the listener is not Programmed either.
 */
export function listenerStatus(l: ListenerModel, attachedRoutes: number, notServed?: Problem): ListenerStatus {
  const gen = l.owner.metadata.generation;
  const conds: Condition[] = [];
  const bad = l.notAccepted ?? l.conflicted;
  conds.push(conditionOf('Accepted', bad, { reason: 'Accepted', message: 'Listener is accepted' }, gen));
  if (l.conflicted) conds.push(condition('Conflicted', true, l.conflicted.reason, l.conflicted.message, gen));
  else if (l.ownerKind === 'ListenerSet')
    conds.push(condition('Conflicted', false, 'NoConflicts', 'No conflict with other listeners', gen));
  conds.push(resolvedRefsCondition(l.refsProblem, gen));
  if (notServed) {
    conds.push(
      condition('Programmed', false, notServed.reason, `Listener is not programmed: ${notServed.message}`, gen),
    );
  } else if (listenerProgrammable(l)) {
    conds.push(condition('Programmed', true, 'Programmed', 'Listener is programmed in the proxy configuration', gen));
  } else {
    // ListenerSet listeners say why in the set's terms (conflict, or ListenersNotValid).
    const reason =
      l.ownerKind === 'ListenerSet' ? (l.conflicted ? l.conflicted.reason : 'ListenersNotValid') : 'Invalid';
    const why = (l.notAccepted ?? l.conflicted ?? l.refsProblem)?.message ?? 'listener is not valid';
    conds.push(condition('Programmed', false, reason, `Listener is not programmed: ${why}`, gen));
  }
  if (l.overlappingTLS)
    conds.push(condition('OverlappingTLSConfig', true, l.overlappingTLS.reason, l.overlappingTLS.message, gen));
  // A listener in a protocol conflict inside its own Gateway serves no route kind at all
  // (TLSRouteListenerMixedTerminationNotSupported expects an empty supportedKinds).
  const supportedKinds =
    l.conflicted?.reason === 'ProtocolConflict' && !l.lostPrecedence && l.ownerKind === 'Gateway'
      ? []
      : l.supportedKinds;
  return { name: l.spec.name, supportedKinds, attachedRoutes, conditions: sortConditions(conds) };
}

export function gatewayStatus(
  g: GatewayModel,
  attached: Map<ListenerModel, number>,
  services: ServiceLookup,
  proxyNamespace: string | undefined,
  told: GatewayProxies = {},
): GatewayStatus {
  const gw: Gateway = g.object;
  const gen = gw.metadata.generation;
  const conds: Condition[] = [];
  const invalid = g.listeners.filter(configInvalid);
  if (g.notAccepted) conds.push(condition('Accepted', false, g.notAccepted.reason, g.notAccepted.message, gen));
  else if (invalid.length) conds.push(someListenersInvalid(invalid, gen));
  else conds.push(condition('Accepted', true, 'Accepted', 'Gateway is accepted', gen));

  const listeners = mergedListeners(g);
  const programmable = listeners.filter(listenerProgrammable);
  const proxies = proxyPlacement(gw.metadata.namespace ?? '', gw.metadata.name, proxyNamespace);
  const svc = services(proxies.namespace, proxies.name);
  const { addresses, assigned, programmed: addressing } = assignAddresses(g, proxies, svc, gen);
  // Whether an IR is served at all (a Gateway with no valid listener keeps its proxies and
  // address, serving nothing, so that fixing a typo does not give up a load balancer).
  const served = !g.parametersProblem && !g.addressProblem;
  // Programmed means the configuration is served to the data plane, not that pods are ready;
  // a Gateway that is not accepted is not Programmed (GatewayReasonInvalid).
  if (g.notAccepted)
    conds.push(condition('Programmed', false, 'Invalid', `No configuration is served: ${g.notAccepted.message}`, gen));
  else if (addressing) conds.push(condition('Programmed', false, addressing.reason, addressing.message, gen));
  else
    conds.push(
      condition(
        'Programmed',
        true,
        'Programmed',
        `Configuration for ${programmable.length} listener(s) is served to the proxy`,
        gen,
      ),
    );

  const refs = g.refsProblem;
  // Listener references are reported on each listener; this one covers the Gateway's own.
  conds.push(resolvedRefsCondition(refs, gen));

  // What the proxies said about the last configuration (our own condition type).
  if (told.rejected) conds.push(condition(CONFIG_REJECTED, true, 'Rejected', told.rejected, gen));
  if (told.withheld)
    conds.push(
      condition(
        CONFIG_WITHHELD,
        true,
        'RefusedByEnvoyRules',
        `withheld from the proxies, the rest is served: ${told.withheld.join('; ')}`,
        gen,
      ),
    );
  if (told.sync) conds.push(proxiesInSync(told.sync, gen));
  // A Gateway that is not accepted has no addresses assigned for it to speak of.
  if (assigned && !g.notAccepted) conds.push(assigned);
  const status: GatewayStatus = {
    conditions: sortConditions(conds),
    listeners: g.listeners.map((l) =>
      listenerStatus(
        l,
        attached.get(l) ?? 0,
        served ? undefined : { reason: 'Invalid', message: 'the Gateway is not accepted' },
      ),
    ),
  };
  if (addresses.length) status.addresses = addresses;
  const acceptedSets = g.listenerSets.filter(
    (s) => s.listeners.some((l) => !configInvalid(l)) && !s.notAccepted,
  ).length;
  if (g.listenerSets.length || gw.spec.allowedListeners) status.attachedListenerSets = acceptedSets;
  return status;
}

/** Accepted with some listeners invalid (the others are served): the same words for Gateways and ListenerSets. */
function someListenersInvalid(invalid: readonly ListenerModel[], gen: number | undefined): Condition {
  const names = invalid.map((l) => l.spec.name).join(', ');
  return condition('Accepted', true, 'ListenersNotValid', `Listeners not valid: ${names}`, gen);
}

/** From the replicas' ProxyReports (every proxy of the Gateway, whichever replica it is connected to); a proxy is behind once a push went unacknowledged for a second (or after a NACK). */
function proxiesInSync(sync: { connected: number; behind: string[] }, gen: number | undefined): Condition {
  const { connected, behind } = sync;
  if (!behind.length)
    return condition(
      PROXIES_IN_SYNC,
      true,
      'InSync',
      `All ${connected} connected proxies run the current configuration`,
      gen,
    );
  const message = `${behind.length} of ${connected} connected proxies have not acknowledged the current configuration: ${proxyNames(behind)}`;
  return condition(PROXIES_IN_SYNC, false, 'Behind', message, gen);
}

export function listenerSetStatus(
  s: ListenerSetModel,
  attached: Map<ListenerModel, number>,
  gatewayServed = true,
): Record<string, unknown> {
  // A set its Gateway does not accept, or on a Gateway that serves nothing, serves none of its listeners.
  const notServed =
    s.notAccepted ?? (gatewayServed ? undefined : { reason: 'Invalid', message: 'its Gateway is not accepted' });
  const gen = s.object.metadata.generation;
  const conds: Condition[] = [];
  const invalid = s.listeners.filter(configInvalid);
  const programmable = s.listeners.filter(listenerProgrammable);
  if (s.notAccepted) {
    conds.push(condition('Accepted', false, s.notAccepted.reason, s.notAccepted.message, gen));
    conds.push(condition('Programmed', false, s.notAccepted.reason, s.notAccepted.message, gen));
  } else {
    const all = s.listeners.length > 0 && invalid.length === s.listeners.length;
    if (all) conds.push(condition('Accepted', false, 'ListenersNotValid', 'No listener is valid', gen));
    else if (invalid.length) conds.push(someListenersInvalid(invalid, gen));
    else conds.push(condition('Accepted', true, 'Accepted', 'ListenerSet is accepted', gen));
    conds.push(
      programmable.length === 0
        ? condition('Programmed', false, 'ListenersNotValid', 'No listener can be programmed', gen)
        : condition('Programmed', true, 'Programmed', 'Listeners are programmed in the proxy configuration', gen),
    );
  }
  return {
    conditions: sortConditions(conds),
    listeners: s.listeners.map((l) => listenerStatus(l, attached.get(l) ?? 0, notServed)),
  };
}
