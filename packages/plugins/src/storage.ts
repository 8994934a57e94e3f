// Where fetched plugin content is kept besides memory, so proxies can mount it and a restarted
// controller need not fetch it again. In a cluster: a ConfigMap per PluginInstallation (the kube
// package). Content over what a ConfigMap holds is not stored there: the controller serves it
// over HTTP at an unguessable URL instead (Wasm only: Envoy's Lua filter cannot fetch code).
import type { PluginInstallation } from '@turnpike/api';

/** A ConfigMap holds at most 1 MiB in all; keep room for metadata. */
export const CONFIGMAP_CONTENT_LIMIT = 900 * 1024;

export interface StoredPlugin {
  content: Buffer;
  sha256: string;
  digest: string;
  image: string;
  storage: { configMap?: string; url?: string };
}

export interface PluginStorage {
  /** Stores content and says where it is. */
  save(
    pi: PluginInstallation,
    p: { content: Buffer; sha256: string; digest: string },
  ): Promise<{ configMap?: string; url?: string }>;
  /** Content stored before for this PluginInstallation, if there is any and it is intact. */
  load(pi: PluginInstallation): Promise<StoredPlugin | undefined>;
  /** Nothing uses the PluginInstallation: drop what is held in memory for it, keep what is stored. */
  release?(namespace: string, name: string): void;
  /** The PluginInstallation is gone: drop what is held for it. */
  forget?(namespace: string, name: string): void;
  /** Every PluginInstallation that exists (`namespace/name`): what is stored for any other may go. */
  retainOnly?(existing: Iterable<string>): void;
}

/** Off-cluster: content lives in memory only; large content gets a URL. */
export class MemoryStorage implements PluginStorage {
  constructor(private readonly urlFor?: (sha256: string, type: string) => string) {}

  async save(pi: PluginInstallation, p: { content: Buffer; sha256: string }): Promise<{ url?: string }> {
    if (p.content.length > CONFIGMAP_CONTENT_LIMIT && this.urlFor) return { url: this.urlFor(p.sha256, pi.spec.type) };
    return {};
  }

  async load(): Promise<undefined> {
    return undefined;
  }
}
