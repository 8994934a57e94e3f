// XBackend (GEP-4894, gateway.networking.x-k8s.io/v1alpha1 in the v1.7.0 experimental channel): a
// backendRef target that is not a Service: an external hostname, or Pods chosen by labels.
import type { KubeObject } from './meta.js';
import type { PolicyAncestorStatus } from './gateway-api.js';

/** The group of the experimental x-k8s.io kinds. */
export const X_GATEWAY_GROUP = 'gateway.networking.x-k8s.io';

export type XBackendProtocol = 'TCP' | 'HTTP' | 'HTTP2' | 'HTTP11' | 'H2C' | 'MCP' | 'GRPC' | 'WSS';
export type XBackendTLSMode = 'None' | 'ServerOnly' | 'ClientAndServer';

export interface XBackend extends KubeObject {
  spec: {
    type: 'ExternalHostname' | 'EndpointSelector';
    port: { number?: number };
    externalHostname?: { hostname: string };
    endpointSelector?: { matchLabels: Record<string, string> };
    /** As the v1.7.0 CRD has it (no sessionName, no idleTimeout: those are HTTPRoute's, GEP-1619). */
    sessionPersistence?: {
      type?: 'Cookie' | 'Header';
      absoluteTimeout?: string;
      cookie?: { name?: string; path?: string; lifetimeType?: 'Permanent' | 'Session' };
      header?: { name: string };
    };
    protocol?: XBackendProtocol;
    tls?: {
      mode: XBackendTLSMode;
      clientCertificateRef?: { group?: string; kind?: string; name: string; namespace?: string };
      validation?: {
        caCertificateRefs?: { group: string; kind: string; name: string }[];
        wellKnownCACertificates?: string;
        hostname: string;
        subjectAltNames?: { type: 'Hostname' | 'URI'; hostname?: string; uri?: string }[];
      };
    };
  };
  status?: { ancestors?: PolicyAncestorStatus[] };
}
