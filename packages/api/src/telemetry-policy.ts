// XTelemetryPolicy (GEP-4768, gateway.networking.x-k8s.io/v1alpha1, Gateway API v1.7.0 experimental):
// a Direct Attached Policy on Gateways that configures their tracing. The fields as the v1.7.0 CRD has
// them (apisx/v1alpha1/xtelemetrypolicy_types.go); GEP-5253 names the attributes `Attribute` may ask for.
import type { HTTPHeader, PolicyAncestorStatus } from './gateway-api.js';
import type { KubeObject } from './meta.js';

/** The experimental channel's group (the x-k8s.io kinds). */
export const TELEMETRY_POLICY_GROUP = 'gateway.networking.x-k8s.io';

export interface TelemetryFraction {
  numerator: number;
  denominator?: number;
}

export interface TelemetryAttribute {
  name: string;
  sourceType: 'Header' | 'Literal' | 'Attribute';
  headerName?: string;
  literalValue?: string;
  attributeKey?: string;
}

export type TelemetryMode = 'Enabled' | 'Disabled' | 'ImplementationDefault';

export interface TelemetryTracing {
  mode?: TelemetryMode;
  provider?: {
    backendRef: { group?: string; kind?: string; name: string; namespace?: string; port?: number };
    headers?: HTTPHeader[];
  };
  samplingRate?: TelemetryFraction;
  parentBasedSampling?: { mode?: TelemetryMode; samplingRate?: TelemetryFraction };
  serviceName?: string;
  spanName?: string;
  attributes?: TelemetryAttribute[];
}

export interface XTelemetryPolicy extends KubeObject {
  spec: { targetRefs: { group: string; kind: string; name: string }[]; tracing?: TelemetryTracing };
  status?: { ancestors?: PolicyAncestorStatus[] };
}
