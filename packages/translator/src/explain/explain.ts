// `explain`: why an object has its status. For a route: per parentRef, every listener considered
// and why it accepted or refused the route (hostname, namespace, kind, sectionName, port), and
// every backendRef and what became of it. "Why is my route not attached?" answered in one place.
import { ROUTE_KINDS, objectKey, type Condition, type KubeObject, type ParentReference } from '@turnpike/api';
import type { ListenerVerdict } from '../routes/attachment.js';
import type { RouteResult } from '../routes/route-result.js';
import { getObject, type Snapshot } from '../snapshot.js';
import { Translator, type TranslateOptions } from '../translate.js';
import { httpActionLines, l4ActionLine } from './explain-actions.js';
import { clusterText } from './explain-backends.js';
import { listenerProgrammable } from '../gateways/listener-validity.js';
import { listenerFilterText } from '../gateways/listener-filters.js';
import { ignoredPolicies } from './ignored-policies.js';
import { tracingText } from './explain-tracing.js';

export { ignoredPolicies, type IgnoredPolicy } from './ignored-policies.js';

/** Why an object gets no status from us: its GatewayClass is another controller's, absent, or not Accepted. */
function noStatusReason(
  snapshot: Snapshot,
  statusOf: (key: string) => Record<string, unknown> | undefined,
  object: KubeObject,
): string {
  const className = (object.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName;
  if (object.kind !== 'Gateway' || !className)
    return (
      'no status from turnpike: not an object of a turnpike GatewayClass ' +
      '(or not a kind whose status turnpike writes)'
    );
  const gc = getObject<KubeObject>(snapshot, 'GatewayClass', undefined, className);
  if (!gc) return `no status from turnpike: its GatewayClass "${className}" does not exist`;
  const classStatus = statusOf(objectKey('GatewayClass', undefined, className));
  const accepted = (classStatus?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Accepted');
  const controller = (gc.spec as { controllerName?: string } | undefined)?.controllerName;
  if (!classStatus)
    return `no status from turnpike: its GatewayClass "${className}" belongs to controller ${controller}`;
  return (
    `no status from turnpike: its GatewayClass "${className}" is ours but not Accepted ` +
    `(${accepted?.reason ?? 'unknown'}: ${accepted?.message ?? ''}), so none of its Gateways is served`
  );
}

/**
 * A BackendTLSPolicy's targets and what became of each: the Service port it applies to, a section that names
 * no port (not attached), an older policy that holds the target, or a target that is not a Service.
 */
function backendTLSPolicyLines(translator: Translator, snapshot: Snapshot, policy: KubeObject): string[] {
  const index = translator.backendTLSIndex();
  const ns = policy.metadata.namespace ?? '';
  const model = index.models.find(
    (m) => m.policy.metadata.namespace === ns && m.policy.metadata.name === policy.metadata.name,
  );
  const targets = (
    policy.spec as { targetRefs?: { group?: string; kind: string; name: string; sectionName?: string }[] }
  )?.targetRefs;
  const lines: string[] = [];
  (targets ?? []).forEach((t, i) => {
    const section = t.sectionName ? ` sectionName=${t.sectionName}` : '';
    const head = `  targetRefs[${i}] ${t.group ? `${t.group}/` : ''}${t.kind} ${ns}/${t.name}${section}`;
    if ((t.group ?? '') !== '' || t.kind !== 'Service') {
      lines.push(`${head}: not a core Service: turnpike applies BackendTLSPolicy to Services only`);
      return;
    }
    const svc = getObject<KubeObject>(snapshot, 'Service', ns, t.name);
    const detached = model?.detached?.find((d) => d.index === i);
    if (!svc) lines.push(`${head}: no such Service (nothing sends to it)`);
    else if (detached) lines.push(`${head}: NOT attached: ${detached.problem.message}`);
    else {
      const winner = index.byTarget.get(`${ns}/${t.name}/${t.sectionName ?? ''}`);
      const ports = ((svc.spec as { ports?: { name?: string; port: number }[] })?.ports ?? []).filter(
        (p) => !t.sectionName || p.name === t.sectionName,
      );
      const which = ports.map((p) => (p.name ? `${p.name} (${p.port})` : String(p.port))).join(', ');
      if (winner && winner !== model)
        lines.push(
          `${head}: held by the older BackendTLSPolicy ${winner.policy.metadata.namespace}/` +
            `${winner.policy.metadata.name}; this one applies to none of its ports`,
        );
      else lines.push(`${head}: applies to port${ports.length === 1 ? '' : 's'} ${which || '(none)'}`);
    }
  });
  if (model?.notAccepted) lines.push(`  not accepted: ${model.notAccepted.reason}: ${model.notAccepted.message}`);
  if (model?.refsProblem) lines.push(`  references: ${model.refsProblem.reason}: ${model.refsProblem.message}`);
  return lines;
}

export interface Explanation {
  object: string;
  found: boolean;
  lines: string[];
  status?: Record<string, unknown>;
}

function refText(ref: ParentReference, routeNs: string): string {
  const section = ref.sectionName !== undefined ? ` sectionName=${ref.sectionName}` : '';
  const port = ref.port !== undefined ? ` port=${ref.port}` : '';
  return `${ref.kind ?? 'Gateway'} ${ref.namespace ?? routeNs}/${ref.name}${section}${port}`;
}

/** What the listener runs on every request before any route is chosen (GEP-5224 listener filters). */
function beforeRouting(l: ListenerVerdict['listener']): string {
  const filters = (l.preRouting ?? []).map(listenerFilterText);
  return filters.length ? `; before routing, every request passes ${filters.join(', then ')}` : '';
}

function verdictText(v: ListenerVerdict, ref: ParentReference, kind: string, route: KubeObject): string {
  const l = v.listener.spec;
  const head = `listener ${l.name} (${l.protocol} :${l.port}${l.hostname ? `, hostname ${l.hostname}` : ''})`;
  if (v.accepted) {
    if (listenerProgrammable(v.listener))
      return `${head}: accepts the route; serves ${v.hostnames.join(', ')}${beforeRouting(v.listener)}`;
    const why = (v.listener.notAccepted ?? v.listener.conflicted ?? v.listener.refsProblem)?.message ?? 'invalid';
    return `${head}: accepts the route, but is not programmed (${why}): the proxy serves nothing on it`;
  }
  const ns = route.metadata.namespace;
  switch (v.reason) {
    case 'sectionName':
      return `${head}: skipped, sectionName "${ref.sectionName}" names another listener`;
    case 'port':
      return `${head}: skipped, parentRef port ${ref.port} is not ${l.port}`;
    case 'kind':
      const allowed = v.listener.supportedKinds.map((k) => k.kind).join(', ') || 'no route kind';
      return `${head}: refuses ${kind}; it allows ${allowed}`;
    case 'namespace': {
      const from = l.allowedRoutes?.namespaces?.from ?? 'Same';
      const which =
        from === 'Same'
          ? ` (only ${v.listener.owner.metadata.namespace})`
          : from === 'Selector'
            ? ` (selector ${JSON.stringify(l.allowedRoutes?.namespaces?.selector ?? {})})`
            : '';
      return `${head}: refuses routes from namespace ${ns}; allowedRoutes.namespaces.from is ${from}${which}`;
    }
    case 'hostname': {
      const hosts = (route.spec as { hostnames?: string[] })?.hostnames ?? [];
      return `${head}: no route hostname (${hosts.join(', ')}) intersects the listener hostname ${l.hostname}`;
    }
    case 'unusable':
      const why = (v.listener.notAccepted ?? v.listener.refsProblem)?.message ?? 'invalid listener';
      return `${head}: not usable: ${why}`;
    default:
      return `${head}: refused`;
  }
}

/**
 * Why the proxy serves nothing of a route, if it does not: no parent attached it, or it is attached only to
 * listeners that are not programmed. What the proxy does is described only for a route it serves.
 */
function whyNotServed(r: RouteResult): string | undefined {
  const attached = r.parents.filter((p) => !p.problem);
  if (!attached.length) return 'no parent attached it (see each parentRef above)';
  if (!attached.some((p) => p.attached.some((a) => listenerProgrammable(a.listener))))
    return 'every listener that accepts it is not programmed';
  return undefined;
}

function conditionLines(conditions: unknown, indent: string): string[] {
  return ((conditions as Condition[] | undefined) ?? []).map(
    (c) => `${indent}${c.type}=${c.status} (${c.reason}): ${c.message}`,
  );
}

/**
 * `foreignPolicies`: objects of kinds we do not read that target others as policies do (engine's
 * `loadManifests`); one that targets the object explained, which we serve, is a warning in its explanation.
 */
export function explain(
  snapshot: Snapshot,
  kind: string,
  namespace: string | undefined,
  name: string,
  options: TranslateOptions = {},
  foreignPolicies: readonly KubeObject[] = [],
): Explanation {
  const key = objectKey(kind, namespace, name);
  const object = getObject<KubeObject>(snapshot, kind, namespace, name);
  if (!object)
    return {
      object: key,
      found: false,
      lines: [`${kind} ${namespace ? namespace + '/' : ''}${name} not found in the input`],
    };
  const translator = new Translator(options);
  const result = translator.translate(snapshot);
  const status = result.statuses.get(key);
  const lines: string[] = [`${kind} ${namespace ? namespace + '/' : ''}${name}`];
  if ((ROUTE_KINDS as readonly string[]).includes(kind)) {
    const r = translator.routeResult(object);
    const refs = (object.spec as { parentRefs?: ParentReference[] })?.parentRefs ?? [];
    const byIndex = new Map((r?.parents ?? []).map((p) => [p.index, p]));
    refs.forEach((ref, i) => {
      const p = byIndex.get(i);
      lines.push(`  parentRefs[${i}] ${refText(ref, namespace ?? '')}`);
      if (!p) {
        lines.push(
          '    not a parent of ours: no such Gateway or ListenerSet with a GatewayClass of ' +
            'turnpike.dev/gateway-controller (no status entry is written)',
        );
        return;
      }
      const accepted = !p.problem && !r?.invalid;
      const refusal = p.problem ?? r?.invalid;
      lines.push(`    ${accepted ? 'attached' : `NOT attached: ${refusal?.reason}: ${refusal?.message}`}`);
      for (const v of p.verdicts) lines.push(`    ${verdictText(v, ref, kind, object)}`);
    });
    if (refs.length === 0) lines.push('  no parentRefs: the route is attached to nothing');
    if (r?.backendVerdicts?.length) {
      lines.push('  backendRefs');
      for (const b of r.backendVerdicts) {
        const head = `    ${b.field} ${b.ref} weight ${b.weight}`;
        if (b.problem) {
          lines.push(`${head}: ${b.problem.reason}: ${b.problem.message} (its share answers 500)`);
        } else {
          const ready = (translator.endpointsOf(b.cluster!) ?? []).filter((e) => e.ready).length;
          const cluster = r.clusters.find((c) => c.name === b.cluster);
          lines.push(`${head}: ${clusterText(b.cluster!, cluster, ready)}`);
        }
      }
    }
    // What each invalid rule gets is said per match below: 500 where its match is configured, nothing
    // where the match itself cannot be compiled and is left out.
    if (r?.partiallyInvalid) lines.push(`  some rules are invalid: ${r.partiallyInvalid.message}`);
    if (r?.invalid) lines.push(`  every rule is invalid: ${r.invalid.message}`);
    const notServed = r && whyNotServed(r);
    if (notServed) lines.push(`  the proxy serves none of this route: ${notServed}`);
    else if (r?.http) {
      const leftOut = (r.leftOut ?? []).map(
        (m) =>
          `rule/${m.rule}/match/${m.match}: left out, it cannot be compiled (${m.problem.message}): the requests ` +
          'it would match go to whatever else on the host matches them, or get 404',
      );
      const order = (l: string) => (/^rule\/(\d+)\/match\/(\d+)/.exec(l) ?? []).slice(1).map(Number);
      const byRule = [...httpActionLines(r.http), ...leftOut].sort((a, b) => {
        const [ra = 0, ma = 0] = order(a);
        const [rb = 0, mb = 0] = order(b);
        return ra - rb || ma - mb;
      });
      lines.push('  what the proxy does', ...byRule.map((l) => `    ${l}`));
    } else if (r?.l4) lines.push('  what the proxy does', `    ${l4ActionLine(r.l4)}`);
    // Tracing is per Gateway (XTelemetryPolicy targets Gateways) and only HTTP connection managers trace.
    if (r?.http && !notServed) {
      const gateways = new Set(
        r.parents.flatMap((p) =>
          p.problem
            ? []
            : p.attached
                .filter((a) => listenerProgrammable(a.listener))
                .map((a) => `${a.listener.gateway.metadata.namespace}/${a.listener.gateway.metadata.name}`),
        ),
      );
      for (const gw of [...gateways].sort()) {
        const tracing = result.xdsIR.gateways.get(gw)?.tracing;
        if (tracing) lines.push(`  on Gateway ${gw}: ${tracingText(tracing)}`);
      }
    }
  } else if (kind === 'BackendTLSPolicy' || status) {
    if (kind === 'BackendTLSPolicy') lines.push(...backendTLSPolicyLines(translator, snapshot, object));
    lines.push(...conditionLines(status?.conditions, '  '));
    const tracing = kind === 'Gateway' ? result.xdsIR.gateways.get(`${namespace}/${name}`)?.tracing : undefined;
    if (tracing) lines.push(`  ${tracingText(tracing)}`);
    for (const l of (status?.listeners as
      { name: string; attachedRoutes: number; conditions: Condition[] }[] | undefined) ?? []) {
      lines.push(`  listener ${l.name}: ${l.attachedRoutes} attached route(s)`);
      lines.push(...conditionLines(l.conditions, '    '));
    }
    for (const a of (status?.ancestors as { ancestorRef: ParentReference; conditions: Condition[] }[] | undefined) ??
      []) {
      lines.push(`  ancestor ${refText(a.ancestorRef, '')}`);
      lines.push(...conditionLines(a.conditions, '    '));
    }
    if (kind === 'BackendTLSPolicy' && !status)
      lines.push(
        '  no status: its ancestors are the Gateways of the routes that send to a Service it targets, and no ' +
          'route of a turnpike Gateway does',
      );
  } else {
    lines.push(`  ${noStatusReason(snapshot, result.statuses.get.bind(result.statuses), object)}`);
  }
  for (const p of ignoredPolicies(foreignPolicies, translator, result))
    if (p.target === key) lines.push(`  warning: ${p.object} ${p.where}: ${p.message}`);
  return status ? { object: key, found: true, lines, status } : { object: key, found: true, lines };
}
