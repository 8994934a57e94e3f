// Gateways and ListenerSets: which Gateways are ours, each listener's validity, the merged
// listener list with precedence (Gateway first, then ListenerSets oldest first), and the
// Gateway-level references.
import {
  GATEWAY_GROUP, TURNPIKE_GROUP,
  type Gateway, type Listener, type ListenerSet, type Namespace, type ProxyConfig, type ProxyStatus,
} from '@turnpike/api';
import { compareAge } from './compare.js';
import type { Problem } from './conditions.js';
import type { ClassResult } from './gateway-classes.js';
import { markConflictsAgainst, markConflictsWithin, markOverlappingCertificates } from './listener-conflicts.js';
import { kindsForProtocol, routeGroupKind, SUPPORTED_PROTOCOLS } from './listener-protocols.js';
import { checkListenerTLS, checkSecretRef } from './listener-tls.js';
import type { GatewayModel, ListenerModel, ListenerSetModel } from './model.js';
import type { ReferenceGrantIndex } from './reference-grants.js';
import { matchesSelector } from './selectors.js';
import { getObject, listObjects, type Snapshot } from './snapshot.js';

export function buildListener(
  snapshot: Snapshot, grants: ReferenceGrantIndex, gateway: Gateway, owner: Gateway | ListenerSet,
  ownerKind: 'Gateway' | 'ListenerSet', l: Listener, index: number,
): ListenerModel {
  const field = `spec.listeners[${index}]`;
  const m: ListenerModel = { gateway, owner, ownerKind, spec: l, attachable: true, supportedKinds: [], certificates: [] };
  if (!SUPPORTED_PROTOCOLS.has(l.protocol)) {
    m.attachable = false;
    m.notAccepted = { reason: 'UnsupportedProtocol', message: `${field}.protocol: ${l.protocol} is not supported (HTTP, HTTPS, TLS, TCP, UDP)` };
    return m;
  }
  const served = kindsForProtocol(l);
  const requested = l.allowedRoutes?.kinds;
  if (requested && requested.length) {
    const bad: string[] = [];
    for (const k of requested) {
      const group = k.group ?? GATEWAY_GROUP;
      if (group === GATEWAY_GROUP && served.includes(k.kind)) {
        if (!m.supportedKinds.some((s) => s.kind === k.kind)) m.supportedKinds.push(routeGroupKind(k.kind));
      } else bad.push(`${group}/${k.kind}`);
    }
    if (bad.length) {
      m.refsProblem = { reason: 'InvalidRouteKinds', message: `${field}.allowedRoutes.kinds: ${bad.join(', ')} cannot attach to a ${l.protocol} listener` };
      if (m.supportedKinds.length === 0) m.attachable = false;
    }
  } else {
    m.supportedKinds = served.map(routeGroupKind);
  }
  const ns = l.allowedRoutes?.namespaces;
  if (ns?.from === 'Selector' && !ns.selector) {
    m.attachable = false;
    m.notAccepted = { reason: 'UnsupportedValue', message: `${field}.allowedRoutes.namespaces.selector must be set when from is Selector` };
  }
  if (l.hostname && (l.protocol === 'TCP' || l.protocol === 'UDP')) {
    m.notAccepted = { reason: 'UnsupportedValue', message: `${field}.hostname must not be set on a ${l.protocol} listener` };
  }
  const tls = checkListenerTLS(snapshot, grants, owner, ownerKind, gateway, l, field);
  if (tls.notAccepted) m.notAccepted ??= tls.notAccepted;
  if (tls.refsProblem) m.refsProblem ??= tls.refsProblem;
  m.certificates = tls.certificates;
  if (tls.clientCA) m.clientCA = tls.clientCA;
  return m;
}

function resolveGatewayParameters(snapshot: Snapshot, gw: Gateway): { proxyConfig?: ProxyConfig; problem?: Problem } {
  const ref = gw.spec?.infrastructure?.parametersRef;
  if (!ref) return {};
  if (ref.group !== TURNPIKE_GROUP || ref.kind !== 'ProxyConfig') {
    return { problem: { reason: 'InvalidParameters', message: `spec.infrastructure.parametersRef: ${ref.group}/${ref.kind} is not supported, use ${TURNPIKE_GROUP}/ProxyConfig` } };
  }
  const pc = getObject<ProxyConfig>(snapshot, 'ProxyConfig', gw.metadata.namespace, ref.name);
  if (!pc) return { problem: { reason: 'InvalidParameters', message: `spec.infrastructure.parametersRef: ProxyConfig ${gw.metadata.namespace}/${ref.name} not found` } };
  return { proxyConfig: pc };
}

const SUPPORTED_ADDRESS_TYPES = new Set(['IPAddress', 'Hostname']);

function checkAddresses(gw: Gateway): Problem | undefined {
  for (const [i, a] of (gw.spec?.addresses ?? []).entries()) {
    const type = a.type ?? 'IPAddress';
    if (!SUPPORTED_ADDRESS_TYPES.has(type)) {
      return { reason: 'UnsupportedAddress', message: `spec.addresses[${i}].type: ${type} is not supported (IPAddress, Hostname)` };
    }
  }
  return undefined;
}

