// What routes and Gateways read of a backend Service, as facts narrower than the object. A route
// resolves a backendRef by the Service's ports (number, transport, name); the Gateway's assembly
// picks HTTP/2 for a cluster by the port's appProtocol. A Service every route sends to may be
// relabelled, annotated or given an appProtocol: only a change to what a reader reads may
// re-derive it, so a label no longer re-translates ten thousand routes, and a new appProtocol
// re-assembles the Gateways without re-translating a single route.
import type { Service } from '@turnpike/api';
import type { Inputs } from '../incremental/inputs.js';
import type { TranslationRun } from '../incremental/run.js';
import { getObject } from '../snapshot.js';
import { flat } from '../compact-values.js';

export const servicePortsDependency = (namespace: string, name: string): string =>
  flat(`@service-ports:${namespace}/${name}`);
export const serviceProtocolsDependency = (namespace: string, name: string): string =>
  flat(`@service-protocols:${namespace}/${name}`);

/** A Service port as a route resolves it; appProtocol is deliberately not here (see serviceSpeaksH2). */
export interface ServicePortFact {
  port: number;
  /** TCP, UDP or SCTP (TCP when unset). */
  protocol: string;
  name?: string;
}

/** Per Service object (stored objects do not change), its port facts: every backendRef to it reads them. */
const portFactsOf = new WeakMap<Service, readonly ServicePortFact[]>();

function portFacts(svc: Service | undefined): readonly ServicePortFact[] | undefined {
  if (!svc) return undefined;
  let facts = portFactsOf.get(svc);
  if (!facts) {
    // Shared by every reader: frozen, as the stored objects they come from are.
    facts = Object.freeze(
      (svc.spec?.ports ?? []).map((p) =>
        Object.freeze({
          port: p.port,
          protocol: p.protocol ?? 'TCP',
          ...(p.name !== undefined ? { name: p.name } : {}),
        }),
      ),
    );
    portFactsOf.set(svc, facts);
  }
  return facts;
}

function protocolFacts(svc: Service | undefined): string {
  return JSON.stringify((svc?.spec?.ports ?? []).map((p) => [p.port, p.protocol ?? 'TCP', p.appProtocol ?? '']));
}

/** The ports of a Service (undefined: no such Service), recording that the caller read only those. */
export function servicePorts(inputs: Inputs, namespace: string, name: string): readonly ServicePortFact[] | undefined {
  inputs.depend(servicePortsDependency(namespace, name));
  return portFacts(getObject<Service>(inputs.snapshot, 'Service', namespace, name));
}

/**
 * appProtocol `kubernetes.io/h2c` (and the older `h2c` and `grpc`) on the Service's TCP port: the
 * proxy speaks HTTP/2 without TLS to it (GEP-1911, HTTPRouteBackendProtocolH2C).
 */
export function serviceSpeaksH2(inputs: Inputs, namespace: string, name: string, port: number): boolean {
  inputs.depend(serviceProtocolsDependency(namespace, name));
  const svc = getObject<Service>(inputs.snapshot, 'Service', namespace, name);
  const sp = svc?.spec?.ports?.find((p) => p.port === port && (p.protocol ?? 'TCP') === 'TCP');
  const ap = sp?.appProtocol;
  return ap === 'kubernetes.io/h2c' || ap === 'h2c' || ap === 'grpc';
}

/** Publishes, for every changed Service, which of its facts changed. Runs before the policy and route stages. */
export function publishServiceFacts(run: TranslationRun): void {
  for (const c of run.changedObjects('Service')) {
    const before = c.before as Service | undefined;
    const after = c.after as Service | undefined;
    // A Service that comes or goes changes both (a first translation: 20k of them, nothing to compare).
    if (!before || !after) {
      run.facts.add(servicePortsDependency(c.namespace, c.name));
      run.facts.add(serviceProtocolsDependency(c.namespace, c.name));
      continue;
    }
    if (JSON.stringify(portFacts(before)) !== JSON.stringify(portFacts(after)))
      run.facts.add(servicePortsDependency(c.namespace, c.name));
    if (protocolFacts(before) !== protocolFacts(after)) run.facts.add(serviceProtocolsDependency(c.namespace, c.name));
  }
}
