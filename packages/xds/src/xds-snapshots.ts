// From translations to the snapshot of every node, incrementally: a Gateway whose IR changed gets
// its listeners, routes, clusters and secrets built and encoded again; a cluster whose endpoints
// changed gets its one EDS resource encoded again and swapped into the snapshots of the Gateways
// that use it. Nothing else is rebuilt.
import {
  publicPemOf,
  secretText,
  type ClusterIR,
  type EndpointIR,
  type GatewayIR,
  type KubeObject,
  type Secret,
  type XdsIR,
} from '@turnpike/api';
import type { Cluster } from './envoy-types.js';
import {
  buildEndpoints,
  buildResources,
  type ControlPlaneOptions,
  type EnvoyResources,
  type PluginLookup,
  type RouteMemo,
} from './resources.js';
import { screenResources, type ScreenMemo, type WithheldResource } from './resource-screen.js';
import { RouteConfigurationEncoder } from './route-encoding.js';
import {
  encodeResource,
  encodedAs,
  resourceLists,
  typeSnapshot,
  type EncodedResource,
  type NodeSnapshot,
  type TypeSnapshot,
} from './snapshot-cache.js';
import { SEND_ORDER, TYPE, type TypeUrl } from './type-urls.js';

export type ObjectLookup = (kind: string, namespace: string, name: string) => KubeObject | undefined;

/** Every Envoy resource of a Gateway, endpoints included (for printing and validation). */
export function envoyResourcesFor(
  gw: GatewayIR,
  lookup: ObjectLookup,
  plugins: PluginLookup = () => undefined,
  endpoints: XdsIR['endpoints'] = new Map(),
  options: ControlPlaneOptions = {},
): EnvoyResources {
  return buildResources(gw, secretLookup(lookup), plugins, (c) => endpoints.get(c), undefined, options);
}

function secretLookup(lookup: ObjectLookup) {
  return (key: string) => {
    const [ns, name] = key.split('/') as [string, string];
    const s = lookup('Secret', ns, name) as Secret | undefined;
    if (!s) return undefined;
    return {
      // The certificate blocks of tls.crt only, as the translator read and checked them (publicPemOf): a
      // private key or other text appended to the chain stays out of what the proxies (and debug reads) get.
      certificateChain: publicPemOf(secretText(s, 'tls.crt'))?.pem ?? '',
      privateKey: secretText(s, 'tls.key') ?? '',
    };
  };
}

interface NodeState {
  ir: GatewayIR;
  clusters: Map<string, ClusterIR>;
  base: Map<TypeUrl, TypeSnapshot>;
  eds: Map<string, EncodedResource>;
  edsSnapshot?: TypeSnapshot | undefined;
}

export interface XdsSnapshotOptions extends ControlPlaneOptions {
  /** What a Gateway's build withheld changed (an empty list: nothing is withheld any more). */
  onWithheld?: (gateway: string, withheld: WithheldResource[]) => void;
}

export interface XdsChanges {
  gateways: readonly string[];
  endpoints: readonly string[];
}

export class XdsSnapshotBuilder {
  private readonly nodes = new Map<string, NodeState>();
  /** Cluster name → the nodes whose Gateway uses it. */
  private readonly usersOf = new Map<string, Set<string>>();
  /** Encoded EDS resources by the identity of their endpoint list (shared by every node using the cluster). */
  private encodedEndpoints = new WeakMap<readonly EndpointIR[], Map<string, EncodedResource>>();

  /** Per Gateway, what the last build withheld (resource-screen.ts), as reported. */
  private readonly withheld = new Map<string, string>();
  private readonly screenMemo: ScreenMemo = new WeakMap();

  constructor(private readonly options: XdsSnapshotOptions = {}) {}

  private reportWithheld(gateway: string, withheld: WithheldResource[]): void {
    const text = JSON.stringify(withheld);
    if ((this.withheld.get(gateway) ?? '[]') === text) return;
    if (withheld.length) this.withheld.set(gateway, text);
    else this.withheld.delete(gateway);
    this.options.onWithheld?.(gateway, withheld);
  }

  /** Every node's snapshot from scratch. */
  build(xds: XdsIR, lookup: ObjectLookup, plugins?: PluginLookup): Map<string, NodeSnapshot> {
    const changed = this.update(
      xds,
      { gateways: [...new Set([...xds.gateways.keys(), ...this.nodes.keys()])], endpoints: [] },
      lookup,
      plugins,
    );
    const out = new Map<string, NodeSnapshot>();
    for (const [node, snap] of changed) if (snap) out.set(node, snap);
    return out;
  }

