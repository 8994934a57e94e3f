// RouteRulesOverlap: two routes with the very same match on one host of one listener, or two
// TLSRoutes with one server name on one listener. Precedence gives the traffic to one of them
// (precedence.ts, or the older TLSRoute); the other's match is dead configuration. Both routes say
// so, naming each other, since either may be the one its author meant to win.
import type { HTTPMatchIR, L4RouteIR } from '@turnpike/api';
import type { RankedRoute } from './precedence.js';
import { flat } from './compact-values.js';

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
  k = flat(JSON.stringify([m.path, m.method ?? '', byName(m.headers), byName(m.queryParams)]));
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

/**
 * TLS listeners route by SNI, one filter chain per server name, and Envoy refuses a listener with
 * two chains of one match (every SNI of the port would go down): a server name two routes claim
 * stays with the older one. Routes come oldest first; each keeps the names no older route took,
 * and a route left with none is not served. Both routes of a lost name say so.
 */
export function claimServerNames(
  byAge: readonly { route: L4RouteIR; key: string }[],
  listener: string,
  out: RouteOverlaps | undefined,
): L4RouteIR[] {
  const owner = new Map<string, string>();
  const served: L4RouteIR[] = [];
  for (const { route, key } of byAge) {
    const wanted = route.hostnames?.length ? route.hostnames : ['*'];
    const kept: string[] = [];
    for (const name of wanted) {
      const older = owner.get(name);
      if (older === undefined || older === key) {
        owner.set(name, key);
        kept.push(name);
        continue;
      }
      if (!out) continue;
      const sni = name === '*' ? 'connections no other route names' : `server name ${name}`;
      push(out, key, `${sni} on listener ${listener}: ${older} is older and takes them; this route gets none`);
      push(out, older, `${sni} on listener ${listener}: ${key} also names it and gets none`);
    }
    if (kept.length) served.push(kept.length === wanted.length ? route : { ...route, hostnames: kept });
  }
  return served;
}

function push(out: RouteOverlaps, key: string, line: string): void {
  const l = out.get(key);
  if (l) l.push(line);
  else out.set(key, [line]);
}
