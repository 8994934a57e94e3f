// Stage 3: plugins. Per ProxyConfig, the plugins it installs and whether each entry resolves; per
// PluginInstallation (after the routes, once its uses are known: PluginUseStage), its status and
// what the fetch worker is to fetch. Publishes `@installs:<namespace>/<name>` when what a
// ProxyConfig installs changes, which re-derives the proxies of the Gateways that use it. The
// statuses of both kinds are finished by the installation stage, once the Gateways said what their
// proxies run.
import { objectKey, type PluginInstallation, type ProxyConfig } from '@turnpike/api';
import { deepEqual } from '../incremental/deep-equal.js';
import type { TranslationRun } from '../incremental/run.js';
import type { PluginUseStage } from './plugin-use-stage.js';
import { pluginFetchRequest } from '../plugins/plugin-fetch-requests.js';
import {
  pluginInstallationStatus,
  proxyConfigPlugins,
  type InstalledPlugin,
  type ProxyConfigPluginEntry,
} from '../plugins/plugins.js';

const PROXY_CONFIG = 'proxyconfig:';
const PLUGIN = 'plugin:';
export const installsFact = (namespace: string, name: string): string => `@installs:${namespace}/${name}`;

export class PluginStage {
  private readonly installs = new Map<string, InstalledPlugin[]>();
  /** Per ProxyConfig (`namespace/name`) its object and entries; per PluginInstallation its object and status so far. */
  readonly proxyConfigs = new Map<string, { object: ProxyConfig; entries: ProxyConfigPluginEntry[] }>();
  readonly pluginStatuses = new Map<string, { object: PluginInstallation; status: Record<string, unknown> }>();
  /** Keys derived again in the last run (present or gone). */
  changedProxyConfigs = new Set<string>();
  changedPlugins = new Set<string>();

  /** What a ProxyConfig installs, recording the dependency on it. */
  installed(run: TranslationRun, pc: ProxyConfig): InstalledPlugin[] {
    const key = `${pc.metadata.namespace}/${pc.metadata.name}`;
    run.inputs.depend(installsFact(pc.metadata.namespace ?? '', pc.metadata.name));
    return this.installs.get(key) ?? [];
  }

  /** The ProxyConfigs, before the Gateways (which read what they install). */
  updateProxyConfigs(run: TranslationRun): void {
    this.changedProxyConfigs = new Set();
    for (const { key, namespace, name, object: pc } of run.dirtyObjects<ProxyConfig>(PROXY_CONFIG, 'ProxyConfig')) {
      const before = this.installs.get(key);
      this.changedProxyConfigs.add(key);
      if (!pc) {
        run.forget(PROXY_CONFIG, key);
        this.installs.delete(key);
        this.proxyConfigs.delete(key);
        run.out.statuses.delete(objectKey('ProxyConfig', namespace, name));
        if (before) run.facts.add(installsFact(namespace, name));
        continue;
      }
      const r = run.compute(PROXY_CONFIG, key, () => proxyConfigPlugins(run.inputs, pc));
      this.proxyConfigs.set(key, { object: pc, entries: r.entries });
      if (!before || !deepEqual(before, r.installed)) {
        this.installs.set(key, r.installed);
        run.facts.add(installsFact(namespace, name));
      }
    }
  }

  /** The PluginInstallations, once every use of them is known (a plugin nothing uses is not fetched). */
  updateInstallations(run: TranslationRun, uses: PluginUseStage): void {
    this.changedPlugins = new Set();
    for (const { key, namespace, name, object: pi } of run.dirtyObjects<PluginInstallation>(
      PLUGIN,
      'PluginInstallation',
    )) {
      this.changedPlugins.add(key);
      if (!pi) {
        run.forget(PLUGIN, key);
        this.pluginStatuses.delete(key);
        run.out.statuses.delete(objectKey('PluginInstallation', namespace, name));
        run.out.pluginFetches.delete(key);
        continue;
      }
      const derived = run.compute(PLUGIN, key, () => {
        const used = uses.used(run, namespace, name);
        return {
          status: pluginInstallationStatus(run.inputs, pi, used),
          fetch: pluginFetchRequest(run.inputs, pi, used),
        };
      });
      this.pluginStatuses.set(key, { object: pi, status: derived.status });
      run.out.pluginFetches.set(key, derived.fetch);
    }
  }
}