  /** The snapshots of the nodes that changed (undefined: the node has no Gateway any more). */
  update(
    xds: XdsIR,
    changes: XdsChanges,
    lookup: ObjectLookup,
    plugins?: PluginLookup,
  ): Map<string, NodeSnapshot | undefined> {
    const out = new Map<string, NodeSnapshot | undefined>();
    /** Nodes whose EDS resources were all encoded from the current endpoints just now. */
    const freshEndpoints = new Set<string>();
    for (const key of changes.gateways) {
      const ir = xds.gateways.get(key);
      const before = this.nodes.get(key);
      if (before && before.ir === ir) continue;
      for (const name of before?.clusters.keys() ?? []) this.usersOf.get(name)?.delete(key);
      if (!ir) {
        this.reportWithheld(key, []);
        this.nodes.delete(key);
        out.set(key, undefined);
        continue;
      }
      const { resources, withheld } = screenResources(
        buildResources(ir, secretLookup(lookup), plugins, undefined, this.memo, this.options),
        this.screenMemo,
      );
      this.reportWithheld(key, withheld);
      const lists = resourceLists(resources);
      const base = new Map<TypeUrl, TypeSnapshot>();
      for (const t of SEND_ORDER) {
        if (t === TYPE.endpoint) continue;
        base.set(
          t,
          typeSnapshot(
            lists[t].map(([name, value]) => {
              if (t === TYPE.cluster) return this.encodedCluster(name, value);
              if (t === TYPE.route) return encodedAs(TYPE.route, name, this.routeConfigurations.encode(value));
              return encodeResource(t, name, value);
            }),
          ),
        );
      }
      const clusters = new Map(ir.clusters.map((c) => [c.name, c] as const));
      for (const c of clusters.values()) {
        let users = this.usersOf.get(c.name);
        if (!users) this.usersOf.set(c.name, (users = new Set()));
        users.add(key);
      }
      // The same cluster objects as before: their EDS resources are current already.
      const sameClusters =
        before &&
        before.clusters.size === clusters.size &&
        [...clusters].every(([n, c]) => before.clusters.get(n) === c);
      const eds = sameClusters
        ? before.eds
        : new Map(
            [...clusters.values()]
              .filter((c) => !c.external) // resolved by DNS: no EDS resource
              .map((c) => [c.name, this.encodedEndpoint(c, xds.endpoints.get(c.name))] as const),
          );
      const state: NodeState = { ir, clusters, base, eds, edsSnapshot: sameClusters ? before.edsSnapshot : undefined };
      if (!sameClusters) freshEndpoints.add(key);
      this.nodes.set(key, state);
      out.set(key, snapshotOf(state));
    }
    // Endpoint changes, batched per node; a node whose EDS was encoded above is current already.
    const byNode = new Map<string, string[]>();
    for (const name of changes.endpoints) {
      for (const key of this.usersOf.get(name) ?? []) {
        if (freshEndpoints.has(key)) continue;
        const list = byNode.get(key);
        if (list) list.push(name);
        else byNode.set(key, [name]);
      }
    }
    for (const [key, names] of byNode) {
      const state = this.nodes.get(key)!;
      state.eds = new Map(state.eds);
      for (const name of names)
        state.eds.set(name, this.encodedEndpoint(state.clusters.get(name)!, xds.endpoints.get(name)));
      state.edsSnapshot = undefined;
      out.set(key, snapshotOf(state));
    }
    return out;
  }

  /** Clusters and routes built once per IR object (route results keep theirs while unchanged), and encoded once. */
  private readonly memo = { clusters: new WeakMap<ClusterIR, Cluster>(), routes: new WeakMap() as RouteMemo };
  private readonly routeConfigurations = new RouteConfigurationEncoder();
  private encodedClusters = new WeakMap<object, EncodedResource>();

  private encodedCluster(name: string, value: object): EncodedResource {
    let r = this.encodedClusters.get(value);
    if (!r) this.encodedClusters.set(value, (r = encodeResource(TYPE.cluster, name, value)));
    return r;
  }

  private encodedEndpoint(c: ClusterIR, endpoints: readonly EndpointIR[] | undefined): EncodedResource {
    const list = endpoints ?? NO_ENDPOINTS;
    let byCluster = this.encodedEndpoints.get(list);
    if (!byCluster) this.encodedEndpoints.set(list, (byCluster = new Map()));
    const key = `${c.name}\0${c.protocol}`;
    let r = byCluster.get(key);
    if (!r) byCluster.set(key, (r = encodeResource(TYPE.endpoint, c.name, buildEndpoints(c, list))));
    return r;
  }
}

const NO_ENDPOINTS: readonly EndpointIR[] = Object.freeze([]);

function snapshotOf(state: NodeState): NodeSnapshot {
  const snap = new Map(state.base);
  state.edsSnapshot ??= typeSnapshot(state.eds.values());
  snap.set(TYPE.endpoint, state.edsSnapshot);
  // Keep the order in which resources are sent (secrets and clusters before their users).
  return new Map(SEND_ORDER.map((t) => [t, snap.get(t)!] as const));
}
