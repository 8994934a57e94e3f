// HTTPRouteBackendURLRewrite (routes/backend-url-rewrite.ts): a backendRef's path rewrite is served
// as the route's when every backend that takes traffic rewrites alike; otherwise the rule is refused.
import { describe, expect, it } from '@jest/globals';
import { httpRoute, irRoutes, parent, run, service, sr } from '../builders.js';
import { backend, base, toGw } from '../route-fixtures.js';

const fullPath = (value: string) => ({
  type: 'URLRewrite',
  urlRewrite: { path: { type: 'ReplaceFullPath', replaceFullPath: value } },
});
const prefixPath = (value: string) => ({
  type: 'URLRewrite',
  urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: value } },
});
const rule = (backendRefs: unknown[], extra: Record<string, unknown> = {}) => ({
  matches: [{ path: { type: 'PathPrefix', value: '/prefix' } }],
  backendRefs,
  ...extra,
});
const translate = (rules: unknown[]) =>
  run([...base(), service('other'), httpRoute('r', { parentRefs: [toGw({ sectionName: 'other' })], rules })]);

describe('HTTPRouteBackendURLRewrite', () => {
  it('one backendRef with ReplacePrefixMatch: the route rewrites the path, the backend keeps its other filters', () => {
    const r = translate([
      rule([
        backend('svc', {
          filters: [
            {
              type: 'URLRewrite',
              urlRewrite: {
                hostname: 'b.test',
                path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/rewritten-prefix' },
              },
            },
          ],
        }),
      ]),
    ]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('True/Accepted');
    const [x] = irRoutes(r);
    expect(x.filters.rewrite).toEqual({ path: { type: 'ReplacePrefixMatch', value: '/rewritten-prefix' } });
    expect(x.backends[0].filters).toEqual({ rewrite: { hostname: 'b.test' } });
  });

  it("two weighted backendRefs with the same ReplaceFullPath: served as the route's rewrite", () => {
    const r = translate([
      rule([backend('svc', { filters: [fullPath('/full')] }), backend('other', { filters: [fullPath('/full')] })]),
    ]);
    const [x] = irRoutes(r);
    expect(x.filters.rewrite).toEqual({ path: { type: 'ReplaceFullPath', value: '/full' } });
    expect(x.backends.map((b: { filters?: unknown }) => b.filters)).toEqual([undefined, undefined]);
  });

  it('backendRefs that rewrite differently (or one not at all) make the rule invalid, naming the backendRef', () => {
    for (const second of [backend('other', { filters: [fullPath('/elsewhere')] }), backend('other')]) {
      const r = translate([rule([backend('svc', { filters: [fullPath('/full')] }), second])]);
      const p = parent(r, 'HTTPRoute', 'apps', 'r');
      expect(sr(p.conditions, 'Accepted')).toBe('False/IncompatibleFilters');
      expect(p.conditions.find((c: { type: string }) => c.type === 'Accepted').message).toContain(
        'spec.rules[0].backendRefs[1].filters: backendRefs[0] rewrites the path',
      );
      // Never applied to the wrong backend: the rule answers 500.
      expect(irRoutes(r)[0].directResponse).toEqual({ status: 500 });
    }
  });

  it('a backendRef of weight 0 takes no traffic and does not count', () => {
    const r = translate([rule([backend('svc', { filters: [fullPath('/full')] }), backend('other', { weight: 0 })])]);
    expect(irRoutes(r)[0].filters.rewrite).toEqual({ path: { type: 'ReplaceFullPath', value: '/full' } });
  });

  it('a rule that rewrites the path itself may not have a backendRef rewrite it again', () => {
    const r = translate([rule([backend('svc', { filters: [fullPath('/full')] })], { filters: [prefixPath('/p')] })]);
    const p = parent(r, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'Accepted')).toBe('False/IncompatibleFilters');
    expect(p.conditions.find((c: { type: string }) => c.type === 'Accepted').message).toContain(
      "the rule's own URLRewrite already rewrites the path",
    );
  });
});
