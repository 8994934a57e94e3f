// translate(snapshot) → statuses, xDS IR, infra IR, diagnostics. Pure and deterministic: no I/O,
// no clock, no randomness, and the output does not depend on the order objects arrived in.
//
// A Translator runs named stages over the difference between this snapshot and the previous one.
// Each stage memoises its pieces with the dependency keys they read (incremental/inputs.ts) and
// re-derives only the pieces whose keys changed, publishing derived facts (`@…`) for the stages
// after it. A fresh Translator is the same code run from an empty snapshot, so an incremental
// translation and a fresh one are the same function of the snapshot (a property test checks it).
import { CONTROLLER_NAME, objectKey, type EndpointIR, type GatewayIR, type KubeObject } from '@turnpike/api';
import { PieceDependencies } from './incremental/dependency-index.js';
import { changedInputs, Inputs } from './incremental/inputs.js';
import {
  EMPTY_OUTPUTS,
  OutputEditors,
  type KeyedOutputs,
  type OutputChanges,
  type Status,
} from './incremental/outputs.js';
import type { PersistentMap } from './incremental/persistent-map.js';
import { TranslationRun, type Diagnostic } from './incremental/run.js';
import type { GatewayInfraIR } from './ir/infra-ir.js';
import type { PluginFetchRequest } from './plugins/plugin-fetch-requests.js';
import type { RouteResult } from './routes/route-result.js';
import type { BackendTLSIndex } from './policies/backend-tls-policies.js';
import type { Snapshot } from './snapshot.js';
import { AccessLogStage } from './stages/access-log-stage.js';
import { AssemblyStage } from './stages/assembly-stage.js';
import { BackendTLSStatusStage } from './stages/backend-tls-status-stage.js';
import { XBackendStatusStage } from './stages/xbackend-status-stage.js';
import { ClassStage } from './stages/class-stage.js';
import { EndpointStage } from './stages/endpoints.js';
import { GatewayStage } from './stages/gateway-stage.js';
import { InstallationStage } from './stages/installation-stage.js';
import { PluginStage } from './stages/plugin-stage.js';
import { PluginUseStage } from './stages/plugin-use-stage.js';
import { PolicyStage } from './stages/policy-stage.js';
import { RouteStage } from './stages/route-stage.js';
import { RouteStatusStage } from './stages/route-status-stage.js';
import { PolicyAncestorsStage } from './stages/policy-ancestors-stage.js';
import { TelemetryStage } from './stages/telemetry-stage.js';
import { publishServiceFacts } from './ir/service-facts.js';
import { publishProxyReportFacts } from './proxies/gateway-proxies.js';

export type { Diagnostic } from './incremental/run.js';
export type { OutputChanges, Status } from './incremental/outputs.js';

export interface TranslateResult {
  /** Status for every object we own, keyed `kind/namespace/name`. */
  statuses: PersistentMap<Status>;
  xdsIR: { gateways: PersistentMap<GatewayIR>; endpoints: PersistentMap<EndpointIR[]> };
  infraIR: { gateways: PersistentMap<GatewayInfraIR> };
  /** Per PluginInstallation (`namespace/name`), what the fetch worker is to fetch. */
  pluginFetches: PersistentMap<PluginFetchRequest>;
  diagnostics: Diagnostic[];
}

export interface TranslateOptions {
  controllerName?: string;
  /**
   * The namespace every Gateway's proxy objects are placed in (the controller's, so that its writes
   * need a Role there only); undefined places them in the Gateway's own namespace.
   */
  proxyNamespace?: string;
  /**
   * Keep loopback endpoint addresses (the rest that no backend has is left out all the same). For `run
   * --dir`, whose EndpointSlices are the operator's files and whose proxy runs beside its backends on one
   * machine; in a cluster a loopback endpoint only reaches the proxy itself (its admin on 127.0.0.1:19000).
   */
  loopbackEndpoints?: boolean;
}

const EMPTY_SNAPSHOT: Snapshot = new Map();

export class Translator {
  private previous: Snapshot = EMPTY_SNAPSHOT;
  private outputs: KeyedOutputs = EMPTY_OUTPUTS;
  private lastComputed: ReadonlyMap<string, number> = new Map();
  private diagnostics: Diagnostic[] = [];
  private dependencies = new PieceDependencies();
  private endpoints: EndpointStage;
  private classes = new ClassStage();
  private policies = new PolicyStage();
  private plugins = new PluginStage();
  private pluginUses = new PluginUseStage();
  private gateways = new GatewayStage();
  private routes = new RouteStage();
  private accessLogs = new AccessLogStage();
  private assembly = new AssemblyStage();
  private backendTLSStatuses = new BackendTLSStatusStage();
  private routeStatuses = new RouteStatusStage();
  private xbackendStatuses = new XBackendStatusStage();
  private policyAncestors = new PolicyAncestorsStage();
  private installation = new InstallationStage();
  private telemetry = new TelemetryStage();

  constructor(private readonly options: TranslateOptions = {}) {
    this.endpoints = new EndpointStage(options.loopbackEndpoints === true);
  }

  translate(snapshot: Snapshot): TranslateResult {
    return this.translateWithChanges(snapshot).result;
  }

  /**
   * Translates, and tells which output keys differ from the previous translation (all of them the
   * first time). Should a stage ever throw, the memo could be half updated: it is dropped, so the
   * next translation starts from nothing and is whole again.
   */
  translateWithChanges(snapshot: Snapshot): { result: TranslateResult; changes: OutputChanges } {
    try {
      return this.run(snapshot);
    } catch (e) {
      this.reset();
      throw e;
    }
  }

