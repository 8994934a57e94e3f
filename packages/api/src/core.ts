// The core Kubernetes kinds the translator reads, reduced to the fields it uses.
import type { KubeObject, LabelSelector } from './meta.js';

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
  appProtocol?: string;
}

export interface Service extends KubeObject {
  spec: {
    type?: string;
    clusterIP?: string;
    /** Every ClusterIP (dual stack: one per family), the first being clusterIP. */
    clusterIPs?: string[];
    ports?: ServicePort[];
    selector?: Record<string, string>;
    externalName?: string;
  };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

export interface EndpointSlice extends KubeObject {
  addressType: string;
  ports?: { name?: string; port?: number; protocol?: string; appProtocol?: string }[];
  endpoints?: {
    addresses: string[];
    conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
    zone?: string;
  }[];
}

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

export interface Namespace extends KubeObject {
  spec?: unknown;
}

export type { LabelSelector };
