// Matches and path modifiers the proxy would refuse make their rule invalid (routes/http-matches.ts, routes/http-filters.ts; found by the fuzz test).
import { describe, expect, it } from '@jest/globals';
import {
  cond,
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  irRoutes,
  parent,
  run,
  service,
} from '../builders.js';
import { toGw } from '../route-fixtures.js';

describe('matches and path modifiers the proxy would refuse make their rule invalid (found by the fuzz test)', () => {
  const withRule = (rule: Record<string, unknown>) =>
    run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('svc'),
      endpointSlice('svc'),
      httpRoute('r', { parentRefs: [toGw()], rules: [{ ...rule, backendRefs: [{ name: 'svc', port: 8080 }] }] }),
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
  it('an Exact or PathPrefix path holding "?" or "#" (Envoy refuses it as a path_separated_prefix)', () => {
    for (const [type, value] of [
      ['PathPrefix', '/#'],
      ['PathPrefix', '/a?b'],
      ['Exact', '/a#b'],
    ] as const) {
      const r = withRule({ matches: [{ path: { type, value } }] });
      expect(accepted(r)).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
      expect(accepted(r).message).toBe(
        `spec.rules[0].matches[0].path.value: "${value}" contains "?" or "#", which a request path never does`,
      );
    }
    expect(accepted(withRule({ matches: [{ path: { type: 'RegularExpression', value: '/a?' } }] })).status).toBe(
      'True',
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
