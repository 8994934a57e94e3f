// What `analyze` reports beyond the statuses we would write. Warnings: objects that are not ours to
// judge, because they name something absent from the manifests (a GatewayClass, a parent Gateway) or
// something another controller serves; a CI run should still hear of them. Problems: every backendRef
// that does not resolve (ResolvedRefs names only the first), each with the share of its rule that
// answers 500.
import {
  CONTROLLER_NAME,
  GATEWAY_GROUP,
  ROUTE_KINDS,
  objectKey,
  type KubeObject,
  type ParentReference,
} from '@turnpike/api';
import type { Translator } from '@turnpike/translator';

export interface ScopeWarning {
  object: string;
  where: string;
  message: string;
}

/** Where a Gateway's class leads: ours, another controller's, or nowhere. */
function classOwner(
  className: string | undefined,
  classes: ReadonlyMap<string, KubeObject>,
): { ours: boolean; controller?: string } | undefined {
  const gc = className === undefined ? undefined : classes.get(className);
  if (!gc) return undefined;
  const controller = (gc.spec as { controllerName?: string } | undefined)?.controllerName;
  return { ours: controller === CONTROLLER_NAME, ...(controller ? { controller } : {}) };
}

export function scopeWarnings(objects: readonly KubeObject[]): ScopeWarning[] {
  const classes = new Map<string, KubeObject>();
  const gateways = new Map<string, KubeObject>();
  for (const o of objects) {
    if (o.kind === 'GatewayClass') classes.set(o.metadata.name, o);
    if (o.kind === 'Gateway') gateways.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
  }
  const out: ScopeWarning[] = [];
  for (const gw of gateways.values()) {
    const className = (gw.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName;
    const owner = classOwner(className, classes);
    const object = objectKey('Gateway', gw.metadata.namespace, gw.metadata.name);
    if (!owner)
      out.push({
        object,
        where: 'spec.gatewayClassName',
        message: `GatewayClass "${className}" is not in these manifests: no controller would serve this Gateway`,
      });
    else if (!owner.ours)
      out.push({
        object,
        where: 'spec.gatewayClassName',
        message: `GatewayClass "${className}" belongs to controller ${owner.controller ?? '(none)'}: not judged here`,
      });
  }
  for (const route of objects) {
    if (!(ROUTE_KINDS as readonly string[]).includes(route.kind)) continue;
    const refs = (route.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs ?? [];
    refs.forEach((ref, i) => {
      if ((ref.kind ?? 'Gateway') !== 'Gateway' || (ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP) return;
      const key = `${ref.namespace ?? route.metadata.namespace}/${ref.name}`;
      const object = objectKey(route.kind, route.metadata.namespace, route.metadata.name);
      const where = `spec.parentRefs[${i}]`;
      const gw = gateways.get(key);
      if (!gw) {
        out.push({ object, where, message: `Gateway ${key} is not in these manifests: the route attaches to nothing` });
        return;
      }
      const className = (gw.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName;
      const owner = classOwner(className, classes);
      if (owner && !owner.ours)
        out.push({
          object,
          where,
          message: `Gateway ${key} is of GatewayClass "${className}" (controller ${owner.controller ?? '(none)'}): not judged here`,
        });
    });
  }
  return out;
}

export interface BackendProblem {
  object: string;
  where: string;
  reason: string;
  message: string;
}

/** Every backendRef of every route of ours that does not resolve; its share of the rule answers 500. */
export function backendProblems(objects: readonly KubeObject[], translator: Translator): BackendProblem[] {
  const out: BackendProblem[] = [];
  for (const route of objects) {
    if (!(ROUTE_KINDS as readonly string[]).includes(route.kind)) continue;
    for (const v of translator.routeResult(route)?.backendVerdicts ?? [])
      if (v.problem) {
        const why = v.problem.message.startsWith(`${v.field}: `)
          ? v.problem.message.slice(v.field.length + 2)
          : v.problem.message;
        out.push({
          object: objectKey(route.kind, route.metadata.namespace, route.metadata.name),
          where: v.field,
          reason: v.problem.reason,
          message: `${why} (its share of the rule, weight ${v.weight}, answers 500)`,
        });
      }
  }
  return out;
}
