// When a plugin is installed: fetched content is not enough. A plugin is Installed in a Gateway's
// proxies when (1) the proxy Deployment's pod template mounts its digest and the rollout of that
// template completed (every replica updated and available), for a plugin whose file is mounted,
// and (2) the proxies acknowledged the configuration whose routes run that digest (or, for one no
// route runs, some proxy is connected and in sync). Otherwise one of the reasons below says what
// it waits for. Each Gateway reports its own state; its ProxyConfig sums them up per plugin.
import type { GatewayIR, ProxyConfig } from '@turnpike/api';
import { proxyNames, type ProxySync } from '../proxies/gateway-proxies.js';
import { condition, sortConditions } from '../status/conditions.js';
import type { Condition } from '../model.js';
import type { InstalledPlugin, ProxyConfigPluginEntry } from './plugins.js';
import type { ProxyRollout } from './proxy-rollout.js';

export const PLUGINS_INSTALLED = 'turnpike.dev/PluginsInstalled';
export const ROLLOUT_HELD = 'turnpike.dev/RolloutHeld';

export type InstallReason = 'Installed' | 'Pending' | 'RolloutInProgress' | 'RolloutHeld' | 'RolloutFailed';

/** One plugin's state in one Gateway's proxies. */
export interface PluginInstallState {
  /** `namespace/name` of the PluginInstallation. */
  plugin: string;
  sha256: string;
  digest?: string;
  reason: InstallReason;
  message: string;
}

/** Worst first: what a ProxyConfig reports when its Gateways disagree. */
const SEVERITY: Record<InstallReason, number> = {
  RolloutFailed: 0,
  RolloutHeld: 1,
  RolloutInProgress: 2,
  Pending: 3,
  Installed: 4,
};

export function worstFirst(a: PluginInstallState, b: PluginInstallState): number {
  return SEVERITY[a.reason] - SEVERITY[b.reason];
}

/**
 * The installed plugins whose file the routes of this Gateway may read from the Pods: only a
 * digest every replica mounts (the rollout completed). While held, the digest the Pods keep.
 */
export function mountedForRoutes(
  installed: readonly InstalledPlugin[],
  rollout: ProxyRollout | undefined,
  heldBy: string | undefined,
): NonNullable<GatewayIR['installedPlugins']> {
  const out: NonNullable<GatewayIR['installedPlugins']> = [];
  if (!rollout?.complete) return out;
  for (const p of installed) {
    if (!p.mountPath) continue;
    const key = `${p.namespace}/${p.name}`;
    const live = rollout.plugins[key];
    if (live === p.sha256) out.push({ name: key, sha256: p.sha256, mountPath: p.mountPath });
    else if (live && heldBy) out.push({ name: key, sha256: live, mountPath: p.mountPath, held: true });
  }
  return out;
}

/** Each installed plugin's state in one Gateway's proxies. */
export function pluginInstallStates(
  gateway: string,
  installed: readonly InstalledPlugin[],
  rollout: ProxyRollout | undefined,
  heldBy: string | undefined,
  referenced: ReadonlySet<string>,
  sync: ProxySync | undefined,
): PluginInstallState[] {
  return installed.map((p) => {
    const key = `${p.namespace}/${p.name}`;
    const state = (reason: InstallReason, message: string): PluginInstallState => ({
      plugin: key,
      sha256: p.sha256,
      ...(p.digest ? { digest: p.digest } : {}),
      reason,
      message,
    });
    const sha = p.sha256.slice(0, 12);
    if (p.mountPath) {
      if (!rollout) return state('Pending', `the proxy Deployment of Gateway ${gateway} is not created yet`);
      const live = rollout.plugins[key];
      if (live !== p.sha256) {
        const runs = live ? `run sha256 ${live.slice(0, 12)}` : 'do not run it';
        if (heldBy)
          return state(
            'RolloutHeld',
            `the rollout of Deployment ${rollout.deployment} is held by ${heldBy}: its Pods ${runs}`,
          );
        return state('Pending', `Deployment ${rollout.deployment} does not mount sha256 ${sha} yet (its Pods ${runs})`);
      }
      if (rollout.failed)
        return state(
          'RolloutFailed',
          `Deployment ${rollout.deployment}: ${rollout.failed.reason}: ${rollout.failed.message}`.trim(),
        );
      if (!rollout.complete)
        return state(
          'RolloutInProgress',
          `Deployment ${rollout.deployment}: ${rollout.updated} of ${rollout.desired} replicas run sha256 ${sha}, ` +
            `${rollout.available} available`,
        );
    }
    if (!sync?.connected) return state('Pending', `no proxy of Gateway ${gateway} is connected`);
    const ref = `${key}@${p.sha256}`;
    if (referenced.has(ref) ? !sync.plugins?.includes(ref) : sync.behind.length > 0 || !sync.plugins)
      return state(
        'Pending',
        `waiting for the proxies of Gateway ${gateway} to acknowledge the configuration that runs it` +
          (sync.behind.length ? ` (not yet: ${proxyNames(sync.behind)})` : ''),
      );
    return state('Installed', `sha256 ${sha} runs in the proxies of Gateway ${gateway}`);
  });
}

