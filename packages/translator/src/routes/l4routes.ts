// TLSRoute, TCPRoute and UDPRoute: one rule of weighted backends. Invalid backends keep their
// weight (connections to that share are rejected).
import type { KubeObject, L4RouteRule, ParentReference } from '@turnpike/api';
import type { TranslationContext } from '../context.js';
import type { ClusterIR, L4RouteIR, WeightedCluster } from '@turnpike/api';
import { attachRoute, type ParentIndex } from './attachment.js';
import { resolveBackend } from './backends.js';
import { noteBackend, notePolicy, verdictOf, type RouteResult } from './route-result.js';

export function translateL4Route(
  ctx: TranslationContext,
  parents: ParentIndex,
  route: KubeObject,
  kind: 'TLSRoute' | 'TCPRoute' | 'UDPRoute',
): RouteResult {
  const spec = (route.spec ?? {}) as { parentRefs?: ParentReference[]; hostnames?: string[]; rules?: L4RouteRule[] };
  const result: RouteResult = { object: route, kind, parents: [], clusters: [] };
  const hostnames = kind === 'TLSRoute' ? spec.hostnames : undefined;
  result.parents = attachRoute(ctx.inputs, parents, route, kind, spec.parentRefs ?? [], hostnames);
  if (result.parents.length === 0) return result;
  const protocol: ClusterIR['protocol'] = kind === 'UDPRoute' ? 'udp' : 'tcp';
  const backends: WeightedCluster[] = [];
  const clusters: ClusterIR[] = [];
  let invalidWeight = 0;
  const rules = spec.rules ?? [];
  // An L4 rule has no matches: with several rules nothing says which one a connection takes, so
  // the route is refused (and serves nothing) rather than having its rules merged.
  if (rules.length !== 1) {
    result.invalid = {
      reason: 'UnsupportedValue',
      message:
        rules.length === 0
          ? 'spec.rules must hold one rule'
          : `spec.rules: a ${kind} is served with one rule (its rules have no matches to choose between); it ` +
            `has ${rules.length}`,
    };
  }
  (result.invalid ? [] : rules).forEach((rule, ri) => {
    (rule.backendRefs ?? []).forEach((ref, bi) => {
      const r = resolveBackend(ctx, route, kind, ref, `spec.rules[${ri}].backendRefs[${bi}]`, protocol);
      notePolicy(result, r);
      noteBackend(result, verdictOf(`spec.rules[${ri}].backendRefs[${bi}]`, ref, route, r));
      if (r.problem) {
        result.unresolved ??= r.problem;
        invalidWeight += ref.weight ?? 1;
        return;
      }
      clusters.push(r.backend!.cluster);
      if (r.backend!.weight > 0) backends.push({ cluster: r.backend!.cluster.name, weight: r.backend!.weight });
    });
  });
  const l4: L4RouteIR = {
    name: `${kind.toLowerCase()}/${route.metadata.namespace}/${route.metadata.name}/rule/0`,
    source: { kind, namespace: route.metadata.namespace ?? '', name: route.metadata.name, rule: 0 },
    backends,
  };
  if (hostnames?.length) l4.hostnames = [...hostnames].sort();
  if (invalidWeight) l4.invalidWeight = invalidWeight;
  if (kind === 'UDPRoute' && backends.length > 1) {
    const spread = udpWeightedCluster(l4.name, backends, clusters);
    clusters.push(spread);
    l4.backends = [{ cluster: spread.name, weight: 1 }];
  }
  result.l4 = l4;
  result.clusters = clusters;
  return result;
}

/**
 * UDPRoute weights: Envoy's udp_proxy names one cluster (UdpProxyConfig.cluster, or a matcher that
 * picks one), so a route with several backends gets one cluster whose endpoints are grouped in a
 * locality per backend, weighted as the backendRefs are (locality weighted load balancing).
 */
function udpWeightedCluster(routeName: string, backends: WeightedCluster[], clusters: ClusterIR[]): ClusterIR {
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const members = backends.map((b) => ({
    cluster: b.cluster,
    service: byName.get(b.cluster)!.service,
    weight: b.weight,
  }));
  return { name: `${routeName}/weighted`, service: members[0]!.service, protocol: 'udp', members };
}
