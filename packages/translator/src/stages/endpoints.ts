// The endpoint stage. Endpoints are not route inputs: a route names clusters (Service, port) and
// this stage keeps, per cluster, the endpoints of the Service's EndpointSlices. An EndpointSlice
// change recomputes the clusters of its Service and nothing else, unless a cluster gains its first
// ready endpoint or loses its last one: that fact (`@ready:<cluster>`) is what routes depend on.
// Addresses no backend has (loopback, link-local…: endpoint-addresses.ts) are left out, with a warning.
// An XBackend of type EndpointSelector has Pods for endpoints (pod-endpoints.ts): a Pod change
// recomputes only the clusters whose selector could select it.
import type { ClusterIR, EndpointIR, EndpointSlice, Pod, Service, XBackend } from '@turnpike/api';
import { XBACKEND_KIND } from '../routes/xbackends.js';
import { PodIndex, podAddressesLeftOut } from './pod-endpoints.js';
import type { Diagnostic } from '../incremental/run.js';
import { unroutableAddress } from './endpoint-addresses.js';
import { sortInPlace } from '../compare.js';
import { DependencyIndex } from '../incremental/dependency-index.js';
import type { InputChanges, Inputs } from '../incremental/inputs.js';
import { deepEqual } from '../incremental/deep-equal.js';
import { fitted, flat } from '../compact-values.js';

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export const slicesDependency = (namespace: string, service: string): string => flat(`@slices:${namespace}/${service}`);
export const readyDependency = (cluster: string): string => flat(`@ready:${cluster}`);

interface ClusterEndpoints {
  cluster: ClusterIR;
  endpoints: EndpointIR[];
  ready: boolean;
}

export class EndpointStage {
  /** `namespace/service` → its EndpointSlices by name. */
  private readonly slicesByService = new Map<string, Map<string, EndpointSlice>>();
  private readonly serviceOfSlice = new Map<string, string>();
  private readonly clusters = new Map<string, ClusterEndpoints>();
  private readonly dependencies = new DependencyIndex();
  private readonly pods = new PodIndex();
  /** Per slice (`namespace/name`) or Pod (`Pod/namespace/name`), the warning about the addresses left out of it. */
  private readonly warnings = new Map<string, Diagnostic>();
  /** Whether the last update changed the warnings. */
  diagnosticsChanged = false;

  /** `loopback`: loopback addresses are kept (TranslateOptions.loopbackEndpoints). */
  constructor(private readonly loopback = false) {}

  /**
   * Folds the snapshot's changes in; returns the clusters whose endpoints changed and adds to
   * `facts` the readiness facts that flipped.
   */
  update(inputs: Inputs, changes: InputChanges, facts: Set<string>): Set<string> {
    // The slices' own keys, beside the snapshot's (not a copy of those: 50 000 on a first translation).
    const keys = new Set<string>();
    this.diagnosticsChanged = false;
    for (const c of changes.objects.get('EndpointSlice') ?? []) {
      const sliceKey = flat(`${c.namespace}/${c.name}`);
      const warning = c.after ? leftOut(c.after as EndpointSlice, sliceKey, this.loopback) : undefined;
      if (warning?.message !== this.warnings.get(sliceKey)?.message) {
        this.diagnosticsChanged = true;
        if (warning) this.warnings.set(sliceKey, warning);
        else this.warnings.delete(sliceKey);
      }
      const before = this.serviceOfSlice.get(sliceKey);
      if (before) {
        this.slicesByService.get(before)?.delete(c.name);
        if (this.slicesByService.get(before)?.size === 0) this.slicesByService.delete(before);
        this.serviceOfSlice.delete(sliceKey);
        keys.add(slicesDependency(c.namespace, before.slice(c.namespace.length + 1)));
      }
      const service = c.after?.metadata.labels?.[SERVICE_NAME_LABEL];
      if (c.after && service) {
        const svcKey = flat(`${c.namespace}/${service}`);
        let m = this.slicesByService.get(svcKey);
        if (!m) this.slicesByService.set(svcKey, (m = new Map()));
        m.set(c.name, c.after as EndpointSlice);
        this.serviceOfSlice.set(sliceKey, svcKey);
        keys.add(slicesDependency(c.namespace, service));
      }
    }
    for (const c of changes.objects.get('Pod') ?? []) {
      const podKey = flat(`${c.namespace}/${c.name}`);
      const warning = c.after ? podAddressesLeftOut(c.after as Pod, podKey, this.loopback) : undefined;
      const warningKey = `Pod/${podKey}`;
      if (warning?.message !== this.warnings.get(warningKey)?.message) {
        this.diagnosticsChanged = true;
        if (warning) this.warnings.set(warningKey, warning);
        else this.warnings.delete(warningKey);
      }
    }
    this.pods.apply(changes, keys);
    const changed = new Set<string>();
    for (const name of this.dependencies.dependentsOf(keys, this.dependencies.dependentsOf(changes.keys))) {
      const entry = this.clusters.get(name);
      if (!entry) continue;
      const next = this.compute(inputs, entry.cluster);
      if (next.ready !== entry.ready) facts.add(readyDependency(name));
      if (!deepEqual(next.endpoints, entry.endpoints)) changed.add(name);
      else next.endpoints = entry.endpoints; // keep identity: nothing downstream changes
      this.clusters.set(name, next);
    }
    return changed;
  }

  /** Warnings about the addresses left out of EndpointSlices, by slice. */
  diagnostics(): Diagnostic[] {
    return [...this.warnings.keys()].sort().map((k) => this.warnings.get(k)!);
  }

  /** See Translator.prepare. */
  prepare(deadline?: number): boolean {
    return this.dependencies.index(deadline);
  }

