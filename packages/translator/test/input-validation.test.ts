// Inputs the schema or the proxy would refuse are reported on the object, naming the field, and
// never reach the proxy: the rule answers 500, the listener is not accepted.
import { describe, expect, it } from '@jest/globals';
import {
  cond,
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  irRoutes,
  listener,
  namespace,
  parent,
  run,
  service,
  tlsSecret,
} from './builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from './tls-fixtures.js';

const toGw = { name: 'gw', namespace: 'infra' };
const withFilter = (filter: Record<string, unknown>) =>
  run([
    gatewayClass(),
    gateway('gw', [http()]),
    service('svc'),
    endpointSlice('svc'),
    httpRoute('r', {
      parentRefs: [toGw],
      rules: [
        { filters: [filter], backendRefs: [{ name: 'svc', port: 8080 }] },
        { matches: [{ path: { value: '/ok' } }], backendRefs: [{ name: 'svc', port: 8080 }] },
      ],
    }),
  ]);

describe('header values are validated before they reach the proxy', () => {
  it('a RequestHeaderModifier value with CR or LF makes its rule invalid and answer 500; the other rule serves', () => {
    const r = withFilter({
      type: 'RequestHeaderModifier',
      requestHeaderModifier: { set: [{ name: 'x-a', value: 'ok\r\nx-injected: 1' }] },
    });
    const c = cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'PartiallyInvalid');
    expect(c).toMatchObject({ status: 'True', reason: 'UnsupportedValue' });
    expect(c!.message).toContain('spec.rules[0].filters[0].requestHeaderModifier.set[0].value');
    const routes = irRoutes(r);
    expect(routes.find((x) => x.source.rule === 0).directResponse).toEqual({ status: 500 });
    expect(routes.find((x) => x.source.rule === 1).backends).toHaveLength(1);
    expect(JSON.stringify(r.xdsIR)).not.toContain('x-injected');
  });
  it('a ResponseHeaderModifier value with NUL is refused the same way', () => {
    const r = withFilter({
      type: 'ResponseHeaderModifier',
      responseHeaderModifier: { add: [{ name: 'x-a', value: 'a\u0000b' }] },
    });
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'PartiallyInvalid')!.message).toContain(
      'responseHeaderModifier.add[0].value',
    );
  });
  it('tabs, spaces and non-ASCII text are valid values', () => {
    const r = withFilter({
      type: 'RequestHeaderModifier',
      requestHeaderModifier: { set: [{ name: 'x-a', value: 'a\tb c é' }] },
    });
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'PartiallyInvalid')).toBeUndefined();
  });
});

describe('contradictory or incomplete filters are invalid, not reinterpreted', () => {
  it('urlRewrite.path with both replaceFullPath and replacePrefixMatch', () => {
    const r = withFilter({
      type: 'URLRewrite',
      urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/a', replaceFullPath: '/b' } },
    });
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'PartiallyInvalid')!.message).toBe(
      'Invalid rules answer 500: spec.rules[0].filters[0].urlRewrite.path.replaceFullPath must not be set when type is ReplacePrefixMatch',
    );
  });
  it('a filter whose type does not match the field it sets', () => {
    const r = withFilter({
      type: 'RequestHeaderModifier',
      requestHeaderModifier: { set: [{ name: 'x', value: 'y' }] },
      urlRewrite: { hostname: 'a.example.com' },
    });
    expect(cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'PartiallyInvalid')!.message).toContain(
      'spec.rules[0].filters[0].urlRewrite must not be set when type is RequestHeaderModifier',
    );
    expect(irRoutes(r).find((x) => x.source.rule === 0).directResponse).toEqual({ status: 500 });
  });
});

