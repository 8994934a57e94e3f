// Route attachment (shared by every route kind): parentRef resolution, sectionName and port
// selection, and each listener's allowedRoutes (kinds and namespaces) and hostname intersection.
// Route → Gateway across namespaces is governed by allowedRoutes, not by ReferenceGrant.
import { GATEWAY_GROUP, type KubeObject, type Namespace, type ParentReference } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import { routeHostnamesOnListener } from './hostnames.js';
import type { GatewayModel, ListenerModel, ListenerSetModel } from '../model.js';
import { matchesSelector } from '../selectors.js';
import type { Inputs } from '../incremental/inputs.js';
import { fitted } from '../compact-values.js';

export interface ListenerVerdict {
  listener: ListenerModel;
  accepted: boolean;
  reason?: 'kind' | 'namespace' | 'hostname' | 'unusable' | 'sectionName' | 'port';
  hostnames: string[];
}

export interface ParentAttachment {
  /** The parentRef exactly as written, echoed in status. */
  ref: ParentReference;
  index: number;
  gateway: GatewayModel;
  /** Listeners that accepted the route, with the hostnames it serves on each. */
  attached: { listener: ListenerModel; hostnames: string[] }[];
  /** Every listener considered and why it said yes or no (for `explain`). */
  verdicts: ListenerVerdict[];
  problem?: Problem;
}

/** Parents by `namespace/name`; a lookup records the dependency on the parent's model. */
export interface ParentIndex {
  gateway(key: string): GatewayModel | undefined;
  listenerSet(key: string): ListenerSetModel | undefined;
}

function routeNamespaceAllowed(inputs: Inputs, l: ListenerModel, routeNs: string): boolean {
  const from = l.spec.allowedRoutes?.namespaces?.from ?? 'Same';
  const ownerNs = l.owner.metadata.namespace ?? '';
  switch (from) {
    case 'All':
      return true;
    case 'Same':
      return routeNs === ownerNs;
    case 'Selector': {
      const ns = inputs.get<Namespace>('Namespace', undefined, routeNs);
      return matchesSelector(l.spec.allowedRoutes?.namespaces?.selector, ns?.metadata.labels);
    }
    default:
      return false;
  }
}

/** The Gateway a parentRef names (directly, or through a ListenerSet of it) and the listeners it offers. */
interface ResolvedParent {
  refKind: string;
  key: string;
  gateway: GatewayModel;
  candidates: ListenerModel[];
  problem?: Problem;
}

function resolveParent(
  parents: ParentIndex,
  ref: ParentReference,
  index: number,
  routeNs: string,
): ResolvedParent | undefined {
  if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP) return undefined;
  const refKind = ref.kind ?? 'Gateway';
  const key = `${ref.namespace ?? routeNs}/${ref.name}`;
  if (refKind === 'Gateway') {
    const gateway = parents.gateway(key);
    return gateway && { refKind, key, gateway, candidates: gateway.listeners };
  }
  if (refKind !== 'ListenerSet') return undefined;
  const set = parents.listenerSet(key);
  if (!set || !set.gateway) return undefined;
  const gateway = parents.gateway(`${set.gateway.metadata.namespace}/${set.gateway.metadata.name}`);
  if (!gateway) return undefined;
  const parent: ResolvedParent = { refKind, key, gateway, candidates: set.listeners };
  if (set.notAccepted)
    parent.problem = {
      reason: 'NotAllowedByListeners',
      message: `parentRefs[${index}]: ListenerSet ${key} is not accepted by its Gateway`,
    };
  return parent;
}

/** Whether a listener the parentRef selected takes the route, and on which hostnames. */
function listenerVerdict(
  inputs: Inputs,
  listener: ListenerModel,
  kind: string,
  routeNs: string,
  routeHostnames: readonly string[] | undefined,
): ListenerVerdict {
  const refused = (reason: ListenerVerdict['reason']): ListenerVerdict => ({
    listener,
    accepted: false,
    reason,
    hostnames: [],
  });
  if (!listener.attachable) return refused('unusable');
  if (!listener.supportedKinds.some((k) => k.kind === kind)) return refused('kind');
  if (!routeNamespaceAllowed(inputs, listener, routeNs)) return refused('namespace');
  const hostnames =
    kind === 'TCPRoute' || kind === 'UDPRoute'
      ? ['*']
      : routeHostnamesOnListener(listener.spec.hostname, routeHostnames);
  if (hostnames.length === 0) return refused('hostname');
  return { listener, accepted: true, hostnames };
}