  /** The endpoints of a cluster, computed on first use and kept up to date from then on. */
  endpoints(inputs: Inputs, cluster: ClusterIR): ClusterEndpoints {
    let entry = this.clusters.get(cluster.name);
    if (!entry) {
      entry = this.compute(inputs, cluster);
      this.clusters.set(cluster.name, entry);
    }
    return entry;
  }

  current(name: string): EndpointIR[] | undefined {
    return this.clusters.get(name)?.endpoints;
  }

  /** Forgets clusters nothing refers to any more. */
  forget(name: string): void {
    this.clusters.delete(name);
    this.dependencies.drop(name);
  }

  private selectedEndpoints(inputs: Inputs, xbackend: ClusterIR['service']): EndpointIR[] {
    const s = selectorOf(inputs, xbackend);
    return s ? this.pods.endpoints(inputs, xbackend.namespace, s.labels, s.port, this.loopback) : [];
  }

  private compute(inputs: Inputs, cluster: ClusterIR): ClusterEndpoints {
    // An external hostname (XBackend) is resolved by the proxy: no endpoints here, and counted ready.
    if (cluster.external) return { cluster, endpoints: [], ready: true };
    const { value, dependencies } = inputs.record(() =>
      cluster.endpointSelector
        ? this.selectedEndpoints(inputs, cluster.service)
        : endpointsOf(inputs, cluster, this.slicesByService, this.loopback),
    );
    this.dependencies.record(cluster.name, dependencies);
    return { cluster, endpoints: value, ready: value.some((e) => e.ready) };
  }
}

/**
 * An EndpointSelector's Pods, by the XBackend as it is now (read here, so a change of its selector or port
 * recomputes the cluster, whose name stays: `service` names the XBackend).
 */
function selectorOf(
  inputs: Inputs,
  xbackend: ClusterIR['service'],
): { labels: Record<string, string>; port: number } | undefined {
  const spec = inputs.get<XBackend>(XBACKEND_KIND, xbackend.namespace, xbackend.name)?.spec;
  const labels = spec?.endpointSelector?.matchLabels;
  const port = spec?.port?.number;
  if (spec?.type !== 'EndpointSelector' || !labels || typeof labels !== 'object' || !port) return undefined;
  return { labels, port };
}

function endpointsOf(
  inputs: Inputs,
  cluster: ClusterIR,
  slicesByService: Map<string, Map<string, EndpointSlice>>,
  loopback: boolean,
): EndpointIR[] {
  // A cluster spread over Services: each member's endpoints, in its own weighted locality.
  if (cluster.members)
    return cluster.members.flatMap((m) =>
      serviceEndpoints(inputs, m.service, cluster.protocol, slicesByService, loopback).map((e) => ({
        ...e,
        locality: { name: m.cluster, weight: m.weight },
      })),
    );
  return serviceEndpoints(inputs, cluster.service, cluster.protocol, slicesByService, loopback);
}

function serviceEndpoints(
  inputs: Inputs,
  service: ClusterIR['service'],
  protocol: ClusterIR['protocol'],
  slicesByService: Map<string, Map<string, EndpointSlice>>,
  loopback: boolean,
): EndpointIR[] {
  const { namespace, name, port } = service;
  const svc = inputs.get<Service>('Service', namespace, name);
  inputs.depend(slicesDependency(namespace, name));
  const transport = protocol === 'udp' ? 'UDP' : 'TCP';
  const sp = (svc?.spec?.ports ?? []).find((p) => p.port === port && (p.protocol ?? 'TCP') === transport);
  if (!sp) return [];
  const out: EndpointIR[] = [];
  const slices = slicesByService.get(`${namespace}/${name}`);
  if (!slices) return out;
  // In the order of the slices' names; most Services have one slice (nothing to sort).
  const ordered = slices.size === 1 ? slices.values() : [...slices.keys()].sort().map((n) => slices.get(n)!);
  for (const slice of ordered) {
    const slicePort =
      (slice.ports ?? []).find((p) => (p.name ?? '') === (sp.name ?? '')) ??
      (slice.ports?.length === 1 ? slice.ports[0] : undefined);
    const epPort = slicePort?.port ?? (typeof sp.targetPort === 'number' ? sp.targetPort : sp.port);
    for (const ep of slice.endpoints ?? []) {
      const ready = ep.conditions?.ready !== false;
      for (const address of ep.addresses ?? []) if (kept(address, loopback)) out.push({ address, port: epPort, ready });
    }
  }
  return fitted(sortInPlace(out, compareEndpoints));
}

function kept(address: string, loopback: boolean): boolean {
  const why = unroutableAddress(address);
  return why === undefined || (loopback && why === 'loopback');
}

/** The warning for a slice with addresses no backend has, naming them; undefined when it has none. */
function leftOut(slice: EndpointSlice, key: string, loopback: boolean): Diagnostic | undefined {
  const dropped: string[] = [];
  // Any slice, not only those of Services routes use, and as written (a malformed one too).
  for (const ep of Array.isArray(slice.endpoints) ? slice.endpoints : [])
    for (const address of Array.isArray(ep?.addresses) ? ep.addresses : []) {
      if (kept(address, loopback)) continue;
      dropped.push(`${address} (${unroutableAddress(address)})`);
    }
  if (!dropped.length) return undefined;
  return {
    level: 'warning',
    object: `EndpointSlice/${key}`,
    message:
      `endpoint address(es) left out, the proxy never connects there: ${dropped.join(', ')}; ` +
      'they would reach the proxy itself (its admin on 127.0.0.1) or its node, not a backend',
  };
}

function compareEndpoints(a: EndpointIR, b: EndpointIR): number {
  return a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port;
}
