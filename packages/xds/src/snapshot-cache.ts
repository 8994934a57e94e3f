// What each node is served: per Gateway (node.cluster = "<namespace>/<name>") the encoded
// resources by type, each with a content version, and a version per type (hash of the type's
// resource versions). Resources are encoded once; an unchanged resource keeps its bytes.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { encodeMessage } from './proto-root.js';
import type { EnvoyResources } from './resources.js';
import { messageName, SEND_ORDER, TYPE, type TypeUrl } from './type-urls.js';

export interface EncodedResource {
  name: string;
  version: string;
  any: { type_url: string; value: Buffer };
}
export interface TypeSnapshot {
  version: string;
  resources: ReadonlyMap<string, EncodedResource>;
}
export type NodeSnapshot = ReadonlyMap<TypeUrl, TypeSnapshot>;

export function encodeResource(typeUrl: TypeUrl, name: string, value: object): EncodedResource {
  return encodedAs(typeUrl, name, encodeMessage(messageName(typeUrl), value));
}

/** A resource from its encoded bytes; its version is the hash of the bytes. */
export function encodedAs(typeUrl: TypeUrl, name: string, bytes: Buffer): EncodedResource {
  return {
    name,
    version: createHash('sha256').update(bytes).digest('hex').slice(0, 16),
    any: { type_url: typeUrl, value: bytes },
  };
}

/** A type's resources, sorted by name, with the version that names their combined content. */
export function typeSnapshot(resources: Iterable<EncodedResource>): TypeSnapshot {
  const sorted = [...resources].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const h = createHash('sha256');
  for (const r of sorted) h.update(`${r.name}:${r.version}\n`);
  return { version: h.digest('hex').slice(0, 16), resources: new Map(sorted.map((r) => [r.name, r])) };
}

export function resourceLists(res: EnvoyResources): Record<TypeUrl, [string, object][]> {
  return {
    [TYPE.secret]: res.secrets.map((s) => [s.name ?? '', s]),
    [TYPE.cluster]: res.clusters.map((c) => [c.name ?? '', c]),
    [TYPE.endpoint]: res.endpoints.map((e) => [e.cluster_name ?? '', e]),
    [TYPE.listener]: res.listeners.map((l) => [l.name ?? '', l]),
    [TYPE.route]: res.routes.map((r) => [r.name ?? '', r]),
  };
}

export function encodeSnapshot(res: EnvoyResources): NodeSnapshot {
  const lists = resourceLists(res);
  const snap = new Map<TypeUrl, TypeSnapshot>();
  for (const t of SEND_ORDER)
    snap.set(t, typeSnapshot(lists[t].map(([name, value]) => encodeResource(t, name, value))));
  return snap;
}

/** The current snapshot of every node; emits `update` with the node names whose snapshot changed. */
export class SnapshotCache extends EventEmitter {
  private readonly nodes = new Map<string, NodeSnapshot>();

  /** How many nodes (Gateways) have a snapshot. */
  get size(): number {
    return this.nodes.size;
  }

  get(node: string): NodeSnapshot | undefined {
    return this.nodes.get(node);
  }

  nodeNames(): string[] {
    return [...this.nodes.keys()].sort();
  }

  /** Replaces the whole set of snapshots (nodes not given are removed). */
  setAll(snapshots: ReadonlyMap<string, NodeSnapshot>): void {
    const changes = new Map<string, NodeSnapshot | undefined>(snapshots);
    for (const node of this.nodes.keys()) if (!snapshots.has(node)) changes.set(node, undefined);
    this.update(changes);
  }

  /** Sets the snapshots of some nodes (undefined removes one); the others are left as they are. */
  update(changes: ReadonlyMap<string, NodeSnapshot | undefined>): void {
    const changed: string[] = [];
    for (const [node, snap] of changes) {
      const prev = this.nodes.get(node);
      if (!snap) {
        if (prev && this.nodes.delete(node)) changed.push(node);
        continue;
      }
      if (!prev || SEND_ORDER.some((t) => prev.get(t)?.version !== snap.get(t)?.version)) changed.push(node);
      this.nodes.set(node, snap);
    }
    if (changed.length) this.emit('update', changed.sort());
  }
}
