// What the route-table check does before routing, as Envoy's HTTP connection manager does: path
// normalisation, escaped slashes, the codec's header checks, and ALPN per filter chain; on
// hand-written resources, with Envoy's own test cases where it has them.
import { describe, expect, it } from '@jest/globals';
import type { FilterChain, HttpConnectionManager } from '../../src/envoy-types.js';
import type { EnvoyResources } from '../../src/index.js';
import { canonicalPath, normalizeRequestPath } from './envoy-path.js';
import { negotiateAlpn, routeHttp } from './envoy-router.js';

const HCM = 'envoy.filters.network.http_connection_manager';
const normalizing: HttpConnectionManager = { normalize_path: { value: true }, merge_slashes: true };

describe('path normalisation (normalize_path, merge_slashes)', () => {
  it("RFC 3986 dot-segments as Envoy's own tests expect (test/common/http/path_utility_test.cc)", () => {
    const cases: [string, string][] = [
      ['/a/b/../c', '/a/c'],
      ['/a/b/./c', '/a/b/c'],
      ['a/b/../c', '/a/c'],
      ['/a/b/../../../../c', '/c'],
      ['/a/..\\c', '/c'],
      ['/%c0%af', '/%c0%af'],
      ['/%5c%25', '/%5c%25'],
      ['/a/b/%2E%2E/c', '/a/c'],
      ['/a/b/%2e%2e/c', '/a/c'],
      ['/a/b/%2E./c', '/a/c'],
      ['/a/b/%2E/c', '/a/b/c'],
      ['..', '/'],
      ['/../a/b', '/a/b'],
      ['/./a/b', '/a/b'],
      ['/A/B/C', '/A/B/C'],
      ['/a/%2F%2f/c', '/a/%2F%2f/c'],
      ['/xyz', '/xyz'],
    ];
    for (const [input, want] of cases) expect([input, canonicalPath(input)]).toEqual([input, want]);
  });

  it('a dot that starts no segment is kept; characters a path may not hold are escaped', () => {
    expect(canonicalPath('/a/..b/.c/d.')).toBe('/a/..b/.c/d.');
    expect(canonicalPath('/a b/<c>/é')).toBe('/a%20b/%3Cc%3E/%C3%A9');
  });

  it("slashes merge after normalisation, the query untouched (Envoy's MergeSlashes cases)", () => {
    const merge = (p: string) => normalizeRequestPath({ merge_slashes: true }, p, false);
    expect(merge('/a//b/c/')).toEqual({ path: '/a/b/c/' });
    expect(merge('//a/b/c')).toEqual({ path: '/a/b/c' });
    expect(merge('/a////b/c')).toEqual({ path: '/a/b/c' });
    expect(merge('/a//b?a=///c')).toEqual({ path: '/a/b?a=///c' });
    expect(merge('//a/?b')).toEqual({ path: '/a/?b' });
    // Normalised first: ".." goes back over the empty segment, so nothing is left to merge.
    expect(normalizeRequestPath(normalizing, '/a/./b//../c?x=/../y', false)).toEqual({ path: '/a/b/c?x=/../y' });
    expect(normalizeRequestPath(normalizing, '/a//b/./c', false)).toEqual({ path: '/a/b/c' });
  });

  it('without the fields the path goes on as sent', () => {
    expect(normalizeRequestPath({}, '/foo/../admin//x%2F', false)).toEqual({ path: '/foo/../admin//x%2F' });
  });

  it('escaped slashes: each action, before normalisation; gRPC is refused where others are redirected', () => {
    const escaped = (action: HttpConnectionManager['path_with_escaped_slashes_action'], grpc = false) =>
      normalizeRequestPath({ ...normalizing, path_with_escaped_slashes_action: action }, '/foo%2F..%5cbar?q=%2F', grpc);
    expect(escaped('KEEP_UNCHANGED')).toEqual({ path: '/foo%2F..%5cbar?q=%2F' });
    expect(escaped(undefined)).toEqual({ path: '/foo%2F..%5cbar?q=%2F' });
    // %2F → /, %5c → \ (then read as /), so "/foo/../bar" is "/bar".
    expect(escaped('UNESCAPE_AND_FORWARD')).toEqual({ path: '/bar?q=%2F' });
    expect(escaped('UNESCAPE_AND_REDIRECT')).toEqual({ redirect: '/bar?q=%2F' });
    expect(escaped('UNESCAPE_AND_REDIRECT', true)).toHaveProperty('reject');
    expect(escaped('REJECT_REQUEST')).toHaveProperty('reject');
  });
});

/** One plain-text HTTP listener on port 80 whose connection manager is `hcm`, routing /foo and /. */
function world(hcm: HttpConnectionManager): EnvoyResources {
  const chain = (name: string, alpn?: string[]): FilterChain => ({
    name,
    filters: [{ name: HCM, typed_config: { ...hcm, rds: { route_config_name: 'rc' } } as never }],
    ...(alpn
      ? {
          filter_chain_match: { server_names: [`${name}.example.com`] },
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: { common_tls_context: alpn.length ? { alpn_protocols: alpn } : {} } as never,
          },
        }
      : {}),
  });
  return {
    listeners: [
      { name: 'tcp-80', filter_chains: [chain('plain')] },
      {
        name: 'tcp-443',
        filter_chains: [chain('both', ['h2', 'http/1.1']), chain('one', ['http/1.1']), chain('none', [])],
      },
    ],
    routes: [
      {
        name: 'rc',
        virtual_hosts: [
          {
            name: 'v',
            domains: ['*'],
            routes: [
              { name: 'foo', match: { path_separated_prefix: '/foo' }, direct_response: { status: 200 } },
              { name: 'root', match: { prefix: '/' }, direct_response: { status: 200 } },
            ],
          },
        ],
      },
    ],
    clusters: [],
    endpoints: [],
    secrets: [],
  };
}

