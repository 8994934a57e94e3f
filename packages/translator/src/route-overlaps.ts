// RouteRulesOverlap: two routes with the very same match on one host of one listener. Precedence
// gives the traffic to one of them (precedence.ts); the other's match is dead configuration. Both
// routes say so, naming each other, since either may be the one its author meant to win.
import type { HTTPMatchIR } from '@turnpike/api';
import type { RankedRoute } from './precedence.js';

export const ROUTE_RULES_OVERLAP = 'RouteRulesOverlap';

/** Route key (`Kind/namespace/name`) → what overlaps, one line per overlapping match. */
export type RouteOverlaps = Map<string, string[]>;

/**
 * Canonical key of a match, kept per match object: unchanged routes keep their IR, so a Gateway
 * reassembled after one edit does not re-key its other 10k routes.
 */
const keys = new WeakMap<HTTPMatchIR, string>();
function matchKey(m: HTTPMatchIR): string {
  let k = keys.get(m);
  if (k !== undefined) return k;
  const byName = <T extends { name: string }>(l: T[]) =>
    [...l].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  k = JSON.stringify([m.path, m.method ?? '', byName(m.headers), byName(m.queryParams)]);
  keys.set(m, k);
  return k;
}

const routeKeyOf = (r: RankedRoute) => `${r.route.source.kind}/${r.route.source.namespace}/${r.route.source.name}`;
const where = (r: RankedRoute) => `spec.rules[${r.route.source.rule}].matches[${r.route.source.match ?? 0}]`;

/** Records, for routes ranked in precedence order on one host, every match another route already claimed. */
export function recordOverlaps(
  ranked: readonly RankedRoute[],
  listener: string,
  host: string,
  out: RouteOverlaps,
): void {
  const first = new Map<string, RankedRoute>();
  for (const r of ranked) {
    const k = matchKey(r.route.match);
    const winner = first.get(k);
    if (!winner) {
      first.set(k, r);
      continue;
    }
    const wk = routeKeyOf(winner),
      lk = routeKeyOf(r);
    if (wk === lk) continue;
    const on = `on listener ${listener}, host ${host}`;
    push(out, lk, `${where(r)} ${on}: ${wk} ${where(winner)} has the same match and takes precedence`);
    push(out, wk, `${where(winner)} ${on}: ${lk} ${where(r)} has the same match and gets no traffic from it`);
  }
}

function push(out: RouteOverlaps, key: string, line: string): void {
  const l = out.get(key);
  if (l) l.push(line);
  else out.set(key, [line]);
}
