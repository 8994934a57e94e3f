// Synthetic clusters for benchmarks: G Gateways with several listeners, R HTTPRoutes with
// realistic matches, filters and weighted backends, their Services and EndpointSlices, and
// ReferenceGrants for the routes that cross namespaces.
const GW = 'gateway.networking.k8s.io/v1';

export function syntheticCluster(routes, gateways = Math.max(1, Math.round(routes / 100))) {
  const objects = [
    { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'turnpike', generation: 1 }, spec: { controllerName: 'turnpike.dev/gateway-controller' } },
  ];
  const teams = Math.max(1, Math.round(routes / 50));
  for (let g = 0; g < gateways; g++) {
    objects.push({
      apiVersion: GW, kind: 'Gateway', metadata: { name: `gw-${g}`, namespace: 'infra', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { gatewayClassName: 'turnpike', listeners: [
        { name: 'http', port: 80, protocol: 'HTTP', hostname: `*.gw${g}.example.com`, allowedRoutes: { namespaces: { from: 'All' } } },
        { name: 'http-alt', port: 8080, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
        { name: 'internal', port: 9080, protocol: 'HTTP', hostname: `*.internal.gw${g}`, allowedRoutes: { namespaces: { from: 'All' } } },
      ] },
    });
  }
  for (let t = 0; t < teams; t++) {
    const ns = `team-${t}`;
    for (const v of ['v1', 'v2']) {
      objects.push({ apiVersion: 'v1', kind: 'Service', metadata: { name: `app-${v}`, namespace: ns }, spec: { clusterIP: `10.96.${t % 250}.${v === 'v1' ? 1 : 2}`, ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] } });
      objects.push({
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `app-${v}-x`, namespace: ns, labels: { 'kubernetes.io/service-name': `app-${v}` } },
        addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: [1, 2, 3].map((i) => ({ addresses: [`10.${t % 250}.${i}.${v === 'v1' ? 10 : 20}`], conditions: { ready: true } })),
      });
    }
    if (t % 5 === 0) {
      objects.push({ apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'shared', namespace: ns },
        spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: `team-${(t + 1) % teams}` }], to: [{ group: '', kind: 'Service' }] } });
    }
  }
  for (let r = 0; r < routes; r++) objects.push(syntheticRoute(r, gateways, teams));
  return objects;
}

export function syntheticRoute(r, gateways, teams, variant = 0) {
  const t = r % teams;
  const g = r % gateways;
  const crossNs = r % 10 === 0 && (t - 1 + teams) % teams % 5 === 0;
  const backendNs = crossNs ? `team-${(t - 1 + teams) % teams}` : `team-${t}`;
  return {
    apiVersion: GW, kind: 'HTTPRoute',
    metadata: { name: `route-${r}`, namespace: `team-${t}`, generation: 1 + variant, creationTimestamp: `2026-01-${String(1 + (r % 28)).padStart(2, '0')}T00:00:00Z` },
    spec: {
      parentRefs: [{ name: `gw-${g}`, namespace: 'infra', sectionName: r % 3 === 0 ? 'http-alt' : 'http' }],
      hostnames: [`app${r}.gw${g}.example.com`],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: `/api/v${1 + (r % 3)}` }, headers: [{ name: 'x-tenant', value: `t${r % 7}` }] }, { path: { type: 'Exact', value: `/health${variant}` }, method: 'GET' }],
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-route', value: `route-${r}` }], remove: ['x-debug'] } }],
          backendRefs: [{ name: 'app-v1', namespace: backendNs, port: 8080, weight: 90 }, { name: 'app-v2', namespace: backendNs, port: 8080, weight: 10 }],
          timeouts: { request: '15s' },
        },
        {
          matches: [{ path: { type: 'PathPrefix', value: '/static' }, queryParams: [{ name: 'v', value: '2' }] }],
          filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/assets' } } }],
          backendRefs: [{ name: 'app-v1', namespace: backendNs, port: 8080 }],
        },
      ],
    },
  };
}
