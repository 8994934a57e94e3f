// Stage 4: Gateways of our classes, each with the ListenerSets that name it (one group, since
// listener precedence and conflicts cross them). A group is rebuilt when its Gateway, one of its
// ListenerSets, its class or anything its listeners read (Secrets, grants, Namespaces, ProxyConfig)
// changes, and publishes `@gateway:<namespace>/<name>`: the routes attached to it are re-attached.
// What the proxies said (ProxyReports) is not in the model: the assembly reads it (proxies/gateway-proxies.ts).
import type { Gateway, ListenerSet } from '@turnpike/api';
import { buildGatewayGroup, listenerSetParent, type GatewayGroup } from '../gateways/gateways.js';
import { listenerStands } from '../gateways/listener-validity.js';
import type { TranslationRun } from '../incremental/run.js';
import type { GatewayModel, ListenerSetModel } from '../model.js';
import type { ParentIndex } from '../routes/attachment.js';
import { classFact, type ClassStage } from './class-stage.js';
import type { PolicyStage } from './policy-stage.js';
import { flat } from '../compact-values.js';

const PIECE = 'gateway:';
export const gatewayFact = (key: string): string => flat(`@gateway:${key}`);

export class GatewayStage {
  readonly groups = new Map<string, GatewayGroup>();
  /** ListenerSet `namespace/name` → the Gateway its parentRef names, and the reverse. */
  private readonly parentOfSet = new Map<string, string>();
  private readonly setsOfGateway = new Map<string, Set<string>>();
  private readonly setModels = new Map<string, ListenerSetModel>();

  /** Gateways rebuilt (or removed) in the last run. */
  changed = new Set<string>();
  /**
   * Gateway → the BackendTLSPolicies (`namespace/name`) its listeners' auth Services fall under, valid or
   * not, and those meant for such a Service that name none of its ports: the Gateway is among their
   * ancestors. Only Gateways with at least one.
   */
  readonly authPolicies = new Map<string, { attached: string[]; detached: string[] }>();
  /** Whether the last run changed `authPolicies`. */
  authPoliciesTouched = false;

  update(run: TranslationRun, classes: ClassStage, policies: PolicyStage): void {
    this.authPoliciesTouched = false;
    const dirty = run.dirtyPieces(PIECE);
    for (const c of run.changedObjects('Gateway')) dirty.add(`${c.namespace}/${c.name}`);
    for (const c of run.changedObjects('ListenerSet')) {
      const key = `${c.namespace}/${c.name}`;
      const before = this.parentOfSet.get(key);
      if (before) {
        dirty.add(before);
        this.setsOfGateway.get(before)?.delete(key);
        this.parentOfSet.delete(key);
      }
      const after = c.after ? listenerSetParent(c.after as ListenerSet) : undefined;
      if (after) {
        dirty.add(after);
        let s = this.setsOfGateway.get(after);
        if (!s) this.setsOfGateway.set(after, (s = new Set()));
        s.add(key);
        this.parentOfSet.set(key, after);
      }
    }
    this.changed = new Set();
    for (const key of [...dirty].sort()) {
      const [ns, name] = key.split('/') as [string, string];
      const before = this.groups.get(key);
      for (const s of before?.listenerSets ?? []) {
        // Only the entry this group wrote: the set may have moved to a group rebuilt before this one.
        const setKey = `${s.object.metadata.namespace}/${s.object.metadata.name}`;
        if (this.setModels.get(setKey) === s) this.setModels.delete(setKey);
      }
      const group = run.compute(PIECE, key, () => this.build(run, classes, policies, ns, name));
      if (group) this.groups.set(key, group);
      else this.groups.delete(key);
      this.noteAuthPolicies(key, group);
      for (const s of group?.listenerSets ?? [])
        this.setModels.set(`${s.object.metadata.namespace}/${s.object.metadata.name}`, s);
      if (group || before) {
        this.changed.add(key);
        run.facts.add(gatewayFact(key));
      }
    }
  }

  private noteAuthPolicies(key: string, group: GatewayGroup | undefined): void {
    const attached = new Set<string>();
    const detached = new Set<string>();
    // The listeners that stand (accepted, in an accepted Gateway or ListenerSet), served or not: a listener
    // whose policy is invalid is unserved for it, and the policy's status says why on this Gateway.
    const g = group?.gateway;
    const standing =
      g && !g.notAccepted
        ? [...g.listeners, ...g.listenerSets.filter((s) => !s.notAccepted).flatMap((s) => s.listeners)]
        : [];
    for (const l of standing.filter((x) => x.attachable && listenerStands(x))) {
      for (const p of l.preRoutingTLSPolicies?.attached ?? []) attached.add(p);
      for (const p of l.preRoutingTLSPolicies?.detached ?? []) detached.add(p);
    }
    const used = { attached: [...attached].sort(), detached: [...detached].sort() };
    const before = this.authPolicies.get(key);
    if (JSON.stringify(before ?? { attached: [], detached: [] }) === JSON.stringify(used)) return;
    this.authPoliciesTouched = true;
    if (attached.size || detached.size) this.authPolicies.set(key, used);
    else this.authPolicies.delete(key);
  }

  private build(
    run: TranslationRun,
    classes: ClassStage,
    policies: PolicyStage,
    ns: string,
    name: string,
  ): GatewayGroup | undefined {
    const gw = run.inputs.get<Gateway>('Gateway', ns, name);
    if (!gw) return undefined;
    run.inputs.depend(classFact(gw.spec?.gatewayClassName));
    const cls = classes.get(gw.spec?.gatewayClassName);
    if (!cls || !cls.model.accepted) return undefined;
    const sets: ListenerSet[] = [];
    for (const setKey of [...(this.setsOfGateway.get(`${ns}/${name}`) ?? [])].sort()) {
      const [sns, sname] = setKey.split('/') as [string, string];
      const ls = run.inputs.get<ListenerSet>('ListenerSet', sns, sname);
      if (ls) sets.push(ls);
    }
    const backendTLS = (namespace: string, service: string, port: string | undefined) =>
      policies.forBackend(run, namespace, service, port);
    const detachedTLS = (namespace: string, service: string) => policies.detachedFrom(run, namespace, service);
    return buildGatewayGroup({ inputs: run.inputs, backendTLS, detachedTLS }, gw, cls, sets);
  }

  /** How routes find their parents; every lookup records the dependency on the parent. */
  parents(run: TranslationRun): ParentIndex {
    return {
      gateway: (key: string): GatewayModel | undefined => {
        run.inputs.depend(gatewayFact(key));
        return this.groups.get(key)?.gateway;
      },
      listenerSet: (key: string): ListenerSetModel | undefined => {
        const [ns, name] = key.split('/') as [string, string];
        if (!run.inputs.get('ListenerSet', ns, name)) return undefined;
        const parent = this.parentOfSet.get(key);
        if (!parent) return undefined;
        run.inputs.depend(gatewayFact(parent));
        return this.setModels.get(key);
      },
    };
  }
}
