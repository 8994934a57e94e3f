// ReferenceGrant: every cross-namespace reference (route → backend, Gateway/ListenerSet → Secret,
// Gateway → ConfigMap, PluginInstallation → Secret, ProxyConfig → PluginInstallation) needs a grant
// in the target's namespace whose `from` names the referrer's kind and namespace and whose `to`
// names the target's kind (and, optionally, its name). Grants are additive; removing one revokes.
import type { ReferenceGrant } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import { listObjects, type Snapshot } from '../snapshot.js';

export interface Referrer {
  group: string;
  kind: string;
  namespace: string;
}
export interface Target {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export class ReferenceGrantIndex {
  private readonly byNamespace = new Map<string, ReferenceGrant[]>();

  constructor(snapshot: Snapshot) {
    for (const g of listObjects<ReferenceGrant>(snapshot, 'ReferenceGrant')) {
      const ns = g.metadata.namespace ?? '';
      const list = this.byNamespace.get(ns) ?? [];
      list.push(g);
      this.byNamespace.set(ns, list);
    }
  }

  /** True when the reference stays in one namespace or a grant allows it. */
  allows(from: Referrer, to: Target): boolean {
    if (from.namespace === to.namespace) return true;
    for (const g of this.byNamespace.get(to.namespace) ?? []) {
      const spec = g.spec ?? { from: [], to: [] };
      const fromOk = (spec.from ?? []).some(
        (f) => (f.group ?? '') === from.group && f.kind === from.kind && f.namespace === from.namespace,
      );
      if (!fromOk) continue;
      const toOk = (spec.to ?? []).some(
        (t) => (t.group ?? '') === to.group && t.kind === to.kind && (!t.name || t.name === to.name),
      );
      if (toOk) return true;
    }
    return false;
  }
}

/**
 * The rule as the routes, listeners and plugins apply it: RefNotPermitted naming the target, the
 * namespace a grant must be in and what it must allow; undefined when the reference is allowed.
 */
export function referenceNotPermitted(
  grants: { allows(from: Referrer, to: Target): boolean },
  from: Referrer,
  to: Target,
  field: string,
): Problem | undefined {
  if (grants.allows(from, to)) return undefined;
  return {
    reason: 'RefNotPermitted',
    message:
      `${field}: ${to.kind} ${to.namespace}/${to.name} is in another namespace and no ReferenceGrant in ` +
      `${to.namespace} allows ${from.kind} from ${from.namespace}`,
  };
}
