// XBackend status (GEP-4894): `ancestors`, the Gateways whose routes reach the XBackend, each with
// Accepted: True when every backendRef to it is served, else False with the first problem found
// with the XBackend itself ("A controller that manages the Backend must add an entry for each
// ancestor it manages and remove the entry when the controller no longer considers the Backend to be
// associated with that ancestor"). Derived again when a route was translated again or an XBackend changed.
import type { Condition, PolicyAncestorStatus } from '@turnpike/api';
import { condition, sortConditions } from '../status/conditions.js';
import { parentCarriesTraffic } from '../status/status-routes.js';
import type { TranslationRun } from '../incremental/run.js';
import type { RouteStage } from './route-stage.js';
import type { Problem } from '../status/conditions.js';
import { XBACKEND_KIND } from '../routes/xbackends.js';
import { getObject } from '../snapshot.js';

/** The CRD's bound on status.ancestors (MaxItems=32). */
export const MAX_XBACKEND_ANCESTORS = 32;

type AncestorRef = PolicyAncestorStatus['ancestorRef'];

export class XBackendStatusStage {
  private written = new Set<string>();

  update(run: TranslationRun, routes: RouteStage): void {
    if (routes.statusDirty.size === 0 && run.changedObjects(XBACKEND_KIND).length === 0) return;
    // XBackend → ancestor (canonical JSON) → its ref and the first problem any route found.
    const found = new Map<string, Map<string, { ref: AncestorRef; problem?: Problem }>>();
    for (const entry of routes.entries.values()) {
      const r = entry.result;
      if (!r?.xbackends) continue;
      for (const p of r.parents) {
        if (!parentCarriesTraffic(r, p)) continue;
        const ref: AncestorRef = {
          group: p.ref.group ?? 'gateway.networking.k8s.io',
          kind: p.ref.kind ?? 'Gateway',
          namespace: p.ref.namespace ?? r.object.metadata.namespace ?? '',
          name: p.ref.name,
        };
        const id = JSON.stringify(ref);
        for (const x of r.xbackends) {
          const m = found.get(x.key) ?? new Map<string, { ref: AncestorRef; problem?: Problem }>();
          found.set(x.key, m);
          const at = m.get(id);
          if (!at) m.set(id, x.problem ? { ref, problem: x.problem } : { ref });
          else if (x.problem) at.problem ??= x.problem;
        }
      }
    }
    const written = new Set<string>();
    for (const [key, ancestors] of [...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const [ns, name] = key.split('/') as [string, string];
      const xb = getObject(run.inputs.snapshot, XBACKEND_KIND, ns, name);
      if (!xb) continue;
      const gen = xb.metadata.generation;
      const list = [...ancestors]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, MAX_XBACKEND_ANCESTORS)
        .map(([, a]) => {
          const accepted: Condition = a.problem
            ? condition('Accepted', false, a.problem.reason, a.problem.message, gen)
            : condition('Accepted', true, 'Accepted', 'XBackend is accepted', gen);
          return { ancestorRef: a.ref, controllerName: run.controllerName, conditions: sortConditions([accepted]) };
        });
      const statusKey = `${XBACKEND_KIND}/${key}`;
      written.add(statusKey);
      run.out.statuses.set(statusKey, { ancestors: list });
    }
    for (const k of this.written) if (!written.has(k)) run.out.statuses.delete(k);
    this.written = written;
  }
}
