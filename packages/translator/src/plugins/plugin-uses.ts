// Which references to a PluginInstallation count as a use of it. Only a plugin something uses is
// fetched (#47: sixteen unused 31 MB plugins held 650 MB of the controller's memory), so a use must
// be known before the plugin is fetched: a reference counts whether or not its plugin exists or has
// content, since the fetch is what it waits for. A reference that is not permitted (no
// ReferenceGrant) is no use: it never resolves, whatever is fetched.
import type { Problem } from '../status/conditions.js';

/** The derived fact a PluginInstallation's request and status read: whether anything uses it. */
export const pluginUseFact = (namespace: string, name: string): string => `@plugin-use:${namespace}/${name}`;

/** Whether a reference that resolved with this outcome (resolvePluginRef) wants the plugin's content. */
export function isPluginUse(problem: Problem | undefined): boolean {
  return problem?.reason !== 'RefNotPermitted';
}

/** The words of `Fetched=False/NotUsed`. */
export function notUsedMessage(namespace: string, name: string): string {
  return (
    `Not fetched: no route, listener or ProxyConfig uses PluginInstallation ${namespace}/${name}; ` +
    `it is fetched when one does`
  );
}