describe('label selectors are validated like the API server does', () => {
  const selecting = (selector: Record<string, unknown>) =>
    run([
      gatewayClass(),
      namespace('apps', { team: 'a' }),
      gateway('gw', [
        http('sel', 80, { allowedRoutes: { namespaces: { from: 'Selector', selector } } }),
        http('ok', 8080),
      ]),
    ]);
  it.each([
    [
      { matchExpressions: [{ key: 'team', operator: 'In' }] },
      'spec.listeners[0].allowedRoutes.namespaces.selector.matchExpressions[0].values must not be empty with operator In',
    ],
    [
      { matchExpressions: [{ key: 'team', operator: 'Exists', values: ['a'] }] },
      'selector.matchExpressions[0].values must be empty with operator Exists',
    ],
    [
      { matchExpressions: [{ key: 'team', operator: 'Equals', values: ['a'] }] },
      'selector.matchExpressions[0].operator: "Equals" is not one of In, NotIn, Exists, DoesNotExist',
    ],
    [{ matchLabels: { 'bad key!': 'a' } }, 'selector.matchLabels: "bad key!" is not a valid label key'],
    [{ matchLabels: { team: 'has space' } }, 'selector.matchLabels: "has space" is not a valid label value'],
  ])('%j: the listener is not accepted, and the message names the field', (selector, message) => {
    const r = selecting(selector);
    const l = listener(r, 'infra', 'gw', 'sel');
    expect(cond(l.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(cond(l.conditions, 'Accepted')!.message).toContain(message);
    expect(cond(listener(r, 'infra', 'gw', 'ok').conditions, 'Accepted')!.status).toBe('True');
  });
  it('a valid selector with a prefixed key is accepted', () => {
    const l = listener(
      selecting({
        matchLabels: { 'example.com/team': 'a' },
        matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }],
      }),
      'infra',
      'gw',
      'sel',
    );
    expect(cond(l.conditions, 'Accepted')!.status).toBe('True');
  });
});

describe('OverlappingTLSConfig for overlapping hostnames', () => {
  const https = (name: string, hostname?: string, port = 443) => ({
    name,
    port,
    protocol: 'HTTPS',
    ...(hostname ? { hostname } : {}),
    tls: { certificateRefs: [{ name: 'cert' }] },
    allowedRoutes: { namespaces: { from: 'All' } },
  });
  it('a wildcard and a hostname it covers on one port: both listeners say OverlappingHostnames', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [
        https('wild', '*.example.com'),
        https('one', 'a.example.com'),
        https('other', 'b.test'),
        https('elsewhere', 'c.example.com', 8443),
      ]),
    ]);
    for (const l of ['wild', 'one']) {
      const c = cond(listener(r, 'infra', 'gw', l).conditions, 'OverlappingTLSConfig');
      expect(c).toMatchObject({ status: 'True', reason: 'OverlappingHostnames' });
      expect(c!.message).toContain('"wild" (*.example.com) and "one" (a.example.com) overlap');
    }
    expect(cond(listener(r, 'infra', 'gw', 'other').conditions, 'OverlappingTLSConfig')).toBeUndefined();
    expect(cond(listener(r, 'infra', 'gw', 'elsewhere').conditions, 'OverlappingTLSConfig')).toBeUndefined();
  });
  it('a listener without hostname (the catch-all) does not overlap; HTTP listeners never do', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [https('any'), https('one', 'a.example.com'), http('plain', 443, { hostname: '*.example.com' })]),
    ]);
    expect(cond(listener(r, 'infra', 'gw', 'any').conditions, 'OverlappingTLSConfig')).toBeUndefined();
  });
});

describe('an L4 route is served with exactly one rule', () => {
  const tcpGw = () =>
    gateway('gw', [{ name: 'tcp', port: 9000, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } }]);
  const tcpRoute = (name: string, rules: unknown[], created: string) => ({
    apiVersion: 'gateway.networking.k8s.io/v1alpha2',
    kind: 'TCPRoute',
    metadata: { name, namespace: 'apps', generation: 1, creationTimestamp: created },
    spec: { parentRefs: [toGw], rules },
  });
  it('two rules: the route is not accepted, says why, and does not take the listener from a newer valid route', () => {
    const rule = { backendRefs: [{ name: 'svc', port: 8080 }] };
    const r = run([
      gatewayClass(),
      tcpGw(),
      service('svc'),
      endpointSlice('svc'),
      tcpRoute('old', [rule, rule], '2026-01-01T00:00:00Z'),
      tcpRoute('new', [rule], '2026-01-02T00:00:00Z'),
    ]);
    expect(cond(parent(r, 'TCPRoute', 'apps', 'old').conditions, 'Accepted')).toMatchObject({
      status: 'False',
      reason: 'UnsupportedValue',
      message: 'spec.rules: a TCPRoute is served with one rule (its rules have no matches to choose between); it has 2',
    });
    const served = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.routes!;
    expect(served.map((x) => x.source.name)).toEqual(['new']);
    expect(served[0]!.backends).toEqual([{ cluster: 'apps/svc/8080', weight: 1 }]);
  });
  it('no rule at all is refused the same way', () => {
    const r = run([gatewayClass(), tcpGw(), tcpRoute('empty', [], '2026-01-01T00:00:00Z')]);
    expect(cond(parent(r, 'TCPRoute', 'apps', 'empty').conditions, 'Accepted')).toMatchObject({
      status: 'False',
      message: 'spec.rules must hold one rule',
    });
  });
});

