// HTTPRoute / GRPCRoute match precedence inside one virtual host.
//
// HTTPRoute (httproute_types.go, HTTPRouteRule): Exact path, then the most characters in a
// PathPrefix, then a method match, then the most header matches, then the most query matches.
// A PathPrefix's trailing `/` is ignored when matching ("/foo/" matches as "/foo"), so it is not
// counted either. Regular expressions rank between Exact and PathPrefix (implementation-specific
// in the spec), longer first.
//
// GRPCRoute (grpcroute_types.go, GRPCRouteRule): the most characters in a matching service, then
// in a matching method, then the most header matches.
//
// Before any of these, routes that intersect to the same host rank by their own (original) hostname,
// the most specific first (GatewayRouteHostnameIntersectionPrecedence, hostnames.ts).
//
// Remaining ties go to the oldest route, then namespace/name, then rule and match order.
import type { HTTPMatchIR, HTTPRouteIR } from '@turnpike/api';

const PATH_RANK = { Exact: 3, RegularExpression: 2, PathPrefix: 1 } as const;

export interface RankedRoute {
  route: HTTPRouteIR;
  /** originalHostnameRank of the route for this host: higher ranks first. */
  hostRank: number;
  age: number;
  order: string;
}

function pathCharacters(m: HTTPMatchIR): number {
  return m.path.type === 'PathPrefix' ? m.path.value.replace(/\/+$/, '').length : m.path.value.length;
}

function compareHttpMatches(ma: HTTPMatchIR, mb: HTTPMatchIR): number {
  const ra = PATH_RANK[ma.path.type],
    rb = PATH_RANK[mb.path.type];
  if (ra !== rb) return rb - ra;
  const ca = pathCharacters(ma),
    cb = pathCharacters(mb);
  if (ca !== cb) return cb - ca;
  const meA = ma.method ? 1 : 0,
    meB = mb.method ? 1 : 0;
  if (meA !== meB) return meB - meA;
  if (ma.headers.length !== mb.headers.length) return mb.headers.length - ma.headers.length;
  return mb.queryParams.length - ma.queryParams.length;
}

/** GRPCRoute matches; a match without service or method (every call) has no characters in either. */
function compareGrpcMatches(ma: HTTPMatchIR, mb: HTTPMatchIR): number {
  const sa = ma.grpc?.service?.length ?? 0,
    sb = mb.grpc?.service?.length ?? 0;
  if (sa !== sb) return sb - sa;
  const mea = ma.grpc?.method?.length ?? 0,
    meb = mb.grpc?.method?.length ?? 0;
  if (mea !== meb) return meb - mea;
  return mb.headers.length - ma.headers.length;
}

export function compareRoutePrecedence(a: RankedRoute, b: RankedRoute): number {
  if (a.hostRank !== b.hostRank) return b.hostRank - a.hostRank;
  const bothGrpc = a.route.source.kind === 'GRPCRoute' && b.route.source.kind === 'GRPCRoute';
  const byMatch = bothGrpc
    ? compareGrpcMatches(a.route.match, b.route.match)
    : compareHttpMatches(a.route.match, b.route.match);
  if (byMatch !== 0) return byMatch;
  if (a.age !== b.age) return a.age - b.age;
  if (a.order !== b.order) return a.order < b.order ? -1 : 1;
  const sa = a.route.source,
    sb = b.route.source;
  if (sa.rule !== sb.rule) return sa.rule - sb.rule;
  return (sa.match ?? 0) - (sb.match ?? 0);
}
