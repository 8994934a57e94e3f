import { describe, expect, it } from '@jest/globals';
import { explain, snapshotFromObjects } from '../src/index.js';
import {
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  irRoutes,
  listener,
  parent,
  referenceGrant,
  route,
  run,
  service,
  sr,
  statusOf,
} from './builders.js';

const base = () => [
  gatewayClass(),
  gateway('gw', [http('http', 80, { hostname: '*.example.com' }), http('other', 8080)]),
  service('svc'),
  endpointSlice('svc'),
];
const toGw = (extra: Record<string, unknown> = {}) => ({ name: 'gw', namespace: 'infra', ...extra });
const backend = (name = 'svc', extra: Record<string, unknown> = {}) => ({ name, port: 8080, ...extra });

describe('route attachment', () => {
  it('a sectionName no listener has is NoMatchingParent', () => {
    const r = run([
      ...base(),
      httpRoute('r', { parentRefs: [toGw({ sectionName: 'nope' })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NoMatchingParent');
  });
  it('a port no listener uses is NoMatchingParent; a matching port attaches to that listener only', () => {
    const bad = run([
      ...base(),
      httpRoute('r', { parentRefs: [toGw({ port: 81 })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(sr(parent(bad, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NoMatchingParent');
    const good = run([
      ...base(),
      httpRoute('r', { parentRefs: [toGw({ port: 8080 })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(listener(good, 'infra', 'gw', 'other').attachedRoutes).toBe(1);
    expect(listener(good, 'infra', 'gw', 'http').attachedRoutes).toBe(0);
  });
  it('sectionName and port must both match', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'http', port: 8080 })],
        rules: [{ backendRefs: [backend()] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NoMatchingParent');
  });
  it('hostnames that intersect no listener are NoMatchingListenerHostname', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'http' })],
        hostnames: ['x.other.org'],
        rules: [{ backendRefs: [backend()] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/NoMatchingListenerHostname');
    expect(listener(r, 'infra', 'gw', 'http').attachedRoutes).toBe(0);
  });
  it('the route serves the intersected hostname on a wildcard listener', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'http' })],
        hostnames: ['a.example.com', 'b.other.org'],
        rules: [{ backendRefs: [backend()] }],
      }),
    ]);
    expect(irRoutes(r).map((x) => x.domain)).toEqual(['a.example.com']);
  });
  it('a listener of the Same namespace refuses routes from others: NotAllowedByListeners', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [{ name: 'http', port: 80, protocol: 'HTTP' }]),
      service('svc'),
      httpRoute('r', { parentRefs: [toGw()], rules: [{ backendRefs: [backend()] }] }),
    ]);
    const p = parent(r, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'Accepted')).toBe('False/NotAllowedByListeners');
    expect(p.conditions.find((c: { type: string }) => c.type === 'Accepted').message).toContain(
      'does not allow routes from namespace apps',
    );
  });
  it('a route kind the listener does not allow is NotAllowedByListeners', () => {
    const r = run([
      ...base(),
      route('TCPRoute', 't', { parentRefs: [toGw({ sectionName: 'http' })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(sr(parent(r, 'TCPRoute', 'apps', 't').conditions, 'Accepted')).toBe('False/NotAllowedByListeners');
  });
  it('parents that are not ours get no status entry', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw(), { name: 'foreign', namespace: 'infra' }],
        rules: [{ backendRefs: [backend()] }],
      }),
    ]);
    expect(statusOf(r, 'HTTPRoute', 'apps', 'r').parents).toHaveLength(1);
    expect(statusOf(r, 'HTTPRoute', 'apps', 'r').parents[0].parentRef).toEqual(toGw());
    expect(statusOf(r, 'HTTPRoute', 'apps', 'r').parents[0].controllerName).toBe('turnpike.dev/gateway-controller');
  });
});

