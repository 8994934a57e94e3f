// From a translation to the snapshot of every node: Envoy resources per Gateway, encoded.
// A Gateway whose IR and referenced Secrets are the same objects as last time keeps its snapshot.
import type { GatewayIR, KubeObject, Secret } from '@turnpike/api';
import { buildResources, type EnvoyResources, type PluginLookup } from './resources.js';
import { encodeSnapshot, type NodeSnapshot } from './snapshot-cache.js';

export type ObjectLookup = (kind: string, namespace: string, name: string) => KubeObject | undefined;

function decode(v: string | undefined): string {
  return v === undefined ? '' : Buffer.from(v, 'base64').toString('utf8');
}

export function envoyResourcesFor(gw: GatewayIR, lookup: ObjectLookup, plugins: PluginLookup = () => undefined): EnvoyResources {
  return buildResources(gw, (key) => {
    const [ns, name] = key.split('/') as [string, string];
    const s = lookup('Secret', ns, name) as Secret | undefined;
    if (!s) return undefined;
    return { certificateChain: decode(s.data?.['tls.crt']) || (s.stringData?.['tls.crt'] ?? ''), privateKey: decode(s.data?.['tls.key']) || (s.stringData?.['tls.key'] ?? '') };
  }, plugins);
}

export class XdsSnapshotBuilder {
  private readonly memo = new WeakMap<GatewayIR, { secrets: (KubeObject | undefined)[]; snap: NodeSnapshot }>();

  build(gateways: Record<string, GatewayIR>, lookup: ObjectLookup, plugins?: PluginLookup): Map<string, NodeSnapshot> {
    const out = new Map<string, NodeSnapshot>();
    for (const [key, gw] of Object.entries(gateways)) {
      const secrets = gw.secrets.map((k) => { const [ns, n] = k.split('/') as [string, string]; return lookup('Secret', ns, n); });
      const prev = this.memo.get(gw);
      if (prev && prev.secrets.length === secrets.length && prev.secrets.every((s, i) => s === secrets[i])) {
        out.set(key, prev.snap);
        continue;
      }
      const snap = encodeSnapshot(envoyResourcesFor(gw, lookup, plugins));
      this.memo.set(gw, { secrets, snap });
      out.set(key, snap);
    }
    return out;
  }
}
