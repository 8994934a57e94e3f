// Human-readable one-line summaries of an object's status, for `run` and `diff`.
import type { Condition } from '@turnpike/api';
import { CONFIG_REJECTED, CONFIG_WITHHELD } from '@turnpike/translator';

type AnyStatus = Record<string, unknown>;

/** Condition types that report trouble when True; every other type reports it when not True. */
const TRUE_MEANS_TROUBLE = new Set([
  'Conflicted',
  'PartiallyInvalid',
  'OverlappingTLSConfig',
  'RouteRulesOverlap',
  CONFIG_REJECTED,
  CONFIG_WITHHELD,
]);

/** Whether a condition says something is wrong (what `run` prints with its message, what `analyze` reports). */
export function isTrouble(c: Condition): boolean {
  return TRUE_MEANS_TROUBLE.has(c.type) ? c.status !== 'False' : c.status !== 'True';
}

export function conditionText(c: Condition, withMessage = false): string {
  const ok = !isTrouble(c);
  const base = ok && c.reason === c.type ? `${c.type}=${c.status}` : `${c.type}=${c.status}(${c.reason})`;
  return withMessage && !ok ? `${base}: ${c.message}` : base;
}

function conds(list: unknown, withMessage: boolean): string {
  return ((list as Condition[] | undefined) ?? []).map((c) => conditionText(c, withMessage)).join(' ');
}

/** One line per object; route parents and listeners are folded in. */
export function statusSummary(status: AnyStatus, withMessage = true): string {
  const parts: string[] = [];
  if (status.conditions) parts.push(conds(status.conditions, withMessage));
  for (const l of (status.listeners as AnyStatus[] | undefined) ?? []) {
    parts.push(`[listener ${l.name} routes=${l.attachedRoutes} ${conds(l.conditions, withMessage)}]`);
  }
  for (const p of (status.parents as AnyStatus[] | undefined) ?? []) {
    const r = p.parentRef as Record<string, unknown>;
    parts.push(
      `[parent ${r.kind ?? 'Gateway'} ` +
        `${r.namespace ? r.namespace + '/' : ''}${r.name}${r.sectionName ? '/' + r.sectionName : ''} ` +
        `${conds(p.conditions, withMessage)}]`,
    );
  }
  for (const a of (status.ancestors as AnyStatus[] | undefined) ?? []) {
    const r = a.ancestorRef as Record<string, unknown>;
    parts.push(`[ancestor ${r.namespace}/${r.name} ${conds(a.conditions, withMessage)}]`);
  }
  return parts.join(' ');
}