function listenerSetAllowed(snapshot: Snapshot, gw: Gateway, ls: ListenerSet): Problem | undefined {
  const from = gw.spec?.allowedListeners?.namespaces?.from ?? 'None';
  const lsNs = ls.metadata.namespace ?? '';
  const gwNs = gw.metadata.namespace ?? '';
  const deny = { reason: 'NotAllowed', message: `Gateway ${gwNs}/${gw.metadata.name} does not allow ListenerSets from namespace ${lsNs} (spec.allowedListeners.namespaces.from: ${from})` };
  switch (from) {
    case 'All': return undefined;
    case 'Same': return lsNs === gwNs ? undefined : deny;
    case 'Selector': {
      const ns = getObject<Namespace>(snapshot, 'Namespace', undefined, lsNs);
      return matchesSelector(gw.spec?.allowedListeners?.namespaces?.selector, ns?.metadata.labels) ? undefined : deny;
    }
    default: return deny;
  }
}

export function buildGateways(snapshot: Snapshot, classes: Map<string, ClassResult>, grants: ReferenceGrantIndex): {
  gateways: GatewayModel[];
  listenerSets: ListenerSetModel[];
} {
  const gateways: GatewayModel[] = [];
  const byKey = new Map<string, GatewayModel>();
  for (const gw of listObjects<Gateway>(snapshot, 'Gateway')) {
    const cls = classes.get(gw.spec?.gatewayClassName);
    if (!cls || !cls.model.accepted) continue;
    const model: GatewayModel = { object: gw, class: cls.model, listeners: [], listenerSets: [] };
    const params = resolveGatewayParameters(snapshot, gw);
    if (params.problem) model.parametersProblem = params.problem;
    const pc = params.proxyConfig ?? cls.model.proxyConfig;
    if (pc) model.proxyConfig = pc;
    const ps = getObject<ProxyStatus>(snapshot, 'ProxyStatus', gw.metadata.namespace, gw.metadata.name)?.status?.rejected;
    if (ps) model.proxyRejected = `proxy ${ps.node} rejected ${ps.typeUrl.slice(ps.typeUrl.lastIndexOf('.') + 1)} version ${ps.version}: ${ps.message}; the previous configuration stays in force`;
    const addr = checkAddresses(gw);
    if (addr) model.addressProblem = addr;
    const ccr = gw.spec?.tls?.backend?.clientCertificateRef;
    if (ccr) {
      const r = checkSecretRef(snapshot, grants, { kind: 'Gateway', namespace: gw.metadata.namespace ?? '' }, ccr,
        'spec.tls.backend.clientCertificateRef', { invalid: 'InvalidClientCertificateRef' });
      if (r.problem) model.refsProblem = r.problem;
    }
    model.listeners = (gw.spec?.listeners ?? []).map((l, i) => buildListener(snapshot, grants, gw, gw, 'Gateway', l, i));
    markConflictsWithin(model.listeners);
    gateways.push(model);
    byKey.set(`${gw.metadata.namespace}/${gw.metadata.name}`, model);
  }

  const listenerSets: ListenerSetModel[] = [];
  const sets = listObjects<ListenerSet>(snapshot, 'ListenerSet').sort(compareAge);
  for (const ls of sets) {
    const ref = ls.spec?.parentRef;
    if (!ref || (ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') continue;
    const gwModel = byKey.get(`${ref.namespace ?? ls.metadata.namespace}/${ref.name}`);
    if (!gwModel) continue; // not a parent of ours: leave it alone
    const model: ListenerSetModel = { object: ls, gateway: gwModel.object, listeners: [] };
    const denied = listenerSetAllowed(snapshot, gwModel.object, ls);
    model.listeners = (ls.spec?.listeners ?? []).map((l, i) => buildListener(snapshot, grants, gwModel.object, ls, 'ListenerSet', l, i));
    if (denied) {
      model.notAccepted = denied;
    } else {
      // Earlier listeners keep their port and hostname even when they conflict inside their own object.
      const accepted = gwModel.listeners.concat(...gwModel.listenerSets.map((s) => s.listeners)).filter((l) => !l.lostPrecedence && !l.notAccepted && !l.refsProblem && l.attachable);
      // Precedence first: a listener that loses to an earlier one no longer claims its port, so
      // it does not take its own set's other listeners down with it.
      for (const l of model.listeners) markConflictsAgainst(accepted, l);
      markConflictsWithin(model.listeners.filter((l) => !l.lostPrecedence));
      gwModel.listenerSets.push(model);
    }
    listenerSets.push(model);
  }
  for (const g of gateways) markOverlappingCertificates(g.listeners.concat(...g.listenerSets.map((s) => s.listeners)));
  return { gateways, listenerSets };
}

/** Listener is usable for traffic: accepted, no conflict, references resolved. */
export function listenerProgrammable(l: ListenerModel): boolean {
  return l.attachable && !l.notAccepted && !l.conflicted && !l.refsProblem;
}
