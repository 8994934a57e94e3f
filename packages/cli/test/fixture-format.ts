// The compact form in which the project's translator fixtures state what they expect:
// conditions as `Type=Status/Reason`, per object, per listener, per parent or ancestor; the
// listeners each Gateway serves; and what each rule answers (backends with weights, a status, a
// redirect).
import type { TranslateResult } from '@turnpike/translator';

type Cond = { type: string; status: string; reason: string; message?: string };
type Ref = { namespace?: string; name: string; sectionName?: string };

export interface Observed {
  statuses: Record<string, Record<string, unknown>>;
  messages: Record<string, string>;
  xds: Record<string, { listeners: string[]; rules: Record<string, string> }>;
}

const conds = (l: Cond[] | undefined) => (l ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`).sort();
const refKey = (r: Ref, ns: string) => `${r.namespace ?? ns}/${r.name}${r.sectionName ? '/' + r.sectionName : ''}`;

export function observe(r: TranslateResult): Observed {
  const out: Observed = { statuses: {}, messages: {}, xds: {} };
  for (const key of r.statuses.sortedKeys()) {
    const s = r.statuses.get(key) as Record<string, any>;
    const ns = key.split('/')[1] ?? '';
    const entry: Record<string, unknown> = {};
    const text: string[] = [];
    const note = (l: Cond[] | undefined) => {
      for (const c of l ?? []) if (c.message) text.push(c.message);
    };
    if (s.conditions) {
      entry.conditions = conds(s.conditions);
      note(s.conditions);
    }
    if (s.listeners) {
      entry.listeners = Object.fromEntries(
        s.listeners.map((l: { name: string; conditions: Cond[] }) => [l.name, conds(l.conditions)]),
      );
      for (const l of s.listeners) note(l.conditions);
    }
    if (s.parents) {
      entry.parents = Object.fromEntries(
        s.parents.map((p: { parentRef: Ref; conditions: Cond[] }) => [refKey(p.parentRef, ns), conds(p.conditions)]),
      );
      for (const p of s.parents) note(p.conditions);
    }
    if (s.ancestors) {
      entry.ancestors = Object.fromEntries(
        s.ancestors.map((p: { ancestorRef: Ref; conditions: Cond[] }) => [
          refKey(p.ancestorRef, ns),
          conds(p.conditions),
        ]),
      );
      for (const p of s.ancestors) note(p.conditions);
    }
    out.statuses[key] = entry;
    out.messages[key] = text.join('\n');
  }
  for (const key of r.xdsIR.gateways.sortedKeys()) {
    const gw = r.xdsIR.gateways.get(key)!;
    const listeners: string[] = [];
    const rules: Record<string, string> = {};
    for (const p of gw.ports)
      for (const l of p.listeners) {
        listeners.push(l.name);
        for (const vh of l.virtualHosts ?? [])
          for (const route of vh.routes) {
            const id = `${route.source.namespace}/${route.source.name}/rule/${route.source.rule}`;
            const answer = route.directResponse
              ? String(route.directResponse.status)
              : route.redirect
                ? `redirect ${route.redirect.statusCode ?? 302}`
                : (route.backends ?? [])
                    .map((b) => `${b.cluster}*${b.weight}`)
                    .concat(route.invalidWeight ? [`500*${route.invalidWeight}`] : [])
                    .join(' + ');
            rules[`${vh.domains.join(',')} ${id}`] = answer;
          }
        for (const route of l.routes ?? [])
          rules[`${l.name} ${route.source.namespace}/${route.source.name}`] = route.backends
            .map((b) => `${b.cluster}*${b.weight}`)
            .join(' + ');
      }
    out.xds[key] = { listeners: listeners.sort(), rules };
  }
  return out;
}
