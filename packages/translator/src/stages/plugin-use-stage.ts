// Who uses each PluginInstallation: the routes whose ExtensionRef filters name it (a route with a
// parent of ours), the Gateways whose listener ExtensionRef filters (their own or their
// ListenerSets') name it, and the ProxyConfigs installing it; any other user is fed to `use`. Runs
// after the routes and before the plugins' requests and statuses, which read `used`; publishes
// `@plugin-use:<namespace>/<name>` when a plugin becomes used or unused, so an added or removed
// user derives that plugin's request and status again, and nothing else.
import { listenerFilterPlugins } from '../gateways/gateways.js';
import type { TranslationRun } from '../incremental/run.js';
import { isPluginUse, pluginUseFact } from '../plugins/plugin-uses.js';
import type { GatewayStage } from './gateway-stage.js';
import type { PluginStage } from './plugin-stage.js';
import type { RouteStage } from './route-stage.js';

export class PluginUseStage {
  /** User (`Kind/namespace/name`) → the plugins (`namespace/name`) it uses; plugin → its users. */
  private readonly usesOf = new Map<string, readonly string[]>();
  private readonly usersOf = new Map<string, Set<string>>();

  /** The users the stages before it derived again: Gateways, routes and ProxyConfigs. */
  update(run: TranslationRun, gateways: GatewayStage, routes: RouteStage, plugins: PluginStage): void {
    for (const key of gateways.changed) {
      const group = gateways.groups.get(key);
      this.use(run, `Gateway/${key}`, group ? listenerFilterPlugins(group.gateway) : []);
    }
    for (const key of routes.statusDirty) {
      const result = routes.entries.get(key)?.result;
      // Only a route with a parent of ours is ever served (the assembly reads no other).
      this.use(run, key, result?.parents.length ? (result.plugins ?? []) : []);
    }
    for (const key of plugins.changedProxyConfigs) {
      const entries = plugins.proxyConfigs.get(key)?.entries ?? [];
      this.use(
        run,
        `ProxyConfig/${key}`,
        entries.filter((e) => isPluginUse(e.problem)).map((e) => `${e.namespace}/${e.name}`),
      );
    }
  }

  /**
   * Sets what `user` (`Kind/namespace/name`) uses now (`namespace/name` of each plugin; empty: nothing),
   * publishing the fact of each plugin whose being used changed. Call it before `PluginStage.updateInstallations`.
   */
  use(run: TranslationRun, user: string, plugins: readonly string[]): void {
    const before = this.usesOf.get(user) ?? [];
    for (const key of before)
      if (!plugins.includes(key)) {
        const users = this.usersOf.get(key)!;
        users.delete(user);
        if (users.size) continue;
        this.usersOf.delete(key);
        this.changed(run, key);
      }
    for (const key of plugins) {
      if (before.includes(key)) continue;
      let users = this.usersOf.get(key);
      if (!users) this.usersOf.set(key, (users = new Set()));
      if (users.size === 0) this.changed(run, key);
      users.add(user);
    }
    if (plugins.length) this.usesOf.set(user, [...new Set(plugins)]);
    else this.usesOf.delete(user);
  }

  /** Whether anything uses the plugin `namespace/name`, recording the dependency on it. */
  used(run: TranslationRun, namespace: string, name: string): boolean {
    run.inputs.depend(pluginUseFact(namespace, name));
    return (this.usersOf.get(`${namespace}/${name}`)?.size ?? 0) > 0;
  }

  private changed(run: TranslationRun, key: string): void {
    const [namespace, name] = key.split('/') as [string, string];
    run.facts.add(pluginUseFact(namespace, name));
  }
}
