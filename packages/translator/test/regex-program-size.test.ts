// A RegularExpression match whose RE2 program is larger than Envoy accepts (re2.max_program_size.error_level,
// 100 by default) would make Envoy refuse the whole route configuration of the port: the rule is refused
// instead, its condition (PartiallyInvalid) naming the field and the size, and the other rules are served.
import { describe, expect, it } from '@jest/globals';
import { cond, gateway, gatewayClass, http, httpRoute, irRoutes, route, run, service, statusOf } from './builders.js';

const big = '/[^/]+/' + 'x'.repeat(100); // 115 instructions
const small = '/api/v[0-9]+/users/[a-z0-9-]+'; // 23

function routeWith(kind: 'HTTPRoute' | 'GRPCRoute', matches: unknown[]) {
  const spec = {
    parentRefs: [{ name: 'gw', namespace: 'infra' }],
    rules: [
      { matches, backendRefs: [{ name: 'svc', port: 8080 }] },
      {
        matches: kind === 'HTTPRoute' ? [{ path: { type: 'PathPrefix', value: '/ok' } }] : [],
        backendRefs: [{ name: 'svc', port: 8080 }],
      },
    ],
  };
  return kind === 'HTTPRoute' ? httpRoute('r', spec) : route('GRPCRoute', 'r', spec);
}

const translate = (kind: 'HTTPRoute' | 'GRPCRoute', matches: unknown[]) =>
  run([gatewayClass(), gateway('gw', [http()]), service('svc'), routeWith(kind, matches)]);
/** The route's PartiallyInvalid condition: its first rule refused, the second one served. */
const refusal = (r: ReturnType<typeof run>, kind = 'HTTPRoute') =>
  cond(statusOf(r, kind, 'apps', 'r').parents[0].conditions, 'PartiallyInvalid');

describe('regular expressions Envoy would refuse for their RE2 program size', () => {
  it('a path regex of 115 instructions: the rule is refused naming the field and the size; the other rule is served', () => {
    const r = translate('HTTPRoute', [{ path: { type: 'RegularExpression', value: big } }]);
    expect(refusal(r)!.reason).toBe('UnsupportedValue');
    expect(refusal(r)!.message).toContain(
      `spec.rules[0].matches[0].path.value: "${big}" compiles to an RE2 program of 115 instructions; ` +
        'Envoy accepts at most 100 (re2.max_program_size.error_level)',
    );
    expect(irRoutes(r).some((x) => x.match.path.type === 'RegularExpression')).toBe(false);
    expect(irRoutes(r).some((x) => x.match.path.value === '/ok')).toBe(true);
  });

  it('a header and a query parameter regex are measured too; one of 23 instructions is served', () => {
    const header = translate('HTTPRoute', [{ headers: [{ name: 'x-id', type: 'RegularExpression', value: big }] }]);
    expect(refusal(header)!.message).toContain('spec.rules[0].matches[0].headers[0].value: "/[^/]+/');
    const query = translate('HTTPRoute', [{ queryParams: [{ name: 'q', type: 'RegularExpression', value: big }] }]);
    expect(refusal(query)!.message).toContain('spec.rules[0].matches[0].queryParams[0].value: "/[^/]+/');
    const fine = translate('HTTPRoute', [{ path: { type: 'RegularExpression', value: small } }]);
    expect(refusal(fine)).toBeUndefined();
    expect(irRoutes(fine).some((x) => x.match.path.value === small)).toBe(true);
  });

  it('what cannot be measured here (a Unicode class) is refused, saying why', () => {
    const r = translate('HTTPRoute', [{ path: { type: 'RegularExpression', value: '/\\p{Greek}' } }]);
    expect(refusal(r)!.message).toContain(
      'path.value: "/\\p{Greek}" is refused: its RE2 program size is not known here: \\p{Greek} needs Unicode tables',
    );
  });

  it('a repeated Unicode class or hex escape is not taken for a possessive quantifier (`}+`)', () => {
    const greek = translate('HTTPRoute', [{ path: { type: 'RegularExpression', value: '/\\p{Greek}+' } }]);
    expect(refusal(greek)!.message).toContain(
      'its RE2 program size is not known here: \\p{Greek} needs Unicode tables',
    );
    expect(refusal(greek)!.message).not.toContain('possessive');
    const hex = translate('HTTPRoute', [{ path: { type: 'RegularExpression', value: '/\\x{41}+' } }]);
    expect(refusal(hex)).toBeUndefined();
    const quoted = translate('HTTPRoute', [{ path: { type: 'RegularExpression', value: '/\\Qa*+\\E' } }]);
    expect(refusal(quoted)).toBeUndefined();
    // A real possessive quantifier is still named as such.
    const possessive = translate('HTTPRoute', [{ path: { type: 'RegularExpression', value: '/a++' } }]);
    expect(refusal(possessive)!.message).toContain('possessive quantifiers');
  });

  it('a GRPCRoute method: the path regex the proxy runs (service and method together) is measured', () => {
    const method = 'M'.repeat(95);
    const r = translate('GRPCRoute', [{ method: { type: 'Exact', method } }]);
    const message = refusal(r, 'GRPCRoute')!.message;
    expect(message).toContain(`spec.rules[0].matches[0].method: the path regex "/[^/]+/${method}" compiles to an RE2`);
    const regex = translate('GRPCRoute', [
      { method: { type: 'RegularExpression', service: 'a'.repeat(60), method: 'b'.repeat(60) } },
    ]);
    expect(refusal(regex, 'GRPCRoute')!.message).toContain(
      `method: the path regex "/${'a'.repeat(60)}/${'b'.repeat(60)}" compiles to an RE2 program of`,
    );
  });

  it('a CORS origin with a wildcard is served as a regex and measured the same; an exact origin is not', () => {
    const corsRoute = (allowOrigins: string[]) =>
      run([
        gatewayClass(),
        gateway('gw', [http()]),
        service('svc'),
        httpRoute('r', {
          parentRefs: [{ name: 'gw', namespace: 'infra' }],
          rules: [
            { filters: [{ type: 'CORS', cors: { allowOrigins } }], backendRefs: [{ name: 'svc', port: 8080 }] },
            {
              matches: [{ path: { type: 'PathPrefix', value: '/ok' } }],
              backendRefs: [{ name: 'svc', port: 8080 }],
            },
          ],
        }),
      ]);
    const long = `https://*.${'a'.repeat(100)}.example.com`;
    const refused = corsRoute(['https://app.example.com', long]);
    expect(refusal(refused)!.reason).toBe('UnsupportedValue');
    expect(refusal(refused)!.message).toMatch(
      new RegExp(
        `spec\\.rules\\[0\\]\\.filters\\[0\\]\\.cors\\.allowOrigins\\[1\\]: the wildcard origin "https://\\*\\.a+\\.example\\.com" ` +
          'becomes an RE2 program of \\d+ instructions; Envoy accepts at most 100',
      ),
    );
    expect(irRoutes(refused).some((x) => x.filters?.cors)).toBe(false);
    expect(irRoutes(refused).some((x) => x.match.path.value === '/ok')).toBe(true);
    // The same length without a wildcard is an exact match, no regex; a short wildcard origin is served.
    const served = corsRoute([long.replace('*', 'www'), 'https://*.example.com', '*']);
    expect(refusal(served)).toBeUndefined();
    expect(irRoutes(served).find((x) => x.filters?.cors)?.filters?.cors?.allowOrigins).toHaveLength(3);
  });
});
