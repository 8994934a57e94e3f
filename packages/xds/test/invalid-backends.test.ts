// The share of invalid backends answers 500 in the data plane, as the IR and the Gateway API say:
// it names a cluster that is never defined and the route answers a missing cluster with 500.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import {
  decodeMessage,
  encodeMessage,
  envoyResourcesFor,
  INVALID_BACKEND_CLUSTER,
  INVALID_HTTP_BACKEND,
} from '../src/index.js';

const objects = [
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'turnpike' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'turnpike',
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
        { name: 'tcp', port: 9000, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } },
      ],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'good', namespace: 'apps' },
    spec: { ports: [{ name: 'http', port: 8080 }] },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'split', namespace: 'apps' },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http' }],
      rules: [
        {
          backendRefs: [
            { name: 'good', port: 8080, weight: 3 },
            { name: 'missing', port: 8080, weight: 1 },
          ],
        },
      ],
    },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1alpha2',
    kind: 'TCPRoute',
    metadata: { name: 'tcp', namespace: 'apps' },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'tcp' }],
      rules: [
        {
          backendRefs: [
            { name: 'good', port: 8080 },
            { name: 'missing', port: 8080 },
          ],
        },
      ],
    },
  },
] as unknown as KubeObject[];

describe('invalid backend share', () => {
  const result = new Translator().translate(snapshotFromObjects(objects));
  const res = envoyResourcesFor(
    result.xdsIR.gateways.get('infra/gw')!,
    () => undefined,
    undefined,
    result.xdsIR.endpoints,
  );

  it('an HTTP route sends the invalid share to an undefined cluster and answers a missing cluster with 500', () => {
    const rc = res.routes.find((r) => r.virtual_hosts?.some((v) => v.routes?.length))!;
    const action = rc.virtual_hosts![0]!.routes![0]!.route!;
    expect(action.weighted_clusters!.clusters).toEqual([
      expect.objectContaining({ name: 'apps/good/8080', weight: { value: 3 } }),
      expect.objectContaining({ name: INVALID_HTTP_BACKEND, weight: { value: 1 } }),
    ]);
    expect(action.cluster_not_found_response_code).toBe('INTERNAL_SERVER_ERROR');
    expect(res.clusters.map((c) => c.name)).not.toContain(INVALID_HTTP_BACKEND);
    // And it survives the wire format.
    const back = decodeMessage(
      'envoy.config.route.v3.RouteConfiguration',
      encodeMessage('envoy.config.route.v3.RouteConfiguration', rc),
    ) as typeof rc;
    expect(back.virtual_hosts![0]!.routes![0]!.route!.cluster_not_found_response_code).toBe('INTERNAL_SERVER_ERROR');
  });

  it('a TCP route sends the invalid share to a defined cluster with no endpoints (the connection is closed)', () => {
    expect(res.clusters.find((c) => c.name === INVALID_BACKEND_CLUSTER)).toMatchObject({
      type: 'STATIC',
      load_assignment: { endpoints: [] },
    });
  });
});
