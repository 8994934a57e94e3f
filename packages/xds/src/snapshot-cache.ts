// What each node is served: per Gateway (node.cluster = "<namespace>/<name>") the encoded
// resources by type, each with a content version, and a version per type (hash of the type's
// resource versions). Resources are encoded once; an unchanged resource keeps its bytes.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { encodeMessage } from './proto-root.js';
import type { EnvoyResources } from './resources.js';
import { messageName, SEND_ORDER, TYPE, type TypeUrl } from './type-urls.js';

export interface EncodedResource { name: string; version: string; any: { type_url: string; value: Buffer } }
export interface TypeSnapshot { version: string; resources: Map<string, EncodedResource> }
export type NodeSnapshot = Map<TypeUrl, TypeSnapshot>;

function encode(typeUrl: TypeUrl, name: string, value: object): EncodedResource {
  const bytes = encodeMessage(messageName(typeUrl), value);
  return { name, version: createHash('sha256').update(bytes).digest('hex').slice(0, 16), any: { type_url: typeUrl, value: bytes } };
}

export function encodeSnapshot(res: EnvoyResources): NodeSnapshot {
  const lists: Record<TypeUrl, [string, object][]> = {
    [TYPE.secret]: res.secrets.map((s) => [s.name ?? '', s]),
    [TYPE.cluster]: res.clusters.map((c) => [c.name ?? '', c]),
    [TYPE.endpoint]: res.endpoints.map((e) => [e.cluster_name ?? '', e]),
    [TYPE.listener]: res.listeners.map((l) => [l.name ?? '', l]),
    [TYPE.route]: res.routes.map((r) => [r.name ?? '', r]),
  };
  const snap: NodeSnapshot = new Map();
  for (const t of SEND_ORDER) {
    const resources = new Map<string, EncodedResource>();
    for (const [name, value] of lists[t].sort((a, b) => (a[0] < b[0] ? -1 : 1))) resources.set(name, encode(t, name, value));
    const h = createHash('sha256');
    for (const r of resources.values()) h.update(`${r.name}:${r.version}\n`);
    snap.set(t, { version: h.digest('hex').slice(0, 16), resources });
  }
  return snap;
}

/** The current snapshot of every node; emits `update` with the node names whose snapshot changed. */
export class SnapshotCache extends EventEmitter {
  private readonly nodes = new Map<string, NodeSnapshot>();

  get(node: string): NodeSnapshot | undefined {
    return this.nodes.get(node);
  }

  nodeNames(): string[] {
    return [...this.nodes.keys()].sort();
  }

  /** Replaces the whole set of snapshots (nodes not given are removed). */
  setAll(snapshots: Map<string, NodeSnapshot>): void {
    const changed: string[] = [];
    for (const [node, snap] of snapshots) {
      const prev = this.nodes.get(node);
      if (!prev || SEND_ORDER.some((t) => prev.get(t)?.version !== snap.get(t)?.version)) changed.push(node);
      this.nodes.set(node, snap);
    }
    for (const node of [...this.nodes.keys()]) {
      if (!snapshots.has(node)) {
        this.nodes.delete(node);
        changed.push(node);
      }
    }
    if (changed.length) this.emit('update', changed);
  }
}
