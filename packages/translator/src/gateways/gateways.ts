// Gateways and ListenerSets: which Gateways are ours, each listener's validity, the merged
// listener list with precedence (Gateway first, then ListenerSets oldest first), and the
// Gateway-level references.
import {
  GATEWAY_GROUP,
  TURNPIKE_GROUP,
  type Gateway,
  type Listener,
  type ListenerSet,
  type Namespace,
  type ProxyConfig,
} from '@turnpike/api';
import { compareAge } from '../compare.js';
import { SUPPORTED_ADDRESS_TYPES } from './static-addresses.js';
import type { Problem } from '../status/conditions.js';
import type { ClassResult } from './gateway-classes.js';
import {
  markConflictsAgainst,
  markConflictsWithin,
  markOverlappingCertificates,
  markOverlappingHostnames,
} from './listener-conflicts.js';
import { kindsForProtocol, routeGroupKind, SUPPORTED_PROTOCOLS } from './listener-protocols.js';
import { checkListenerTLS, checkSecretRef } from './listener-tls.js';
import { resolveListenerFilters } from './listener-filters.js';
import { listenerClaimsPort, listenerConfigInvalid, listenerProgrammable } from './listener-validity.js';
import type { GatewayModel, ListenerModel, ListenerSetModel } from '../model.js';
import type { Inputs } from '../incremental/inputs.js';
import type { GatewayContext } from '../context.js';
import { gatewayHttpSettings } from '../ir/http-settings.js';
import { matchesSelector, selectorProblem } from '../selectors.js';

/**
 * `h2OverTls`: whether the Gateway's HTTPS listeners offer HTTP/2 through ALPN (ProxyConfig
 * `spec.http.alpn`). Without it they serve no GRPCRoute: "Implementations supporting GRPCRoute
 * with the HTTPS ProtocolType MUST accept HTTP/2 connections without an initial upgrade from
 * HTTP/1.1, i.e. via ALPN" (GRPCRoute), and a listener names in supportedKinds only what it serves.
 */
export function buildListener(
  ctx: GatewayContext,
  gateway: Gateway,
  owner: Gateway | ListenerSet,
  ownerKind: 'Gateway' | 'ListenerSet',
  l: Listener,
  index: number,
  h2OverTls = true,
): ListenerModel {
  const { inputs } = ctx;
  const field = `spec.listeners[${index}]`;
  const m: ListenerModel = {
    gateway,
    owner,
    ownerKind,
    spec: l,
    attachable: true,
    supportedKinds: [],
    certificates: [],
  };
  if (!SUPPORTED_PROTOCOLS.has(l.protocol)) {
    m.attachable = false;
    m.notAccepted = {
      reason: 'UnsupportedProtocol',
      message: `${field}.protocol: ${l.protocol} is not supported (HTTP, HTTPS, TLS, TCP, UDP)`,
    };
    return m;
  }
  const noH2 = l.protocol === 'HTTPS' && !h2OverTls;
  const served = kindsForProtocol(l).filter((k) => !(noH2 && k === 'GRPCRoute'));
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
      const why =
        noH2 && bad.includes(`${GATEWAY_GROUP}/GRPCRoute`)
          ? " (its ProxyConfig's spec.http.alpn leaves out h2, which gRPC needs)"
          : '';
      m.refsProblem = {
        reason: 'InvalidRouteKinds',
        message: `${field}.allowedRoutes.kinds: ${bad.join(', ')} cannot attach to a ${l.protocol} listener${why}`,
      };
      if (m.supportedKinds.length === 0) m.attachable = false;
    }
  } else {
    m.supportedKinds = served.map(routeGroupKind);
  }
  const ns = l.allowedRoutes?.namespaces;
  if (ns?.from === 'Selector' && !ns.selector) {
    m.attachable = false;
    m.notAccepted = {
      reason: 'UnsupportedValue',
      message: `${field}.allowedRoutes.namespaces.selector must be set when from is Selector`,
    };
  } else if (ns?.from === 'Selector' && ns.selector) {
    const p = selectorProblem(ns.selector, `${field}.allowedRoutes.namespaces.selector`);
    if (p) {
      m.attachable = false;
      m.notAccepted = { reason: 'UnsupportedValue', message: p };
    }
  }
  if (l.hostname && (l.protocol === 'TCP' || l.protocol === 'UDP')) {
    m.notAccepted = {
      reason: 'UnsupportedValue',
      message: `${field}.hostname must not be set on a ${l.protocol} listener`,
    };
  }
  const filters = resolveListenerFilters(ctx, owner, ownerKind, l, field);
  if (filters.notAccepted) m.notAccepted ??= filters.notAccepted;
  // Before an InvalidRouteKinds, which would leave the listener serving: it must not serve unguarded.
  if (filters.refsProblem) m.refsProblem = filters.refsProblem;
  if (filters.filters?.length) m.preRouting = filters.filters;
  if (filters.pluginUses) m.preRoutingPlugins = filters.pluginUses;
  if (filters.tlsPolicies) m.preRoutingTLSPolicies = filters.tlsPolicies;
  const tls = checkListenerTLS(inputs, owner, ownerKind, gateway, l, field);
  if (tls.notAccepted) m.notAccepted ??= tls.notAccepted;
  if (tls.refsProblem && !m.refsProblem) {
    m.refsProblem = tls.refsProblem;
    if (tls.someCertificatesInvalid) m.someCertificatesInvalid = true;
  }
  m.certificates = tls.certificates;
  if (tls.clientCA) m.clientCA = tls.clientCA;
  if (tls.clientCAOptional) m.clientCAOptional = true;
  return m;
}