describe('backendRefs', () => {
  it('a missing Service is ResolvedRefs=False/BackendNotFound and the rule answers 500', () => {
    const r = run([...base(), httpRoute('r', { parentRefs: [toGw()], rules: [{ backendRefs: [backend('nope')] }] })]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/BackendNotFound');
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('True/Accepted');
    expect(irRoutes(r).every((x) => x.directResponse?.status === 500)).toBe(true);
  });
  it('a backend of an unsupported kind is InvalidKind', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [{ backendRefs: [{ group: 'example.com', kind: 'Bucket', name: 'x' }] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/InvalidKind');
  });
  it('a Service port that does not exist is BackendNotFound with the port in the message', () => {
    const r = run([
      ...base(),
      httpRoute('r', { parentRefs: [toGw()], rules: [{ backendRefs: [{ name: 'svc', port: 9999 }] }] }),
    ]);
    const c = parent(r, 'HTTPRoute', 'apps', 'r').conditions.find((x: { type: string }) => x.type === 'ResolvedRefs');
    expect(c.message).toBe('spec.rules[0].backendRefs[0]: Service apps/svc has no TCP port 9999');
  });
  it('a backend in another namespace needs a ReferenceGrant; deleting the grant revokes access', () => {
    const objs = [
      ...base(),
      service('db', 'data'),
      endpointSlice('db', 'data'),
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [{ backendRefs: [{ name: 'db', namespace: 'data', port: 8080 }] }],
      }),
    ];
    const grant = referenceGrant(
      'g',
      'data',
      [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }],
      [{ group: '', kind: 'Service' }],
    );
    const withGrant = run([...objs, grant]);
    expect(sr(parent(withGrant, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(withGrant.xdsIR.gateways.get('infra/gw')?.clusters.map((c) => c.name)).toEqual(['data/db/8080']);
    const revoked = run(objs);
    expect(sr(parent(revoked, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
    expect(revoked.xdsIR.gateways.get('infra/gw')?.clusters).toEqual([]);
  });
  it('a grant for another kind of referrer does not apply', () => {
    const grant = referenceGrant(
      'g',
      'data',
      [{ group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', namespace: 'apps' }],
      [{ group: '', kind: 'Service' }],
    );
    const r = run([
      ...base(),
      service('db', 'data'),
      grant,
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [{ backendRefs: [{ name: 'db', namespace: 'data', port: 8080 }] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/RefNotPermitted');
  });
  it('a partly invalid rule keeps the invalid share as 500s by weight', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [{ backendRefs: [backend('svc', { weight: 3 }), backend('nope', { weight: 1 })] }],
      }),
    ]);
    const [x] = irRoutes(r);
    expect(x.backends).toEqual([{ cluster: 'apps/svc/8080', weight: 3 }]);
    expect(x.invalidWeight).toBe(1);
  });
  it('the endpoints of a served cluster come from its EndpointSlices, sorted, beside the Gateway IR', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('svc'),
      endpointSlice('svc', 'apps', ['10.1.0.2', '10.1.0.1']),
      httpRoute('r', { parentRefs: [toGw()], rules: [{ backendRefs: [backend()] }] }),
    ]);
    expect(r.xdsIR.gateways.get('infra/gw')?.clusters.map((c) => c.name)).toEqual(['apps/svc/8080']);
    expect(r.xdsIR.endpoints.get('apps/svc/8080')).toEqual([
      { address: '10.1.0.1', port: 8080, ready: true },
      { address: '10.1.0.2', port: 8080, ready: true },
    ]);
    expect(r.xdsIR.endpoints.sortedKeys()).toEqual(['apps/svc/8080']);
  });
  it('a rule with no backendRefs answers 500', () => {
    const r = run([...base(), httpRoute('r', { parentRefs: [toGw({ sectionName: 'other' })], rules: [{}] })]);
    expect(irRoutes(r)[0].directResponse).toEqual({ status: 500 });
  });
  it('a backendRef filter the proxy cannot apply per backend makes that backend invalid, and explain says why', () => {
    const objs = [
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [
          {
            backendRefs: [
              backend('svc', { filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }] }),
            ],
          },
        ],
      }),
    ];
    const r = run(objs);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/UnsupportedValue');
    const e = explain(snapshotFromObjects(objs), 'HTTPRoute', 'apps', 'r');
    expect(e.lines.join('\n')).toContain(
      'spec.rules[0].backendRefs[0] Service apps/svc:8080 weight 1: UnsupportedValue: spec.rules[0].backendRefs[0].filters[0]: RequestRedirect is not supported on a backendRef',
    );
  });
  it('a weight of 0 sends no traffic to that backend', () => {
    const r = run([
      ...base(),
      service('b'),
      endpointSlice('b'),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [{ backendRefs: [backend('svc', { weight: 0 }), backend('b', { weight: 1 })] }],
      }),
    ]);
    expect(irRoutes(r)[0].backends).toEqual([{ cluster: 'apps/b/8080', weight: 1 }]);
  });
  it('valid backends without a ready endpoint answer 503', () => {
    const r = run([
      ...base(),
      service('empty'),
      httpRoute('r', { parentRefs: [toGw({ sectionName: 'other' })], rules: [{ backendRefs: [backend('empty')] }] }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('True/ResolvedRefs');
    expect(irRoutes(r)[0].directResponse).toEqual({ status: 503 });
  });
});

describe('HTTPRoute rules', () => {
  it('an invalid regular expression makes its rule invalid: PartiallyInvalid when other rules are valid', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [
          { matches: [{ path: { type: 'PathPrefix', value: '/ok' } }], backendRefs: [backend()] },
          { matches: [{ path: { type: 'RegularExpression', value: '*bad' } }], backendRefs: [backend()] },
        ],
      }),
    ]);
    const p = parent(r, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(p.conditions, 'PartiallyInvalid')).toBe('True/UnsupportedValue');
    expect(p.conditions.find((c: { type: string }) => c.type === 'PartiallyInvalid').message).toContain(
      'spec.rules[1].matches[0].path.value',
    );
    const byRule = Object.fromEntries(irRoutes(r).map((x) => [x.source.rule, x]));
    expect(byRule[0].backends).toBeDefined();
    // The uncompilable match serves nothing (it cannot be expressed, and must not become `/`).
    expect(byRule[1]).toBeUndefined();
  });
  it("an invalid match only affects its own rule: an older route's broken regex does not shadow another route's / on the host", () => {
    const older = { creationTimestamp: '2020-01-01T00:00:00Z' };
    const r = run([
      ...base(),
      httpRoute(
        'broken',
        {
          parentRefs: [toGw({ sectionName: 'other' })],
          rules: [
            {
              matches: [
                { path: { type: 'RegularExpression', value: '(?=x)' } },
                { path: { type: 'Exact', value: '/mine' } },
              ],
              backendRefs: [backend()],
            },
          ],
        },
        'apps',
        older,
      ),
      httpRoute('site', { parentRefs: [toGw({ sectionName: 'other' })], rules: [{ backendRefs: [backend()] }] }),
    ]);
    const routes = irRoutes(r);
    // The broken rule's valid match answers 500; nothing else of it is served.
    expect(routes.filter((x) => x.source.name === 'broken').map((x) => [x.match.path, x.directResponse])).toEqual([
      [{ type: 'Exact', value: '/mine' }, { status: 500 }],
    ]);
    const slash = routes.find((x) => x.match.path.type === 'PathPrefix' && x.match.path.value === '/')!;
    expect(slash.source.name).toBe('site');
    expect(slash.backends).toBeDefined();
  });
  it('a route whose every rule is invalid is Accepted=False/UnsupportedValue and its matches answer 500 (fail closed)', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'gopher' } }] }],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/UnsupportedValue');
    expect(irRoutes(r).map((x) => x.directResponse)).toEqual([{ status: 500 }]);
  });
  it('header modifiers reject invalid names and the Host header', () => {
    for (const name of ['bad:name', 'host', '']) {
      const r = run([
        ...base(),
        httpRoute('r', {
          parentRefs: [toGw()],
          rules: [
            {
              filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name, value: 'v' }] } }],
              backendRefs: [backend()],
            },
          ],
        }),
      ]);
      expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('False/UnsupportedValue');
    }
  });
  it('a redirect rule becomes a redirect in the IR', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', statusCode: 301 } }] }],
      }),
    ]);
    expect(irRoutes(r)[0].redirect).toEqual({ scheme: 'https', statusCode: 301 });
  });
  it('filters, timeouts and mirrors reach the IR', () => {
    const r = run([
      ...base(),
      service('mirror'),
      httpRoute('r', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [
          {
            filters: [
              {
                type: 'RequestHeaderModifier',
                requestHeaderModifier: { add: [{ name: 'x-a', value: '1' }], remove: ['x-b'] },
              },
              {
                type: 'URLRewrite',
                urlRewrite: {
                  hostname: 'internal.test',
                  path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' },
                },
              },
              { type: 'RequestMirror', requestMirror: { backendRef: { name: 'mirror', port: 8080 }, percent: 25 } },
            ],
            timeouts: { request: '10s' },
            backendRefs: [backend()],
          },
        ],
      }),
    ]);
    const [x] = irRoutes(r);
    expect(x.filters.requestHeaders).toEqual({ set: [], add: [{ name: 'x-a', value: '1' }], remove: ['x-b'] });
    expect(x.filters.rewrite).toEqual({
      hostname: 'internal.test',
      path: { type: 'ReplacePrefixMatch', value: '/v2' },
    });
    expect(x.filters.mirrors).toEqual([{ cluster: 'apps/mirror/8080', percent: 25 }]);
    expect(x.timeouts).toEqual({ request: '10s' });
  });
  it('a mirror to a missing Service is ResolvedRefs=False', () => {
    const r = run([
      ...base(),
      httpRoute('r', {
        parentRefs: [toGw()],
        rules: [
          {
            filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'nope', port: 80 } } }],
            backendRefs: [backend()],
          },
        ],
      }),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'ResolvedRefs')).toBe('False/BackendNotFound');
  });
});

