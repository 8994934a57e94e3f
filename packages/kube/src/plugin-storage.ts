// Plugin content in the cluster: one ConfigMap per PluginInstallation, holding `plugin.lua` (data)
// or `plugin.wasm` (binaryData) and annotated with the image, digest and sha256 it came from. Either
// in the PluginInstallation's namespace, owned by it (deleted with it), or, when the controller
// writes only in its own namespace, there, named after both and deleted by the controller when the
// PluginInstallation is gone (an owner reference cannot cross namespaces). A restarted controller reads it back instead of
// fetching again, and serves it while the registry is unreachable. Only the leader writes; a
// replica that becomes leader writes what it holds. Content over what a ConfigMap holds is not
// stored: the controller serves it over HTTP (the URL is in the PluginInstallation's status).
import { createHash } from 'node:crypto';
import type { ConfigMap, PluginInstallation } from '@turnpike/api';
import { hashedName } from '@turnpike/translator';
import { CONFIGMAP_CONTENT_LIMIT, type PluginStorage, type StoredPlugin } from '@turnpike/plugins';
import { KubeApiError, type KubeClient } from './client.js';

export const PLUGIN_STORAGE_MANAGER = 'turnpike-plugins';
const ANNOTATION = {
  image: 'turnpike.dev/plugin-image',
  digest: 'turnpike.dev/plugin-digest',
  sha256: 'turnpike.dev/plugin-sha256',
  installation: 'turnpike.dev/plugin-installation',
};
const MANAGED_BY = 'app.kubernetes.io/managed-by';

/** `turnpike-plugin-<name>`, kept within 253 characters. */
export function pluginConfigMapName(name: string): string {
  const full = `turnpike-plugin-${name}`;
  if (full.length <= 253) return full;
  return `${full.slice(0, 244)}-${createHash('sha256').update(full).digest('hex').slice(0, 8)}`;
}

interface Saved {
  pi: PluginInstallation;
  content: Buffer;
  sha256: string;
  digest: string;
}

export class ConfigMapPluginStorage implements PluginStorage {
  private readonly saved = new Map<string, Saved>();
  private leading = false;
  /** The PluginInstallations that exist (`namespace/name`), once known: the rest are swept. */
  private existing?: Set<string>;

  /** `namespace`: keep every ConfigMap there instead of beside its PluginInstallation. */
  constructor(
    private readonly client: KubeClient,
    private readonly urlFor: (sha256: string, type: string) => string,
    private readonly log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void,
    private readonly namespace?: string,
  ) {}

  /** Where the content of a PluginInstallation is kept. */
  private location(pi: PluginInstallation): { namespace: string; name: string } {
    const ns = pi.metadata.namespace!;
    return this.namespace === undefined
      ? { namespace: ns, name: pluginConfigMapName(pi.metadata.name) }
      : {
          namespace: this.namespace,
          name: hashedName(`turnpike-plugin-${ns}-${pi.metadata.name}`, `${ns}/${pi.metadata.name}`, 253),
        };
  }

  /** Leadership changed; on gaining it, write everything held. */
  async setLeading(leading: boolean): Promise<void> {
    this.leading = leading;
    if (!leading) return;
    await this.sweep();
    for (const s of this.saved.values()) {
      await this.write(s).catch((e: Error) =>
        this.log?.('warn', `writing plugin ConfigMap failed: ${e.message}`, {
          plugin: `${s.pi.metadata.namespace}/${s.pi.metadata.name}`,
        }),
      );
    }
  }

  async save(
    pi: PluginInstallation,
    p: { content: Buffer; sha256: string; digest: string },
  ): Promise<{ configMap?: string; url?: string }> {
    if (p.content.length > CONFIGMAP_CONTENT_LIMIT) return { url: this.urlFor(p.sha256, pi.spec.type) };
    const s: Saved = { pi, ...p };
    this.saved.set(`${pi.metadata.namespace}/${pi.metadata.name}`, s);
    // A failed write fails the fetch, which the worker retries with backoff.
    if (this.leading) await this.write(s);
    const at = this.location(pi);
    return { configMap: this.namespace === undefined ? at.name : `${at.namespace}/${at.name}` };
  }

