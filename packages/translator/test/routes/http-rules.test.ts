// HTTPRoute rules (routes/http-rules.ts): invalid rules, filters, timeouts, mirrors, redirects.
import { describe, expect, it } from '@jest/globals';
import { httpRoute, irRoutes, parent, route, run, service, sr } from '../builders.js';
import { backend, base, toGw } from '../route-fixtures.js';

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
  it('retry attempts 0 disables retries and keeps the rule served; a negative count is refused, naming the field', () => {
    const rule = (attempts: number) => ({ retry: { codes: [500], attempts }, backendRefs: [backend()] });
    const r = run([...base(), httpRoute('r', { parentRefs: [toGw({ sectionName: 'other' })], rules: [rule(0)] })]);
    expect(sr(parent(r, 'HTTPRoute', 'apps', 'r').conditions, 'Accepted')).toBe('True/Accepted');
    expect(irRoutes(r)[0]!.retry).toEqual({ codes: [500], attempts: 0 });
    const bad = run([...base(), httpRoute('r', { parentRefs: [toGw({ sectionName: 'other' })], rules: [rule(-1)] })]);
    const p = parent(bad, 'HTTPRoute', 'apps', 'r');
    expect(sr(p.conditions, 'Accepted')).toBe('False/UnsupportedValue');
    expect(p.conditions.find((c: { type: string }) => c.type === 'Accepted').message).toContain(
      'spec.rules[0].retry.attempts',
    );
    expect(irRoutes(bad)[0]!.directResponse).toEqual({ status: 500 });
  });
  it('route-inline sessionPersistence (HTTPRoute and GRPCRoute) is refused with UnsupportedValue, never ignored: "Deprecated: use the Backend resource for session persistence (GEP-4894)"', () => {
    const sticky = { sessionPersistence: { type: 'Cookie', cookie: { name: 'session' } }, backendRefs: [backend()] };
    const r = run([
      ...base(),
      httpRoute('all', { parentRefs: [toGw({ sectionName: 'other' })], rules: [sticky] }),
      httpRoute('some', {
        parentRefs: [toGw()],
        hostnames: ['some.example.com'],
        rules: [{ backendRefs: [backend()] }, { ...sticky, matches: [{ path: { type: 'Exact', value: '/cart' } }] }],
      }),
      route('GRPCRoute', 'g', { parentRefs: [toGw({ sectionName: 'other' })], rules: [sticky] }),
    ]);
    const all = parent(r, 'HTTPRoute', 'apps', 'all').conditions;
    expect(sr(all, 'Accepted')).toBe('False/UnsupportedValue');
    expect(all.find((c: { type: string }) => c.type === 'Accepted').message).toContain(
      'spec.rules[0].sessionPersistence: route-inline session persistence is not supported',
    );
    const some = parent(r, 'HTTPRoute', 'apps', 'some').conditions;
    expect([sr(some, 'Accepted'), sr(some, 'PartiallyInvalid')]).toEqual(['True/Accepted', 'True/UnsupportedValue']);
    expect(sr(parent(r, 'GRPCRoute', 'apps', 'g').conditions, 'Accepted')).toBe('False/UnsupportedValue');
    // The refused rule answers 500 (fail closed), the other rule serves.
    const some500 = irRoutes(r).filter((x) => x.source.name === 'some');
    expect(some500.map((x) => [x.source.rule, x.directResponse ?? 'backends'])).toEqual(
      expect.arrayContaining([
        [0, 'backends'],
        [1, { status: 500 }],
      ]),
    );
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
