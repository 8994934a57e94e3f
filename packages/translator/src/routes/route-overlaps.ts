// RouteRulesOverlap: two routes with the very same match on one host of one listener, or two
// TLSRoutes with one server name on one listener. Precedence gives the traffic to one of them
// (precedence.ts, or the older TLSRoute); the other's match is dead configuration. Both routes say
// so, naming each other, since either may be the one its author meant to win.
import type { HTTPMatchIR, L4RouteIR } from '@turnpike/api';
import type { RankedRoute } from './precedence.js';
import { originalHostnameRank } from './hostnames.js';
import { flat } from '../compact-values.js';

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
 * goes to the route whose own hostname names it most specifically (a TLSRoute for
 * `abc.example.com` over one for `*.example.com`, GatewayRouteHostnameIntersectionPrecedence), and
 * between equally specific ones to the older. Routes come oldest first; each keeps the names it
 * won, and a route left with none is not served. Both routes of a lost name say so.
 */
export function claimServerNames(
  byAge: readonly { route: L4RouteIR; key: string; originals?: readonly string[] }[],
  listener: string,
  out: RouteOverlaps | undefined,
): L4RouteIR[] {
  const wanted = (route: L4RouteIR) => (route.hostnames?.length ? route.hostnames : ['*']);
  const owner = new Map<string, { key: string; rank: number }>();
  for (const { route, key, originals } of byAge)
    for (const name of wanted(route)) {
      const rank = originalHostnameRank(originals, name);
      const held = owner.get(name);
      if (!held || rank > held.rank) owner.set(name, { key, rank });
    }
  const served: L4RouteIR[] = [];
  for (const { route, key, originals } of byAge) {
    const names = wanted(route);
    const kept: string[] = [];
    for (const name of names) {
      const winner = owner.get(name)!;
      if (winner.key === key) {
        kept.push(name);
        continue;
      }
      if (!out) continue;
      const sni = name === '*' ? 'connections no other route names' : `server name ${name}`;
      const why = winner.rank > originalHostnameRank(originals, name) ? 'names it more specifically' : 'is older';
      push(out, key, `${sni} on listener ${listener}: ${winner.key} ${why} and takes them; this route gets none`);
      push(out, winner.key, `${sni} on listener ${listener}: ${key} also names it and gets none`);
    }
    if (kept.length) served.push(kept.length === names.length ? route : { ...route, hostnames: kept });
  }
  return served;
}

function push(out: RouteOverlaps, key: string, line: string): void {
  const l = out.get(key);
  if (l) l.push(line);
  else out.set(key, [line]);
}
