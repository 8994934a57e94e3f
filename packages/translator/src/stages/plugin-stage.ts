// Stage 3: plugins. Per ProxyConfig, the plugins it installs and its status; per
// PluginInstallation, its status and what the fetch worker is to fetch. Publishes
// `@installs:<namespace>/<name>` when what a ProxyConfig installs changes, which re-derives the
// proxies of the Gateways that use it.
import { objectKey, type PluginInstallation, type ProxyConfig } from '@turnpike/api';
import { deepEqual } from '../incremental/deep-equal.js';
import type { TranslationRun } from '../incremental/run.js';
import { pluginFetchRequest } from '../plugin-fetch-requests.js';
import { pluginInstallationStatus, proxyConfigPlugins, type InstalledPlugin } from '../plugins.js';

const PROXY_CONFIG = 'proxyconfig:';
const PLUGIN = 'plugin:';
export const installsFact = (namespace: string, name: string): string => `@installs:${namespace}/${name}`;

export class PluginStage {
  private readonly installs = new Map<string, InstalledPlugin[]>();

  /** What a ProxyConfig installs, recording the dependency on it. */
  installed(run: TranslationRun, pc: ProxyConfig): InstalledPlugin[] {
    const key = `${pc.metadata.namespace}/${pc.metadata.name}`;
    run.inputs.depend(installsFact(pc.metadata.namespace ?? '', pc.metadata.name));
    return this.installs.get(key) ?? [];
  }

  update(run: TranslationRun): void {
    for (const { key, namespace, name, object: pc } of run.dirtyObjects<ProxyConfig>(PROXY_CONFIG, 'ProxyConfig')) {
      const statusKey = objectKey('ProxyConfig', namespace, name);
      const before = this.installs.get(key);
      if (!pc) {
        run.forget(PROXY_CONFIG, key);
        this.installs.delete(key);
        run.out.statuses.delete(statusKey);
        if (before) run.facts.add(installsFact(namespace, name));
        continue;
      }
      const r = run.compute(PROXY_CONFIG, key, () => proxyConfigPlugins(run.inputs, pc));
      run.out.statuses.set(statusKey, r.status);
      if (!before || !deepEqual(before, r.installed)) {
        this.installs.set(key, r.installed);
        run.facts.add(installsFact(namespace, name));
      }
    }
    for (const { key, namespace, name, object: pi } of run.dirtyObjects<PluginInstallation>(
      PLUGIN,
      'PluginInstallation',
    )) {
      const statusKey = objectKey('PluginInstallation', namespace, name);
      if (!pi) {
        run.forget(PLUGIN, key);
        run.out.statuses.delete(statusKey);
        run.out.pluginFetches.delete(key);
        continue;
      }
      const derived = run.compute(PLUGIN, key, () => ({
        status: pluginInstallationStatus(run.inputs, pi),
        fetch: pluginFetchRequest(run.inputs, pi),
      }));
      run.out.statuses.set(statusKey, derived.status);
      run.out.pluginFetches.set(key, derived.fetch);
    }
  }
}
