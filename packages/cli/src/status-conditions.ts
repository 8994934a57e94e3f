// Where a status carries its conditions, in one form for every command that reads them back: the
// object's own, each listener's, each parent's (routes) and each ancestor's (policies), labelled
// '', `listener NAME`, `parent KIND NS/NAME[/SECTION][:PORT]`, `ancestor ...`. diff, bisect and the
// console use it.
import type { Condition } from '@turnpike/api';
import { isTrouble } from './status-lines.js';

type AnyStatus = Record<string, unknown>;

/** Flattens a status into `where → type → condition` (where: '', `listener NAME`, `parent REF`, `ancestor REF`). */
export function flatten(status: AnyStatus | undefined): Map<string, Map<string, Condition>> {
  const out = new Map<string, Map<string, Condition>>();
  const add = (where: string, list: unknown) => {
    const m = out.get(where) ?? new Map<string, Condition>();
    for (const c of (list as Condition[] | undefined) ?? []) m.set(c.type, c);
    out.set(where, m);
  };
  if (!status) return out;
  if (status.conditions) add('', status.conditions);
  for (const l of (status.listeners as AnyStatus[] | undefined) ?? []) add(`listener ${l.name}`, l.conditions);
  for (const p of (status.parents as AnyStatus[] | undefined) ?? [])
    add(`parent ${refText(p.parentRef)}`, p.conditions);
  for (const a of (status.ancestors as AnyStatus[] | undefined) ?? [])
    add(`ancestor ${refText(a.ancestorRef)}`, a.conditions);
  return out;
}

function refText(r: unknown): string {
  const ref = r as Record<string, unknown>;
  const namespace = ref.namespace ? `${ref.namespace}/` : '';
  const section = ref.sectionName ? `/${ref.sectionName}` : '';
  const port = ref.port ? `:${ref.port}` : '';
  return `${ref.kind ?? 'Gateway'} ${namespace}${ref.name}${section}${port}`;
}

/** One condition, where it is, and whether it is trouble (the same notion as `run` and `analyze`). */
export interface ConditionRow {
  where: string;
  type: string;
  status: string;
  reason: string;
  message: string;
  trouble: boolean;
}

export function conditionRows(status: unknown): ConditionRow[] {
  const rows: ConditionRow[] = [];
  for (const [where, byType] of flatten(status as AnyStatus | undefined)) {
    for (const c of byType.values()) {
      rows.push({ where, type: c.type, status: c.status, reason: c.reason, message: c.message, trouble: isTrouble(c) });
    }
  }
  return rows;
}