describe('the connection manager answers before routing', () => {
  const get = (res: EnvoyResources, path: string, headers: Record<string, string> = {}) =>
    routeHttp(res, { port: 80, authority: 'a.com', path, headers });

  it('a normalised path is the one routed; an escaped slash is redirected first', () => {
    const res = world({ ...normalizing, path_with_escaped_slashes_action: 'UNESCAPE_AND_REDIRECT' });
    expect(get(res, '/foo/../x')).toMatchObject({ route: 'root' });
    expect(get(world({}), '/foo/../x')).toMatchObject({ route: 'foo' });
    expect(get(res, '/foo%2Fx')).toMatchObject({ status: 307, location: '/foo/x' });
    expect(get(res, '/foo%2Fx').kind === 'http' && get(res, '/foo%2Fx')).not.toHaveProperty('route');
  });

  it('headers with underscores: 400 on HTTP/1.1, a reset on HTTP/2, dropped with DROP_HEADER', () => {
    const reject = world({ common_http_protocol_options: { headers_with_underscores_action: 'REJECT_REQUEST' } });
    expect(get(reject, '/foo', { x_user: 'a' })).toMatchObject({ status: 400 });
    expect(
      routeHttp(reject, { port: 80, authority: 'a', path: '/', headers: { x_user: 'a' }, http2Only: true }),
    ).toMatchObject({ reset: true, protocol: 'HTTP/2' });
    expect(get(reject, '/foo', { 'x-user': 'a' })).toMatchObject({ route: 'foo' });
    expect(get(world({}), '/foo', { x_user: 'a' })).toMatchObject({ route: 'foo' });
    const drop = world({ common_http_protocol_options: { headers_with_underscores_action: 'DROP_HEADER' } });
    expect(get(drop, '/foo', { x_user: 'a' })).toMatchObject({ route: 'foo' });
  });

  it('more headers than max_headers_count, or more bytes than max_request_headers_kb: 431', () => {
    const many = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`h${i}`, 'v']));
    const limited = world({ common_http_protocol_options: { max_headers_count: { value: 10 } } });
    expect(get(limited, '/foo', many)).toMatchObject({ status: 431 });
    expect(get(limited, '/foo', { h: 'v' })).toMatchObject({ route: 'foo' });
    const small = world({ max_request_headers_kb: { value: 1 } });
    expect(get(small, '/foo', { big: 'x'.repeat(1100) })).toMatchObject({ status: 431 });
    // Envoy's default (100 headers) without the field.
    expect(
      get(world({}), '/foo', Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`h${i}`, 'v']))),
    ).toMatchObject({
      status: 431,
    });
  });
});

describe('ALPN, per filter chain', () => {
  const res = world({});
  const tls = (sni: string, alpn?: string[], http2Only = false) =>
    routeHttp(res, { port: 443, sni, authority: sni, path: '/foo', ...(alpn ? { alpn } : {}), http2Only });

  it("the chain's first protocol the client offers; none when the chain lists none or the client offers none", () => {
    const chains = res.listeners[1]!.filter_chains!;
    expect(negotiateAlpn(chains[0]!, ['http/1.1', 'h2'])).toBe('h2');
    expect(negotiateAlpn(chains[1]!, ['h2', 'http/1.1'])).toBe('http/1.1');
    expect(negotiateAlpn(chains[2]!, ['h2', 'http/1.1'])).toBeUndefined();
    expect(negotiateAlpn(chains[0]!, undefined)).toBeUndefined();
  });

  it('a client offering h2 speaks HTTP/2 only where the chain lists it; a gRPC client gives up elsewhere', () => {
    expect(tls('both.example.com', ['h2', 'http/1.1'])).toMatchObject({ protocol: 'HTTP/2', alpn: 'h2', route: 'foo' });
    expect(tls('one.example.com', ['h2', 'http/1.1'])).toMatchObject({ protocol: 'HTTP/1.1', alpn: 'http/1.1' });
    expect(tls('none.example.com', ['h2', 'http/1.1'])).toMatchObject({ protocol: 'HTTP/1.1', route: 'foo' });
    expect(tls('both.example.com', ['h2'], true)).toMatchObject({ protocol: 'HTTP/2', route: 'foo' });
    expect(tls('one.example.com', ['h2'], true)).toMatchObject({ kind: 'refused' });
    expect(tls('none.example.com', ['h2'], true)).toMatchObject({ kind: 'refused' });
  });

  it('plain text: HTTP/2 with prior knowledge (codec AUTO infers it)', () => {
    const h2c = routeHttp(res, { port: 80, authority: 'a', path: '/foo', http2Only: true });
    expect(h2c).toMatchObject({ protocol: 'HTTP/2', route: 'foo' });
  });
});
