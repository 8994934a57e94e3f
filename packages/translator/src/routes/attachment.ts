// Route attachment (shared by every route kind): parentRef resolution, sectionName and port
// selection, and each listener's allowedRoutes (kinds and namespaces) and hostname intersection.
// Route → Gateway across namespaces is governed by allowedRoutes, not by ReferenceGrant.
import { GATEWAY_GROUP, type KubeObject, type Namespace, type ParentReference } from '@turnpike/api';
import type { Problem } from '../conditions.js';
import { routeHostnamesOnListener } from '../hostnames.js';
import type { GatewayModel, ListenerModel, ListenerSetModel } from '../model.js';
import { matchesSelector } from '../selectors.js';
import type { Inputs } from '../incremental/inputs.js';

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
    const group = ref.group ?? GATEWAY_GROUP;
    const refKind = ref.kind ?? 'Gateway';
    if (group !== GATEWAY_GROUP) return;
    const key = `${ref.namespace ?? routeNs}/${ref.name}`;
    let gateway: GatewayModel | undefined;
    let candidates: ListenerModel[];
    let setProblem: Problem | undefined;
    if (refKind === 'Gateway') {
      gateway = parents.gateway(key);
      if (!gateway) return;
      candidates = gateway.listeners;
    } else if (refKind === 'ListenerSet') {
      const set = parents.listenerSet(key);
      if (!set || !set.gateway) return;
      gateway = parents.gateway(`${set.gateway.metadata.namespace}/${set.gateway.metadata.name}`);
      if (!gateway) return;
      candidates = set.listeners;
      if (set.notAccepted)
        setProblem = {
          reason: 'NotAllowedByListeners',
          message: `parentRefs[${index}]: ListenerSet ${key} is not accepted by its Gateway`,
        };
    } else {
      return;
    }
    const a: ParentAttachment = { ref, index, gateway, attached: [], verdicts: [] };
    out.push(a);
    if (setProblem) {
      a.problem = setProblem;
      return;
    }
    const selected: ListenerModel[] = [];
    for (const l of candidates) {
      if (ref.sectionName !== undefined && l.spec.name !== ref.sectionName)
        a.verdicts.push({ listener: l, accepted: false, reason: 'sectionName', hostnames: [] });
      else if (ref.port !== undefined && l.spec.port !== ref.port)
        a.verdicts.push({ listener: l, accepted: false, reason: 'port', hostnames: [] });
      else selected.push(l);
    }
    if (selected.length === 0) {
      const what = [
        ref.sectionName !== undefined ? `sectionName "${ref.sectionName}"` : '',
        ref.port !== undefined ? `port ${ref.port}` : '',
      ]
        .filter(Boolean)
        .join(' and ');
      a.problem = {
        reason: 'NoMatchingParent',
        message: `parentRefs[${index}]: ${refKind} ${key} has no listener with ${what}`,
      };
      return;
    }
    for (const l of selected) {
      const v: ListenerVerdict = { listener: l, accepted: false, hostnames: [] };
      a.verdicts.push(v);
      if (!l.attachable) {
        v.reason = 'unusable';
        continue;
      }
      if (!l.supportedKinds.some((k) => k.kind === kind)) {
        v.reason = 'kind';
        continue;
      }
      if (!routeNamespaceAllowed(inputs, l, routeNs)) {
        v.reason = 'namespace';
        continue;
      }
      const hostnames =
        kind === 'TCPRoute' || kind === 'UDPRoute' ? ['*'] : routeHostnamesOnListener(l.spec.hostname, routeHostnames);
      if (hostnames.length === 0) {
        v.reason = 'hostname';
        continue;
      }
      v.accepted = true;
      v.hostnames = hostnames;
      a.attached.push({ listener: l, hostnames });
    }
    if (a.attached.length === 0) {
      const hostnameOnly =
        a.verdicts.some((v) => v.reason === 'hostname') &&
        !a.verdicts.some((v) => v.reason === 'kind' || v.reason === 'namespace');
      a.problem = hostnameOnly
        ? {
            reason: 'NoMatchingListenerHostname',
            message:
              `parentRefs[${index}]: no hostname of the route intersects the hostnames of ${refKind} ` +
              `${key}'s listeners`,
          }
        : {
            reason: 'NotAllowedByListeners',
            message: `parentRefs[${index}]: ${describeRefusals(a.verdicts, kind, routeNs)}`,
          };
    }
  });
  return out;
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