  /**
   * Work the next translation would do first, done now: call it when idle, until `deadline`
   * (performance.now()); true when some is left. Indexes what the last translation's pieces read.
   */
  prepare(deadline?: number): boolean {
    return this.dependencies.index(deadline) || this.endpoints.prepare(deadline);
  }

  /** Forgets everything: the next translation is a fresh one (and reports every key as changed). */
  reset(): void {
    this.previous = EMPTY_SNAPSHOT;
    this.outputs = EMPTY_OUTPUTS;
    this.diagnostics = [];
    this.dependencies = new PieceDependencies();
    this.endpoints = new EndpointStage(this.options.loopbackEndpoints === true);
    this.classes = new ClassStage();
    this.policies = new PolicyStage();
    this.plugins = new PluginStage();
    this.pluginUses = new PluginUseStage();
    this.gateways = new GatewayStage();
    this.routes = new RouteStage();
    this.accessLogs = new AccessLogStage();
    this.assembly = new AssemblyStage();
    this.backendTLSStatuses = new BackendTLSStatusStage();
    this.routeStatuses = new RouteStatusStage();
    this.policyAncestors = new PolicyAncestorsStage();
    this.xbackendStatuses = new XBackendStatusStage();
    this.installation = new InstallationStage();
    this.telemetry = new TelemetryStage();
  }

  private run(snapshot: Snapshot): { result: TranslateResult; changes: OutputChanges } {
    const inputs = new Inputs(snapshot);
    const run = new TranslationRun(
      inputs,
      changedInputs(this.previous, snapshot),
      this.dependencies,
      new OutputEditors(this.outputs),
      this.options.controllerName ?? CONTROLLER_NAME,
      this.options.proxyNamespace,
    );
    // The stages, in dependency order; each reads only what the ones before it derived.
    const endpointsChanged = this.endpoints.update(inputs, run.changes, run.facts);
    // Before the policies, which read a Service's port names (a sectionName that names none).
    publishServiceFacts(run);
    this.classes.update(run);
    this.policies.update(run);
    this.plugins.updateProxyConfigs(run);
    this.gateways.update(run, this.classes, this.policies);
    publishProxyReportFacts(run);
    this.accessLogs.update(run, this.policies);
    this.telemetry.update(run, this.policies);
    this.assembly.telemetry = this.telemetry;
    this.routes.update(run, this.gateways, this.policies, this.endpoints);
    this.policyAncestors.update(this.policies, this.routes, this.gateways);
    // Whatever uses a plugin is known here; then the plugins, of which only the used are fetched.
    this.pluginUses.update(run, this.gateways, this.routes, this.plugins);
    this.plugins.updateInstallations(run, this.pluginUses);
    this.assembly.update(
      run,
      this.gateways,
      this.routes,
      this.plugins,
      this.endpoints,
      endpointsChanged,
      this.policyAncestors,
      this.accessLogs,
    );
    this.installation.update(run, this.plugins, this.assembly, this.accessLogs);
    this.routeStatuses.update(run, this.routes, this.assembly, this.policyAncestors);
    this.backendTLSStatuses.update(run, this.policies, this.routes, this.gateways, this.policyAncestors);
    if (this.routes.diagnosticsChanged || this.endpoints.diagnosticsChanged || this.previous === EMPTY_SNAPSHOT)
      this.diagnostics = [...this.routes.diagnostics(), ...this.endpoints.diagnostics()];

    // Before the outputs are finished: what it writes after would miss the changes (an incremental run lost it).
    this.xbackendStatuses.update(run, this.routes);
    const { outputs, changes } = run.out.finish();
    this.outputs = outputs;
    this.previous = snapshot;
    this.lastComputed = run.computed;
    const result: TranslateResult = {
      statuses: outputs.statuses,
      xdsIR: { gateways: outputs.gateways, endpoints: outputs.endpoints },
      infraIR: { gateways: outputs.infra },
      pluginFetches: outputs.pluginFetches,
      diagnostics: this.diagnostics,
    };
    return { result, changes };
  }

  /**
   * How many pieces each stage computed in the last translation, by stage prefix (`route:`,
   * `assembly:`, `gateway:` …): what the last change cost, for tests and debugging.
   */
  piecesComputed(): ReadonlyMap<string, number> {
    return this.lastComputed;
  }

  /** The endpoints of a cluster some route uses, as of the last translation. */
  endpointsOf(cluster: string): EndpointIR[] | undefined {
    return this.endpoints.current(cluster);
  }

  /** The route result of the last translation for this route object, if it was translated. */
  routeResult(route: KubeObject): RouteResult | undefined {
    return this.routes.entries.get(objectKey(route.kind, route.metadata.namespace, route.metadata.name))?.result;
  }

  /** Every Service (`namespace/name`) a route of ours sends to in the last translation (for `analyze`). */
  backendServices(): Set<string> {
    const out = new Set<string>();
    for (const entry of this.routes.entries.values())
      for (const c of entry.result?.clusters ?? [])
        if (!c.external && !c.endpointSelector) out.add(`${c.service.namespace}/${c.service.name}`);
    return out;
  }

  /** The BackendTLSPolicies of the last translation: each one's verdict and which won each target (for `explain`). */
  backendTLSIndex(): BackendTLSIndex {
    return this.policies.index;
  }
}

export function translate(snapshot: Snapshot, options: TranslateOptions = {}): TranslateResult {
  return new Translator(options).translate(snapshot);
}