describe('match precedence (httproute_types.go Matches)', () => {
  it('orders Exact, then longest prefix, then method, headers, query params, then oldest route', () => {
    const rules = (ms: Record<string, unknown>[]) => ms.map((m) => ({ matches: [m], backendRefs: [backend()] }));
    const r = run([
      ...base(),
      httpRoute(
        'young',
        { parentRefs: [toGw({ sectionName: 'other' })], rules: rules([{ path: { type: 'PathPrefix', value: '/a' } }]) },
        'apps',
        { creationTimestamp: '2026-01-02T00:00:00Z' },
      ),
      httpRoute(
        'old',
        {
          parentRefs: [toGw({ sectionName: 'other' })],
          rules: rules([
            { path: { type: 'PathPrefix', value: '/a' } },
            { path: { type: 'PathPrefix', value: '/a' }, headers: [{ name: 'x', value: '1' }] },
            { path: { type: 'PathPrefix', value: '/a' }, method: 'GET' },
            { path: { type: 'PathPrefix', value: '/a/b' } },
            { path: { type: 'Exact', value: '/a' } },
            { path: { type: 'PathPrefix', value: '/a' }, queryParams: [{ name: 'q', value: '1' }] },
          ]),
        },
        'apps',
        { creationTimestamp: '2026-01-01T00:00:00Z' },
      ),
    ]);
    expect(irRoutes(r).map((x) => `${x.source.name}#${x.source.rule}`)).toEqual([
      'old#4',
      'old#3',
      'old#2',
      'old#1',
      'old#5',
      'old#0',
      'young#0',
    ]);
  });
});