/** Why no listener took the route: only hostnames, or something the listeners do not allow. */
function refusalProblem(attachment: ParentAttachment, parent: ResolvedParent, kind: string, routeNs: string): Problem {
  const { verdicts, index } = attachment;
  const hostnameOnly =
    verdicts.some((v) => v.reason === 'hostname') &&
    !verdicts.some((v) => v.reason === 'kind' || v.reason === 'namespace');
  if (hostnameOnly)
    return {
      reason: 'NoMatchingListenerHostname',
      message:
        `parentRefs[${index}]: no hostname of the route intersects the hostnames of ${parent.refKind} ` +
        `${parent.key}'s listeners`,
    };
  return {
    reason: 'NotAllowedByListeners',
    message: `parentRefs[${index}]: ${describeRefusals(verdicts, kind, routeNs)}`,
  };
}

/**
 * Resolves every parentRef of a route. Parents that are not ours (unknown Gateway, other
 * controller's class) yield nothing: their status entries belong to someone else.
 */
export function attachRoute(
  inputs: Inputs,
  parents: ParentIndex,
  route: KubeObject,
  kind: string,
  parentRefs: readonly ParentReference[],
  routeHostnames: readonly string[] | undefined,
): ParentAttachment[] {
  const routeNs = route.metadata.namespace ?? '';
  const out: ParentAttachment[] = [];
  parentRefs.forEach((ref, index) => {
    const parent = resolveParent(parents, ref, index, routeNs);
    if (!parent) return;
    const attachment: ParentAttachment = { ref, index, gateway: parent.gateway, attached: [], verdicts: [] };
    out.push(attachment);
    if (parent.problem) {
      attachment.problem = parent.problem;
      return;
    }
    // sectionName and port select listeners; a listener they leave out is not a refusal.
    const selected: ListenerModel[] = [];
    for (const listener of parent.candidates) {
      if (ref.sectionName !== undefined && listener.spec.name !== ref.sectionName)
        attachment.verdicts.push({ listener, accepted: false, reason: 'sectionName', hostnames: [] });
      else if (ref.port !== undefined && listener.spec.port !== ref.port)
        attachment.verdicts.push({ listener, accepted: false, reason: 'port', hostnames: [] });
      else selected.push(listener);
    }
    if (selected.length === 0) {
      const what = [
        ref.sectionName !== undefined ? `sectionName "${ref.sectionName}"` : '',
        ref.port !== undefined ? `port ${ref.port}` : '',
      ]
        .filter(Boolean)
        .join(' and ');
      attachment.problem = {
        reason: 'NoMatchingParent',
        message: `parentRefs[${index}]: ${parent.refKind} ${parent.key} has no listener with ${what}`,
      };
      return;
    }
    for (const listener of selected) {
      const verdict = listenerVerdict(inputs, listener, kind, routeNs, routeHostnames);
      attachment.verdicts.push(verdict);
      if (verdict.accepted) attachment.attached.push({ listener, hostnames: verdict.hostnames });
    }
    if (attachment.attached.length === 0) attachment.problem = refusalProblem(attachment, parent, kind, routeNs);
    attachment.attached = fitted(attachment.attached);
    attachment.verdicts = fitted(attachment.verdicts);
  });
  return fitted(out);
}

function describeRefusals(verdicts: ListenerVerdict[], kind: string, routeNs: string): string {
  return verdicts
    .filter((v) => v.reason !== 'sectionName' && v.reason !== 'port')
    .map((v) => {
      const n = `listener "${v.listener.spec.name}"`;
      switch (v.reason) {
        case 'kind':
          return `${n} does not allow ${kind}`;
        case 'namespace':
          return `${n} does not allow routes from namespace ${routeNs}`;
        case 'unusable':
          return (
            `${n} is not usable ` + `(${v.listener.notAccepted?.reason ?? v.listener.refsProblem?.reason ?? 'invalid'})`
          );
        default:
          return `${n} refused the route`;
      }
    })
    .join('; ');
}
