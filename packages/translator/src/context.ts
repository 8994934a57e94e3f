// Everything a route's translation needs besides the route itself, built once per snapshot.
import type { EndpointSlice, Service } from '@turnpike/api';
import { BackendTLSIndex } from './backend-tls-policies.js';
import { ReferenceGrantIndex } from './reference-grants.js';
import { indexServices, indexSlices } from './routes/backends.js';
import { listObjects, type Snapshot } from './snapshot.js';

export interface TranslationContext {
  snapshot: Snapshot;
  grants: ReferenceGrantIndex;
  services: Map<string, Service>;
  slicesByService: Map<string, EndpointSlice[]>;
  backendTLS: BackendTLSIndex;
}

export function buildContext(snapshot: Snapshot): TranslationContext {
  return {
    snapshot,
    grants: new ReferenceGrantIndex(snapshot),
    services: indexServices(listObjects<Service>(snapshot, 'Service')),
    slicesByService: indexSlices(listObjects<EndpointSlice>(snapshot, 'EndpointSlice')),
    backendTLS: new BackendTLSIndex(snapshot),
  };
}