describe('L4 routes', () => {
  it('TCP routes on one listener are all accepted; only the oldest carries traffic', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [{ name: 'tcp', port: 9000, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } }]),
      service('svc', 'apps', [{ name: 'tcp', port: 9000, protocol: 'TCP' }]),
      {
        ...route('TCPRoute', 'b', { parentRefs: [toGw()], rules: [{ backendRefs: [{ name: 'svc', port: 9000 }] }] }),
        metadata: { name: 'b', namespace: 'apps', creationTimestamp: '2026-01-02T00:00:00Z' },
      },
      {
        ...route('TCPRoute', 'a', { parentRefs: [toGw()], rules: [{ backendRefs: [{ name: 'svc', port: 9000 }] }] }),
        metadata: { name: 'a', namespace: 'apps', creationTimestamp: '2026-01-03T00:00:00Z' },
      },
    ]);
    expect(sr(parent(r, 'TCPRoute', 'apps', 'a').conditions, 'Accepted')).toBe('True/Accepted');
    expect(sr(parent(r, 'TCPRoute', 'apps', 'b').conditions, 'Accepted')).toBe('True/Accepted');
    expect(listener(r, 'infra', 'gw', 'tcp').attachedRoutes).toBe(2);
    const routes = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.routes!;
    expect(routes.map((x) => x.source.name)).toEqual(['b']);
  });
  it('a UDPRoute to a Service port of another protocol is BackendNotFound', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [{ name: 'udp', port: 53, protocol: 'UDP', allowedRoutes: { namespaces: { from: 'All' } } }]),
      service('svc'),
      route('UDPRoute', 'u', { parentRefs: [toGw()], rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }] }),
    ]);
    expect(sr(parent(r, 'UDPRoute', 'apps', 'u').conditions, 'ResolvedRefs')).toBe('False/BackendNotFound');
  });
});

