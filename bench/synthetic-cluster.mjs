// Synthetic clusters for benchmarks, shaped like a real multi-tenant one: G Gateways (HTTP,
// HTTPS with a certificate Secret, a listener that selects namespaces by label), R HTTPRoutes
// with realistic matches, filters and weighted backends, two Services and EndpointSlices per
// route, a Namespace per team, and ReferenceGrants for the routes that cross namespaces.
// At 10 000 routes: about 50 000 objects.
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_CERT, OTHER_KEY } from './tls-material.mjs';

const GW = 'gateway.networking.k8s.io/v1';
const b64 = (s) => Buffer.from(s).toString('base64');

export function tlsSecret(g, variant = 0) {
  const [crt, key] = variant % 2 === 0 ? [EXAMPLE_COM_CERT, EXAMPLE_COM_KEY] : [OTHER_CERT, OTHER_KEY];
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `gw-${g}-cert`, namespace: 'infra' },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(crt), 'tls.key': b64(key) },
  };
}

export function syntheticGateway(g, extraListeners = 0) {
  const listeners = [
    {
      name: 'http',
      port: 80,
      protocol: 'HTTP',
      hostname: `*.gw${g}.example.com`,
      allowedRoutes: { namespaces: { from: 'All' } },
    },
    {
      name: 'http-alt',
      port: 8080,
      protocol: 'HTTP',
      allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { exposed: 'true' } } } },
    },
    {
      name: 'https',
      port: 443,
      protocol: 'HTTPS',
      hostname: `*.gw${g}.example.com`,
      tls: { certificateRefs: [{ name: `gw-${g}-cert` }] },
      allowedRoutes: { namespaces: { from: 'All' } },
    },
  ];
  for (let i = 0; i < extraListeners; i++)
    listeners.push({
      name: `extra-${i}`,
      port: 9000 + i,
      protocol: 'HTTP',
      allowedRoutes: { namespaces: { from: 'All' } },
    });
  return {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: {
      name: `gw-${g}`,
      namespace: 'infra',
      generation: 1 + extraListeners,
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: { gatewayClassName: 'turnpike', listeners },
  };
}

export function syntheticNamespace(t, variant = 0) {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: `team-${t}`,
      labels: { exposed: 'true', 'team-id': `t${t}`, ...(variant ? { revision: String(variant) } : {}) },
    },
  };
}

export function syntheticService(r, v, teams, variant = 0) {
  const t = r % teams;
  const ports = [{ name: 'http', port: 8080, protocol: 'TCP' }];
  if (variant % 2 === 1) ports.push({ name: 'metrics', port: 9100, protocol: 'TCP' });
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `app-${r}-${v}`, namespace: `team-${t}` },
    spec: { clusterIP: `10.96.${(r >> 8) % 250}.${r % 250}`, ports },
  };
}

export function syntheticSlice(r, v, teams, endpoints = 3) {
  const t = r % teams;
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `app-${r}-${v}-x`,
      namespace: `team-${t}`,
      labels: { 'kubernetes.io/service-name': `app-${r}-${v}` },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: endpoints }, (_, i) => ({
      addresses: [`10.${(r >> 8) % 250}.${r % 250}.${(v === 'v1' ? 10 : 100) + i}`],
      conditions: { ready: true },
    })),
  };
}

export function syntheticGrant(t, teams, variant = 0) {
  const from = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: `team-${(t + 1) % teams}` }];
  if (variant % 2 === 1)
    from.push({ group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', namespace: `team-${(t + 1) % teams}` });
  return {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name: 'shared', namespace: `team-${t}` },
    spec: { from, to: [{ group: '', kind: 'Service' }] },
  };
}

export function syntheticCluster(routes, gateways = Math.max(1, Math.round(routes / 100))) {
  const teams = Math.max(1, Math.round(routes / 50));
  const objects = [
    {
      apiVersion: GW,
      kind: 'GatewayClass',
      metadata: { name: 'turnpike', generation: 1 },
      spec: { controllerName: 'turnpike.dev/gateway-controller' },
    },
  ];
  for (let g = 0; g < gateways; g++) objects.push(syntheticGateway(g), tlsSecret(g));
  for (let t = 0; t < teams; t++) {
    objects.push(syntheticNamespace(t));
    if (t % 5 === 0) objects.push(syntheticGrant(t, teams));
  }
  for (let r = 0; r < routes; r++) {
    for (const v of ['v1', 'v2']) objects.push(syntheticService(r, v, teams), syntheticSlice(r, v, teams));
    objects.push(syntheticRoute(r, gateways, teams));
  }
  return objects;
}

export function syntheticRoute(r, gateways, teams, variant = 0) {
  const t = r % teams;
  const g = r % gateways;
  // Every tenth route of a team next to a granting one uses the Services of the route before it,
  // which live in the granting team's namespace (route r-1 belongs to team t-1).
  const crossNs = r > 0 && r % 10 === 0 && ((t - 1 + teams) % teams) % 5 === 0;
  const backendNs = crossNs ? `team-${(t - 1 + teams) % teams}` : `team-${t}`;
  const b = (v) => `app-${crossNs ? r - 1 : r}-${v}`;
  return {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: {
      name: `route-${r}`,
      namespace: `team-${t}`,
      generation: 1 + variant,
      creationTimestamp: `2026-01-${String(1 + (r % 28)).padStart(2, '0')}T00:00:00Z`,
    },
    spec: {
      parentRefs: [
        { name: `gw-${g}`, namespace: 'infra', sectionName: r % 3 === 0 ? 'http-alt' : 'http' },
        ...(r % 4 === 0 ? [{ name: `gw-${g}`, namespace: 'infra', sectionName: 'https' }] : []),
      ],
      hostnames: [`app${r}.gw${g}.example.com`],
      rules: [
        {
          matches: [
            {
              path: { type: 'PathPrefix', value: `/api/v${1 + (r % 3)}` },
              headers: [{ name: 'x-tenant', value: `t${r % 7}` }],
            },
            { path: { type: 'Exact', value: `/health${variant}` }, method: 'GET' },
          ],
          filters: [
            {
              type: 'RequestHeaderModifier',
              requestHeaderModifier: { set: [{ name: 'x-route', value: `route-${r}` }], remove: ['x-debug'] },
            },
          ],
          backendRefs: [
            { name: b('v1'), namespace: backendNs, port: 8080, weight: 90 },
            { name: b('v2'), namespace: backendNs, port: 8080, weight: 10 },
          ],
          timeouts: { request: '15s' },
        },
        {
          matches: [{ path: { type: 'PathPrefix', value: '/static' }, queryParams: [{ name: 'v', value: '2' }] }],
          filters: [
            { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/assets' } } },
          ],
          backendRefs: [{ name: b('v1'), namespace: backendNs, port: 8080 }],
        },
      ],
    },
  };
}