function resolveGatewayParameters(inputs: Inputs, gw: Gateway): { proxyConfig?: ProxyConfig; problem?: Problem } {
  const ref = gw.spec?.infrastructure?.parametersRef;
  if (!ref) return {};
  if (ref.group !== TURNPIKE_GROUP || ref.kind !== 'ProxyConfig') {
    return {
      problem: {
        reason: 'InvalidParameters',
        message:
          `spec.infrastructure.parametersRef: ${ref.group}/${ref.kind} is not supported, use ` +
          `${TURNPIKE_GROUP}/ProxyConfig`,
      },
    };
  }
  const pc = inputs.get<ProxyConfig>('ProxyConfig', gw.metadata.namespace, ref.name);
  if (!pc)
    return {
      problem: {
        reason: 'InvalidParameters',
        message: `spec.infrastructure.parametersRef: ProxyConfig ${gw.metadata.namespace}/${ref.name} not found`,
      },
    };
  return { proxyConfig: pc };
}

function checkAddresses(gw: Gateway): Problem | undefined {
  for (const [i, a] of (gw.spec?.addresses ?? []).entries()) {
    const type = a.type ?? 'IPAddress';
    if (!SUPPORTED_ADDRESS_TYPES.has(type)) {
      return {
        reason: 'UnsupportedAddress',
        message: `spec.addresses[${i}].type: ${type} is not supported (IPAddress, Hostname)`,
      };
    }
  }
  return undefined;
}

function listenerSetAllowed(inputs: Inputs, gw: Gateway, ls: ListenerSet): Problem | undefined {
  const from = gw.spec?.allowedListeners?.namespaces?.from ?? 'None';
  const lsNs = ls.metadata.namespace ?? '';
  const gwNs = gw.metadata.namespace ?? '';
  const deny: Problem = {
    reason: 'NotAllowed',
    message:
      `Gateway ${gwNs}/${gw.metadata.name} does not allow ListenerSets from namespace ${lsNs} ` +
      `(spec.allowedListeners.namespaces.from: ${from})`,
  };
  switch (from) {
    case 'All':
      return undefined;
    case 'Same':
      return lsNs === gwNs ? undefined : deny;
    case 'Selector': {
      const ns = inputs.get<Namespace>('Namespace', undefined, lsNs);
      return matchesSelector(gw.spec?.allowedListeners?.namespaces?.selector, ns?.metadata.labels) ? undefined : deny;
    }
    default:
      return deny;
  }
}

/** A Gateway of ours and the ListenerSets that name it as parent (accepted or not). */
export interface GatewayGroup {
  gateway: GatewayModel;
  listenerSets: ListenerSetModel[];
}

/** Whether the Gateway's HTTPS listeners offer h2 (the xds side's default ALPN does; ir/http-settings.ts). */
function offersH2OverTls(pc: ProxyConfig | undefined): boolean {
  const alpn = gatewayHttpSettings(pc)?.alpn;
  return !alpn || alpn.includes('h2');
}

/**
 * Builds one Gateway of an accepted class with its ListenerSets (`sets`: every ListenerSet whose
 * parentRef names it). Listener precedence: the Gateway's own first, then ListenerSets oldest first.
 */
