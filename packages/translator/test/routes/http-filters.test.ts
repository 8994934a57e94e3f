// Filters (routes/http-filters.ts): header values before they reach the proxy, and contradictory or incomplete filters, which are invalid, not reinterpreted.
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

const withFilter = (filter: Record<string, unknown>) =>
  run([
    gatewayClass(),
    gateway('gw', [http()]),
    service('svc'),
    endpointSlice('svc'),
    httpRoute('r', {
      parentRefs: [toGw()],
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