/** Each installed plugin's state in the proxies of a Gateway that is not accepted (nothing is served to them). */
export function notServedStates(gateway: string, installed: readonly InstalledPlugin[]): PluginInstallState[] {
  return installed.map((p) => ({
    plugin: `${p.namespace}/${p.name}`,
    sha256: p.sha256,
    ...(p.digest ? { digest: p.digest } : {}),
    reason: 'Pending',
    message: `Gateway ${gateway} is not accepted: no configuration is served to its proxies`,
  }));
}

/** A Gateway's condition naming the plugins installed in its proxies, by digest (present when its ProxyConfig installs any). */
export function pluginsInstalledCondition(
  states: readonly PluginInstallState[],
  generation: number | undefined,
): Condition | undefined {
  if (!states.length) return undefined;
  const waiting = states.filter((s) => s.reason !== 'Installed').sort(worstFirst);
  const installed = states.filter((s) => s.reason === 'Installed').map((s) => `${s.plugin}@${s.digest ?? s.sha256}`);
  const list = installed.length ? `installed: ${installed.join(', ')}` : 'none installed';
  if (!waiting.length) return condition(PLUGINS_INSTALLED, true, 'Installed', list, generation);
  const why = waiting.map((s) => `${s.plugin}: ${s.message}`).join('; ');
  return condition(PLUGINS_INSTALLED, false, waiting[0]!.reason, `${list}; not yet: ${why}`, generation);
}

/** A Gateway's RolloutHeld condition: present while a hold is asked for. */
export function rolloutHeldCondition(
  heldBy: string | undefined,
  rollout: ProxyRollout | undefined,
  pending: { fields: string[]; plugins: string[] } | undefined,
  generation: number | undefined,
): Condition | undefined {
  if (!heldBy) return undefined;
  if (!rollout)
    return condition(
      ROLLOUT_HELD,
      false,
      'Pending',
      `held by ${heldBy}, but there is no proxy Deployment to hold yet: it is created as specified`,
      generation,
    );
  const what = [...(pending?.fields ?? []), ...(pending?.plugins.map((p) => `plugin ${p}`) ?? [])];
  return condition(
    ROLLOUT_HELD,
    true,
    'RolloutHeld',
    `the pod template of Deployment ${rollout.deployment} is held by ${heldBy}; ` +
      (what.length ? `pending: ${what.join(', ')}` : 'no change pending'),
    generation,
  );
}

/** What one Gateway using a ProxyConfig reports back to it. */
export interface GatewayInstallReport {
  gateway: string;
  states: PluginInstallState[];
  /** While its rollout is held: what waits (empty: nothing). */
  held?: string[];
}

/**
 * A ProxyConfig's status: per plugin of spec.plugins, Installed when its Gateways all run it (the
 * worst Gateway's reason otherwise, naming it), and RolloutHeld while spec.rollout.hold is set.
 */
export function proxyConfigStatus(
  pc: ProxyConfig,
  entries: readonly ProxyConfigPluginEntry[],
  gateways: readonly GatewayInstallReport[],
): Record<string, unknown> {
  const gen = pc.metadata.generation;
  const pcName = `${pc.metadata.namespace}/${pc.metadata.name}`;
  const plugins = entries.map((e) => {
    const key = `${e.namespace}/${e.name}`;
    let installed: Condition;
    if (e.problem) installed = condition('Installed', false, e.problem.reason, e.problem.message, gen);
    else {
      const states = gateways
        .flatMap((g) => g.states.filter((s) => s.plugin === key))
        .sort((a, b) => worstFirst(a, b) || (a.message < b.message ? -1 : 1));
      const waiting = states.filter((s) => s.reason !== 'Installed');
      if (!states.length)
        installed = condition('Installed', false, 'Pending', `no Gateway uses ProxyConfig ${pcName}`, gen);
      else if (!waiting.length)
        installed = condition(
          'Installed',
          true,
          'Installed',
          `sha256 ${states[0]!.sha256.slice(0, 12)} runs in the proxies of ${states.length} Gateway(s)`,
          gen,
        );
      else {
        const more = waiting.length > 1 ? ` (and ${waiting.length - 1} more Gateway(s) not yet)` : '';
        const done = states.length - waiting.length;
        installed = condition(
          'Installed',
          false,
          waiting[0]!.reason,
          `installed in ${done} of ${states.length} Gateway(s); ${waiting[0]!.message}${more}`,
          gen,
        );
      }
    }
    return { name: e.name, namespace: e.namespace, conditions: [installed] };
  });
  const allOk = plugins.every((p) => p.conditions[0]!.status === 'True');
  const conds: Condition[] = [
    condition(
      'Accepted',
      true,
      'Accepted',
      allOk ? 'All plugins are installed' : 'Some plugins are not installed (see status.plugins)',
      gen,
    ),
  ];
  if (pc.spec?.rollout?.hold === true) {
    const pending = gateways.filter((g) => g.held?.length).map((g) => `${g.gateway}: ${g.held!.join(', ')}`);
    conds.push(
      condition(
        'RolloutHeld',
        true,
        'RolloutHeld',
        `the proxies of ${gateways.length} Gateway(s) keep their pod template; ` +
          (pending.length ? `pending: ${pending.join('; ')}` : 'no change pending'),
        gen,
      ),
    );
  }
  return { conditions: sortConditions(conds), plugins };
}
