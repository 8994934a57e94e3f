// GatewayRouteHostnameIntersectionPrecedence (Gateway API v1.7): routes that intersect to the same
// listener host rank by their own hostnames first (hostnames.ts originalHostnameRank), then by match
// precedence and age; for TLSRoutes the most specific own hostname takes the server name.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import {
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  irRoutes,
  parent,
  route,
  run,
  service,
} from './builders.js';
import { backend, toGw } from './route-fixtures.js';

const OLDER = { creationTimestamp: '2026-01-01T00:00:00Z' };
const NEWER = { creationTimestamp: '2026-01-02T00:00:00Z' };
const prefix = (value: string) => [{ path: { type: 'PathPrefix', value } }];

function withMeta(o: KubeObject, meta: Record<string, unknown>): KubeObject {
  return { ...o, metadata: { ...o.metadata, ...meta } };
}

describe('GatewayRouteHostnameIntersectionPrecedence', () => {
  const objects = (listenerHostname: string, routes: KubeObject[]) => [
    gatewayClass(),
    gateway('gw', [http('l', 80, { hostname: listenerHostname })]),
    service('svc'),
    endpointSlice('svc'),
    ...routes,
  ];

  it('an exact route hostname ranks before an older wildcard one with a longer path, on the same intersected host', () => {
    const r = run(
      objects('abc.example.com', [
        httpRoute(
          'wildcard',
          {
            parentRefs: [toGw()],
            hostnames: ['*.example.com'],
            rules: [{ matches: prefix('/path/prefix'), backendRefs: [backend()] }],
          },
          'apps',
          OLDER,
        ),
        httpRoute(
          'exact',
          {
            parentRefs: [toGw()],
            hostnames: ['abc.example.com'],
            rules: [{ matches: prefix('/'), backendRefs: [backend()] }],
          },
          'apps',
          NEWER,
        ),
      ]),
    );
    const routes = irRoutes(r);
    expect(routes.map((x) => [x.domain, x.source.name])).toEqual([
      ['abc.example.com', 'exact'],
      ['abc.example.com', 'wildcard'],
    ]);
  });

  it('*.example.com ranks before *.com, and either before a route without hostnames', () => {
    const r = run(
      objects('*.example.com', [
        httpRoute(
          'none',
          { parentRefs: [toGw()], rules: [{ matches: prefix('/a/b/c'), backendRefs: [backend()] }] },
          'apps',
          OLDER,
        ),
        httpRoute(
          'com',
          {
            parentRefs: [toGw()],
            hostnames: ['*.com'],
            rules: [{ matches: prefix('/a/b'), backendRefs: [backend()] }],
          },
          'apps',
          OLDER,
        ),
        httpRoute(
          'example',
          {
            parentRefs: [toGw()],
            hostnames: ['*.example.com'],
            rules: [{ matches: prefix('/'), backendRefs: [backend()] }],
          },
          'apps',
          NEWER,
        ),
      ]),
    );
    expect(irRoutes(r).map((x) => x.source.name)).toEqual(['example', 'com', 'none']);
  });

  it('equally specific hostnames fall back to match precedence', () => {
    const r = run(
      objects('abc.example.com', [
        httpRoute(
          'short',
          {
            parentRefs: [toGw()],
            hostnames: ['abc.example.com'],
            rules: [{ matches: prefix('/'), backendRefs: [backend()] }],
          },
          'apps',
          OLDER,
        ),
        httpRoute(
          'long',
          {
            parentRefs: [toGw()],
            hostnames: ['abc.example.com'],
            rules: [{ matches: prefix('/long'), backendRefs: [backend()] }],
          },
          'apps',
          NEWER,
        ),
      ]),
    );
    expect(irRoutes(r).map((x) => x.source.name)).toEqual(['long', 'short']);
  });

  it('GRPCRoutes rank the same way', () => {
    const grpc = (name: string, hostnames: string[], meta: Record<string, unknown>) =>
      withMeta(
        route('GRPCRoute', name, { parentRefs: [toGw()], hostnames, rules: [{ backendRefs: [backend()] }] }),
        meta,
      );
    const r = run(
      objects('abc.example.com', [
        grpc('wildcard', ['*.example.com'], OLDER),
        grpc('exact', ['abc.example.com'], NEWER),
      ]),
    );
    expect(irRoutes(r).map((x) => x.source.name)).toEqual(['exact', 'wildcard']);
  });

  it('a newer TLSRoute with the exact server name takes it from an older wildcard TLSRoute; the older one says why', () => {
    const tls = (name: string, hostnames: string[], meta: Record<string, unknown>) =>
      withMeta(
        route('TLSRoute', name, { parentRefs: [toGw()], hostnames, rules: [{ backendRefs: [backend()] }] }),
        meta,
      );
    const r = run([
      gatewayClass(),
      gateway('gw', [
        {
          name: 'tls',
          port: 443,
          protocol: 'TLS',
          hostname: 'abc.example.com',
          tls: { mode: 'Passthrough' },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ]),
      service('svc'),
      endpointSlice('svc'),
      tls('wildcard', ['*.example.com'], OLDER),
      tls('exact', ['abc.example.com'], NEWER),
    ]);
    const served = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.routes!;
    expect(served.map((x) => [x.source.name, x.hostnames])).toEqual([['exact', ['abc.example.com']]]);
    const overlap = parent(r, 'TLSRoute', 'apps', 'wildcard').conditions.find(
      (c: { type: string }) => c.type === 'RouteRulesOverlap',
    );
    expect(overlap?.message).toContain('TLSRoute/apps/exact names it more specifically and takes them');
  });
});
