// Everything a route's translation needs besides the route itself. Every lookup goes through
// `inputs` or through a derived fact, so the route's memo entry knows what it depends on.
import type { ClusterIR } from '@turnpike/api';
import type { BackendTLSModel } from './policies/backend-tls-policies.js';
import type { Inputs } from './incremental/inputs.js';

export interface TranslationContext {
  inputs: Inputs;
  /** The winning BackendTLSPolicy for a Service port (a derived fact of the policy stage). */
  backendTLS(namespace: string, service: string, portName: string | undefined): BackendTLSModel | undefined;
  /** BackendTLSPolicies (`namespace/name`) whose sectionName names no port of the Service: not attached. */
  detachedTLS(namespace: string, service: string): string[];
  /** Does the cluster have a ready endpoint? (a derived fact of the endpoint stage). */
  clusterReady(cluster: ClusterIR): boolean;
}

/** What building a Gateway reads: the inputs, and the BackendTLSPolicies of the Services its auth filters call. */
export type GatewayContext = Pick<TranslationContext, 'inputs' | 'backendTLS'> &
  Partial<Pick<TranslationContext, 'detachedTLS'>>;