  private async write(s: Saved): Promise<void> {
    const { pi } = s;
    const { namespace, name } = this.location(pi);
    const file = `plugin.${pi.spec.type}`;
    const cm: ConfigMap & { binaryData?: Record<string, string> } = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace,
        labels: {
          [MANAGED_BY]: PLUGIN_STORAGE_MANAGER,
          'turnpike.dev/plugin': pi.metadata.name.slice(0, 63).replace(/[^A-Za-z0-9]+$/, ''),
        },
        annotations: {
          [ANNOTATION.image]: pi.spec.image,
          [ANNOTATION.digest]: s.digest,
          [ANNOTATION.sha256]: s.sha256,
          [ANNOTATION.installation]: `${pi.metadata.namespace}/${pi.metadata.name}`,
        },
        ...(pi.metadata.uid && namespace === pi.metadata.namespace
          ? {
              ownerReferences: [
                {
                  apiVersion: 'turnpike.dev/v1alpha1',
                  kind: 'PluginInstallation',
                  name: pi.metadata.name,
                  uid: pi.metadata.uid,
                  controller: true,
                  blockOwnerDeletion: true,
                },
              ],
            }
          : {}),
      },
      ...(pi.spec.type === 'lua'
        ? { data: { [file]: s.content.toString('utf8') } }
        : { binaryData: { [file]: s.content.toString('base64') } }),
    };
    await this.client.must(
      'PATCH',
      `/api/v1/namespaces/${namespace}/configmaps/${name}?fieldManager=${PLUGIN_STORAGE_MANAGER}&force=true`,
      cm,
      'application/apply-patch+yaml',
    );
  }

  /** Not used: its copy in memory goes (written again when it is fetched again); its ConfigMap stays. */
  release(namespace: string, name: string): void {
    this.saved.delete(`${namespace}/${name}`);
  }

  forget(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const s = this.saved.get(key);
    this.saved.delete(key);
    this.existing?.delete(key);
    // Beside the PluginInstallation, the garbage collector deletes it; in our namespace, we do.
    if (s && this.namespace !== undefined && this.leading) void this.remove(this.location(s.pi), key);
  }

  /**
   * The PluginInstallations that exist, once the controller has seen them all: ConfigMaps in our
   * namespace kept for any other (deleted while no controller ran) are deleted.
   */
  retainOnly(existing: Iterable<string>): void {
    this.existing = new Set(existing);
    if (this.leading) void this.sweep();
  }

  private async sweep(): Promise<void> {
    if (this.namespace === undefined || !this.existing) return;
    try {
      const list = await this.client.must<{ items: ConfigMap[] }>(
        'GET',
        `/api/v1/namespaces/${this.namespace}/configmaps?labelSelector=${encodeURIComponent(`${MANAGED_BY}=${PLUGIN_STORAGE_MANAGER}`)}`,
      );
      for (const cm of list.items ?? []) {
        const of = cm.metadata.annotations?.[ANNOTATION.installation];
        if (of && !this.existing.has(of)) await this.remove({ namespace: this.namespace, name: cm.metadata.name }, of);
      }
    } catch (e) {
      this.log?.('warn', `sweeping plugin ConfigMaps failed: ${(e as Error).message}`);
    }
  }

  private async remove(at: { namespace: string; name: string }, plugin: string): Promise<void> {
    try {
      await this.client.must('DELETE', `/api/v1/namespaces/${at.namespace}/configmaps/${at.name}`);
      this.log?.('info', 'deleted the stored content of a PluginInstallation that is gone', {
        plugin,
        configMap: `${at.namespace}/${at.name}`,
      });
    } catch (e) {
      if (!(e instanceof KubeApiError && e.status === 404))
        this.log?.('warn', `deleting plugin ConfigMap failed: ${(e as Error).message}`, { plugin });
    }
  }

  async load(pi: PluginInstallation): Promise<StoredPlugin | undefined> {
    const { namespace, name } = this.location(pi);
    let cm: ConfigMap & { binaryData?: Record<string, string> };
    try {
      cm = await this.client.must('GET', `/api/v1/namespaces/${namespace}/configmaps/${name}`);
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404) return undefined;
      throw e;
    }
    const a = cm.metadata.annotations ?? {};
    const file = `plugin.${pi.spec.type}`;
    const raw = pi.spec.type === 'lua' ? cm.data?.[file] : cm.binaryData?.[file];
    if (raw === undefined || !a[ANNOTATION.digest] || !a[ANNOTATION.sha256]) return undefined;
    const content = pi.spec.type === 'lua' ? Buffer.from(raw, 'utf8') : Buffer.from(raw, 'base64');
    const sha256 = createHash('sha256').update(content).digest('hex');
    // Content that does not match what it says it is, is not used.
    if (sha256 !== a[ANNOTATION.sha256]) {
      this.log?.('warn', 'stored plugin content does not match its sha256; fetching again', {
        configMap: `${namespace}/${name}`,
      });
      return undefined;
    }
    this.saved.set(`${pi.metadata.namespace}/${pi.metadata.name}`, {
      pi,
      content,
      sha256,
      digest: a[ANNOTATION.digest]!,
    });
    return {
      content,
      sha256,
      digest: a[ANNOTATION.digest]!,
      image: a[ANNOTATION.image] ?? '',
      storage: { configMap: this.namespace === undefined ? name : `${namespace}/${name}` },
    };
  }
}