export function buildGatewayGroup(
  ctx: GatewayContext,
  gw: Gateway,
  cls: ClassResult,
  sets: readonly ListenerSet[],
): GatewayGroup {
  const { inputs } = ctx;
  const model: GatewayModel = { object: gw, class: cls.model, listeners: [], listenerSets: [] };
  const params = resolveGatewayParameters(inputs, gw);
  if (params.problem) model.parametersProblem = params.problem;
  const pc = params.proxyConfig ?? cls.model.proxyConfig;
  if (pc) model.proxyConfig = pc;
  const addr = checkAddresses(gw);
  if (addr) model.addressProblem = addr;
  const ccr = gw.spec?.tls?.backend?.clientCertificateRef;
  if (ccr) {
    const r = checkSecretRef(
      inputs,
      { kind: 'Gateway', namespace: gw.metadata.namespace ?? '' },
      ccr,
      'spec.tls.backend.clientCertificateRef',
      { invalid: 'InvalidClientCertificateRef' },
    );
    if (r.problem) model.refsProblem = r.problem;
    if (r.certificate) model.backendClientCertificate = r.certificate;
  }
  const h2 = offersH2OverTls(pc);
  model.listeners = (gw.spec?.listeners ?? []).map((l, i) => buildListener(ctx, gw, gw, 'Gateway', l, i, h2));
  markConflictsWithin(model.listeners);
  model.notAccepted = gatewayNotAccepted(model);
  const parentProblem: Problem | undefined = model.notAccepted && {
    reason: 'ParentNotAccepted',
    message: `parent Gateway ${gw.metadata.namespace}/${gw.metadata.name} is not accepted: ${model.notAccepted.message}`,
  };

  const listenerSets: ListenerSetModel[] = [];
  for (const ls of [...sets].sort(compareAge)) {
    const setModel: ListenerSetModel = { object: ls, gateway: gw, listeners: [] };
    const denied = parentProblem ?? listenerSetAllowed(inputs, gw, ls);
    setModel.listeners = (ls.spec?.listeners ?? []).map((l, i) => buildListener(ctx, gw, ls, 'ListenerSet', l, i, h2));
    if (denied) {
      setModel.notAccepted = denied;
    } else {
      // Earlier listeners keep their port and hostname even when they conflict inside their own object.
      const claimed = mergedListeners(model).filter(listenerClaimsPort);
      // Precedence first: a listener that loses to an earlier one no longer claims its port, so
      // it does not take its own set's other listeners down with it.
      for (const l of setModel.listeners) markConflictsAgainst(claimed, l);
      markConflictsWithin(setModel.listeners.filter((l) => !l.lostPrecedence));
      model.listenerSets.push(setModel);
    }
    listenerSets.push(setModel);
  }
  const merged = mergedListeners(model);
  markOverlappingHostnames(merged);
  markOverlappingCertificates(merged);
  return { gateway: model, listenerSets };
}

/** The Gateway-level Accepted=False problem, if any. */
function gatewayNotAccepted(g: GatewayModel): Problem | undefined {
  if (g.parametersProblem) return g.parametersProblem;
  if (g.addressProblem) return g.addressProblem;
  // A listener that is not valid but still serves part of its routes (route kinds it cannot serve
  // beside ones it can) keeps the Gateway accepted.
  if (g.listeners.length > 0 && g.listeners.every((l) => listenerConfigInvalid(l) && !listenerProgrammable(l)))
    return { reason: 'ListenersNotValid', message: 'No listener is valid' };
  return undefined;
}

/** Does this ListenerSet name a Gateway as its parent? Returns `namespace/name` of the Gateway. */
export function listenerSetParent(ls: ListenerSet): string | undefined {
  const ref = ls.spec?.parentRef;
  if (!ref || (ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') return undefined;
  return `${ref.namespace ?? ls.metadata.namespace}/${ref.name}`;
}

/** The merged listener list of a Gateway: its own, then its accepted ListenerSets' in precedence order. */
export function mergedListeners(g: GatewayModel): ListenerModel[] {
  return g.listeners.concat(...g.listenerSets.map((s) => s.listeners));
}

/**
 * The PluginInstallations (`namespace/name`, sorted) the listener filters of a Gateway and its
 * ListenerSets use (GEP-5224 ExtensionRef), fetched or not: what the Gateway consumes and must be
 * fetched for it to serve those listeners.
 */
export function listenerFilterPlugins(g: GatewayModel): string[] {
  return [...new Set(mergedListeners(g).flatMap((l) => l.preRoutingPlugins ?? []))].sort();
}
