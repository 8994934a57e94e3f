// Stage 7: plugin installation, after every Gateway said what its proxies run. Per ProxyConfig its
// status (Installed per plugin over its Gateways, RolloutHeld, and the ResolvedRefs of its access
// log's collector); per PluginInstallation its status with the consumers that use it (the
// ProxyConfigs installing it, the Gateways installing or running it), so that its owner sees what
// an upgrade reaches. Only what changed is derived again.
import { MAX_PLUGIN_CONSUMERS, TURNPIKE_GROUP, GATEWAY_GROUP, objectKey, type PluginConsumer } from '@turnpike/api';
import type { TranslationRun } from '../incremental/run.js';
import { proxyConfigStatus } from '../plugins/plugin-installation.js';
import { accessLogRefsCondition } from '../ir/access-log.js';
import { sortConditions } from '../status/conditions.js';
import type { Condition } from '../model.js';
import type { AccessLogStage } from './access-log-stage.js';
import type { AssemblyStage } from './assembly-stage.js';
import type { PluginStage } from './plugin-stage.js';

/** `Kind/namespace/name` of a consumer. */
type ConsumerId = string;

export class InstallationStage {
  /** ProxyConfig `namespace/name` → the Gateways (`namespace/name`) that use it. */
  private readonly gatewaysOf = new Map<string, Set<string>>();
  /** PluginInstallation `namespace/name` → its consumers; and what each consumer consumes. */
  private readonly consumersOf = new Map<string, Set<ConsumerId>>();
  private readonly consumed = new Map<ConsumerId, string[]>();

  update(run: TranslationRun, plugins: PluginStage, assembly: AssemblyStage, accessLogs: AccessLogStage): void {
    const dirtyConfigs = new Set([...plugins.changedProxyConfigs, ...accessLogs.changed]);
    const dirtyPlugins = new Set(plugins.changedPlugins);
    const consume = (consumer: ConsumerId, next: string[]) => {
      const before = this.consumed.get(consumer) ?? [];
      for (const key of before)
        if (!next.includes(key)) {
          this.consumersOf.get(key)?.delete(consumer);
          dirtyPlugins.add(key);
        }
      for (const key of next)
        if (!before.includes(key)) {
          let set = this.consumersOf.get(key);
          if (!set) this.consumersOf.set(key, (set = new Set()));
          set.add(consumer);
          dirtyPlugins.add(key);
        }
      if (next.length) this.consumed.set(consumer, next);
      else this.consumed.delete(consumer);
    };
    for (const [gateway, before] of assembly.installsChanged) {
      const after = assembly.installs.get(gateway);
      if (before?.proxyConfig) {
        this.gatewaysOf.get(before.proxyConfig)?.delete(gateway);
        dirtyConfigs.add(before.proxyConfig);
      }
      if (after?.proxyConfig) {
        let set = this.gatewaysOf.get(after.proxyConfig);
        if (!set) this.gatewaysOf.set(after.proxyConfig, (set = new Set()));
        set.add(gateway);
        dirtyConfigs.add(after.proxyConfig);
      }
      consume(`Gateway/${gateway}`, after?.consumes ?? []);
    }
    for (const key of plugins.changedProxyConfigs) {
      const entry = plugins.proxyConfigs.get(key);
      const installs = (entry?.entries ?? []).filter((e) => !e.problem).map((e) => `${e.namespace}/${e.name}`);
      consume(`ProxyConfig/${key}`, [...new Set(installs)].sort());
    }
    for (const key of [...dirtyConfigs].sort()) {
      const entry = plugins.proxyConfigs.get(key);
      if (!entry) continue;
      const gateways = [...(this.gatewaysOf.get(key) ?? [])]
        .sort()
        .map((g) => assembly.installs.get(g)?.report)
        .filter((r) => r !== undefined);
      const [namespace, name] = key.split('/') as [string, string];
      const status = proxyConfigStatus(entry.object, entry.entries, gateways);
      // The collector of spec.accessLog.openTelemetry: ResolvedRefs (ir/access-log.ts).
      const refs = accessLogRefsCondition(accessLogs.of(key) ?? {}, entry.object.metadata.generation);
      if (refs.length) status.conditions = sortConditions([...(status.conditions as Condition[]), ...refs]);
      run.out.statuses.set(objectKey('ProxyConfig', namespace, name), status);
    }
    for (const key of [...dirtyPlugins].sort()) {
      const entry = plugins.pluginStatuses.get(key);
      if (!entry) continue;
      // `Kind/namespace/name`: sorted by kind, then namespace and name.
      const consumers = [...(this.consumersOf.get(key) ?? [])].sort();
      const status: Record<string, unknown> = { ...entry.status };
      if (consumers.length) {
        status.consumers = consumers.slice(0, MAX_PLUGIN_CONSUMERS).map(consumerOf);
        status.consumerCount = consumers.length;
      }
      const [namespace, name] = key.split('/') as [string, string];
      run.out.statuses.set(objectKey('PluginInstallation', namespace, name), status);
    }
  }
}

function consumerOf(id: ConsumerId): PluginConsumer {
  const [kind, namespace, name] = id.split('/') as ['Gateway' | 'ProxyConfig', string, string];
  return { group: kind === 'Gateway' ? GATEWAY_GROUP : TURNPIKE_GROUP, kind, namespace, name };
}
