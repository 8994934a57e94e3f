// The endpoints of an XBackend of type EndpointSelector (GEP-4894): the Pods its matchLabels select in
// its namespace that serve (Ready, running, not being deleted) and have an address, at the XBackend's
// port. Pods are indexed by namespace and label pair. A selector cluster depends on one pair of its
// selector (the first key in order): every Pod it selects carries that pair, so a Pod change, which
// touches the keys of the pairs it had and has, re-derives only the clusters that could select it.
import { podServes, type EndpointIR, type Pod } from '@turnpike/api';
import type { Diagnostic } from '../incremental/run.js';
import type { InputChanges, Inputs } from '../incremental/inputs.js';
import { flat } from '../compact-values.js';
import { sortInPlace } from '../compare.js';
import { unroutableAddress } from './endpoint-addresses.js';

const pair = (namespace: string, key: string, value: string) => `${namespace}\0${key}=${value}`;

export const podLabelDependency = (namespace: string, key: string, value: string): string =>
  flat(`@pods:${namespace}/${key}=${value}`);

export class PodIndex {
  /** `namespace\0key=value` → the Pods of that namespace carrying that label, by name. */
  private readonly byPair = new Map<string, Map<string, Pod>>();

  /** Folds the snapshot's Pod changes in; adds to `keys` the label pairs whose Pods changed. */
  apply(changes: InputChanges, keys: Set<string>): void {
    for (const c of changes.objects.get('Pod') ?? []) {
      for (const [k, v] of labelsOf(c.before)) {
        const at = pair(c.namespace, k, v);
        const m = this.byPair.get(at);
        m?.delete(c.name);
        if (m?.size === 0) this.byPair.delete(at);
        keys.add(podLabelDependency(c.namespace, k, v));
      }
      if (!c.after) continue;
      for (const [k, v] of labelsOf(c.after)) {
        const at = pair(c.namespace, k, v);
        let m = this.byPair.get(at);
        if (!m) this.byPair.set(at, (m = new Map()));
        m.set(c.name, c.after as Pod);
        keys.add(podLabelDependency(c.namespace, k, v));
      }
    }
  }

  /**
   * The endpoints of the Pods `matchLabels` selects in `namespace`, at `port`, sorted; records the
   * dependency on the selector's first pair.
   */
  endpoints(
    inputs: Inputs,
    namespace: string,
    matchLabels: Record<string, string>,
    port: number,
    loopback: boolean,
  ): EndpointIR[] {
    const wanted = Object.entries(matchLabels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (wanted.length === 0) return [];
    const [k, v] = wanted[0]!;
    inputs.depend(podLabelDependency(namespace, k, v));
    const out: EndpointIR[] = [];
    for (const pod of this.byPair.get(pair(namespace, k, v))?.values() ?? []) {
      const labels = pod.metadata.labels ?? {};
      if (!wanted.every(([key, value]) => labels[key] === value) || !podServes(pod)) continue;
      for (const { ip } of pod.status?.podIPs ?? [])
        if (kept(ip, loopback)) out.push({ address: ip, port, ready: true });
    }
    return sortInPlace(out, (a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  }
}

function labelsOf(o: unknown): [string, string][] {
  const labels = (o as Pod | undefined)?.metadata?.labels;
  return labels && typeof labels === 'object' ? Object.entries(labels).filter(([, v]) => typeof v === 'string') : [];
}

function kept(address: string, loopback: boolean): boolean {
  const why = unroutableAddress(address);
  return why === undefined || (loopback && why === 'loopback');
}

/**
 * The warning for a Pod with addresses no backend has (loopback, link-local…), as for an EndpointSlice:
 * an EndpointSelector never sends there. undefined when it has none.
 */
export function podAddressesLeftOut(pod: Pod, key: string, loopback: boolean): Diagnostic | undefined {
  const ips = Array.isArray(pod.status?.podIPs) ? pod.status.podIPs : [];
  const dropped = ips.filter((p) => !kept(p?.ip, loopback)).map((p) => `${p?.ip} (${unroutableAddress(p?.ip)})`);
  if (!dropped.length) return undefined;
  return {
    level: 'warning',
    object: `Pod/${key}`,
    message:
      `pod address(es) left out of any XBackend EndpointSelector, the proxy never connects there: ` +
      `${dropped.join(', ')}; they would reach the proxy itself or its node, not a backend`,
  };
}
