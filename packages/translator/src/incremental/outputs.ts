// The translation's keyed outputs, edited in place of being rebuilt: each stage sets the entries it
// recomputed, an entry equal to the one it replaces keeps the old object (so nothing downstream
// sees a change), and the keys that really changed are collected for the sinks.
import type { EndpointIR, GatewayIR } from '@turnpike/api';
import type { GatewayInfraIR } from '../ir/infra-ir.js';
import type { PluginFetchRequest } from '../plugins/plugin-fetch-requests.js';
import { deepEqual } from './deep-equal.js';
import { PersistentMap, type PersistentMapEditor } from './persistent-map.js';

export type Status = Record<string, unknown>;

export interface KeyedOutputs {
  statuses: PersistentMap<Status>;
  gateways: PersistentMap<GatewayIR>;
  endpoints: PersistentMap<EndpointIR[]>;
  infra: PersistentMap<GatewayInfraIR>;
  pluginFetches: PersistentMap<PluginFetchRequest>;
}

/** Keys whose entry was set to a different value or removed, per output. */
export interface OutputChanges {
  statuses: string[];
  gateways: string[];
  endpoints: string[];
  infra: string[];
  pluginFetches: string[];
}

export const EMPTY_OUTPUTS: KeyedOutputs = {
  statuses: PersistentMap.empty(),
  gateways: PersistentMap.empty(),
  endpoints: PersistentMap.empty(),
  infra: PersistentMap.empty(),
  pluginFetches: PersistentMap.empty(),
};

export class OutputEditor<V> {
  private readonly editor: PersistentMapEditor<V>;
  private readonly changed = new Set<string>();

  constructor(base: PersistentMap<V>) {
    this.editor = base.edit();
  }

  get(key: string): V | undefined {
    return this.editor.get(key);
  }

  /** Sets `key` unless it already holds an equal value; returns the value now held. */
  set(key: string, value: V): V {
    const current = this.editor.get(key);
    if (current !== undefined && (current === value || deepEqual(current, value))) return current;
    this.editor.set(key, value);
    this.changed.add(key);
    return value;
  }

  delete(key: string): void {
    if (this.editor.delete(key)) this.changed.add(key);
  }

  finish(): { map: PersistentMap<V>; changed: string[] } {
    return { map: this.editor.finish(), changed: [...this.changed].sort() };
  }
}

export class OutputEditors {
  readonly statuses: OutputEditor<Status>;
  readonly gateways: OutputEditor<GatewayIR>;
  readonly endpoints: OutputEditor<EndpointIR[]>;
  readonly infra: OutputEditor<GatewayInfraIR>;
  readonly pluginFetches: OutputEditor<PluginFetchRequest>;

  constructor(base: KeyedOutputs) {
    this.statuses = new OutputEditor(base.statuses);
    this.gateways = new OutputEditor(base.gateways);
    this.endpoints = new OutputEditor(base.endpoints);
    this.infra = new OutputEditor(base.infra);
    this.pluginFetches = new OutputEditor(base.pluginFetches);
  }

  finish(): { outputs: KeyedOutputs; changes: OutputChanges } {
    const s = this.statuses.finish();
    const g = this.gateways.finish();
    const e = this.endpoints.finish();
    const i = this.infra.finish();
    const p = this.pluginFetches.finish();
    return {
      outputs: { statuses: s.map, gateways: g.map, endpoints: e.map, infra: i.map, pluginFetches: p.map },
      changes: {
        statuses: s.changed,
        gateways: g.changed,
        endpoints: e.changed,
        infra: i.changed,
        pluginFetches: p.changed,
      },
    };
  }
}