describe('GRPCRoute', () => {
  it('service and method become an exact HTTP/2 path; header matches carry over', () => {
    const r = run([
      ...base(),
      route('GRPCRoute', 'g', {
        parentRefs: [toGw({ sectionName: 'other' })],
        rules: [
          {
            matches: [{ method: { service: 'pkg.Svc', method: 'Get' }, headers: [{ name: 'x', value: 'y' }] }],
            backendRefs: [backend()],
          },
        ],
      }),
    ]);
    const [x] = irRoutes(r);
    expect(x.match.path).toEqual({ type: 'Exact', value: '/pkg.Svc/Get' });
    expect(x.match.headers).toEqual([{ name: 'x', type: 'Exact', value: 'y' }]);
  });

  describe('regular expressions are RE2, as Envoy runs them', () => {
    const withRegex = (value: string) =>
      run([
        ...base(),
        httpRoute('r', {
          parentRefs: [toGw({ sectionName: 'other' })],
          rules: [{ matches: [{ path: { type: 'RegularExpression', value } }], backendRefs: [backend()] }],
        }),
      ]);
    it('RE2 syntax JavaScript lacks is accepted: (?i), (?i:…), (?P<name>…)', () => {
      for (const re of ['/(?i)api/.*', '/(?i:v1|v2)/items', '/users/(?P<id>[0-9]+)']) {
        expect([re, sr(parent(withRegex(re), 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')]).toEqual([
          re,
          'True/Accepted',
        ]);
      }
    });
    it('JavaScript-only syntax RE2 lacks is refused, naming the construct: lookaround, backreferences, possessive quantifiers', () => {
      for (const [re, why] of [
        ['/a(?=b)', 'lookahead'],
        ['/(a)\\1', 'backreferences'],
        ['/a++', 'possessive'],
      ] as const) {
        const c = parent(withRegex(re), 'HTTPRoute', 'apps', 'r').conditions.find(
          (x: { type: string }) => x.type === 'Accepted',
        );
        expect([re, c.status, c.message]).toEqual([re, 'False', expect.stringContaining(why)]);
        expect(c.message).toContain('spec.rules[0].matches[0].path.value');
      }
    });
  });
});