describe('multiple certificateRefs, some invalid: the valid ones serve, the invalid ones are named', () => {
  const https = (refs: string[]) =>
    gateway('gw', [
      {
        name: 'https',
        port: 443,
        protocol: 'HTTPS',
        hostname: 'example.com',
        tls: { certificateRefs: refs.map((name) => ({ name })) },
        allowedRoutes: { namespaces: { from: 'All' } },
      },
    ]);
  it('one valid and one missing Secret: Programmed, ResolvedRefs=False naming the missing one, the valid certificate served', () => {
    const r = run([
      gatewayClass(),
      tlsSecret('good', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
      https(['good', 'missing']),
    ]);
    const l = listener(r, 'infra', 'gw', 'https');
    expect(cond(l.conditions, 'Programmed')!.status).toBe('True');
    expect(cond(l.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidCertificateRef' });
    expect(cond(l.conditions, 'ResolvedRefs')!.message).toBe(
      'spec.listeners[0].tls.certificateRefs[1]: Secret infra/missing not found; serving the other 1 certificate(s)',
    );
    const tls = r.xdsIR.gateways.get('infra/gw')!.ports[0]!.listeners[0]!.tls!;
    expect(tls.certificates).toEqual(['infra/good']);
  });
  it('every reference invalid: nothing to serve, the listener is not programmed and both are named', () => {
    const r = run([gatewayClass(), https(['gone', 'missing'])]);
    const l = listener(r, 'infra', 'gw', 'https');
    expect(cond(l.conditions, 'Programmed')!.status).toBe('False');
    expect(cond(l.conditions, 'ResolvedRefs')!.message).toBe(
      'spec.listeners[0].tls.certificateRefs[0]: Secret infra/gone not found; spec.listeners[0].tls.certificateRefs[1]: Secret infra/missing not found',
    );
    expect(r.xdsIR.gateways.get('infra/gw')!.ports).toEqual([]);
  });
});

describe('matches and path modifiers the proxy would refuse make their rule invalid (found by the fuzz test)', () => {
  const withRule = (rule: Record<string, unknown>) =>
    run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('svc'),
      endpointSlice('svc'),
      httpRoute('r', { parentRefs: [toGw], rules: [{ ...rule, backendRefs: [{ name: 'svc', port: 8080 }] }] }),
    ]);
  const accepted = (r: ReturnType<typeof run>) => cond(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')!;
  it('a header match or query parameter match without a valid name', () => {
    expect(accepted(withRule({ matches: [{ headers: [{ name: '', value: 'a' }] }] })).message).toBe(
      'spec.rules[0].matches[0].headers[0].name: "" is not a valid HTTP header name',
    );
    expect(accepted(withRule({ matches: [{ queryParams: [{ name: 'a b', value: 'a' }] }] })).message).toBe(
      'spec.rules[0].matches[0].queryParams[0].name: "a b" is not a valid query parameter name',
    );
  });
  it('an empty regular expression', () => {
    expect(accepted(withRule({ matches: [{ path: { type: 'RegularExpression', value: '' } }] })).message).toContain(
      'a regular expression must not be empty',
    );
  });
  it('a rewrite or redirect path with control characters', () => {
    const r = withRule({
      filters: [
        { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/a\r\nb' } } },
      ],
    });
    expect(accepted(r)).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(accepted(r).message).toContain('urlRewrite.path.replacePrefixMatch: "/a\\r\\nb" holds control characters');
    expect(irRoutes(r)[0].directResponse).toEqual({ status: 500 });
  });
});
