// ProxyConfig.spec.http → GatewayIR.http: only what the ProxyConfig sets, durations in milliseconds,
// and a value the CRD schema would refuse left out (its default applies). A change reaches the IR
// through an incremental translation as through a fresh one. An ALPN without h2 leaves GRPCRoutes
// out of the Gateway's HTTPS listeners.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject, ProxyHttp } from '@turnpike/api';
import { snapshotFromObjects, translate, Translator, type TranslateResult } from '../src/index.js';
import {
  cond,
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  listener,
  parent,
  route,
  service,
  tlsSecret,
} from './builders.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from './tls-fixtures.js';

const proxyConfig = (spec: { http?: unknown } = {}): KubeObject => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'ProxyConfig',
  metadata: { name: 'pc', namespace: 'infra', generation: 1 },
  spec,
});
const gw = gateway('gw', [http()], {
  infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } },
});
const irOf = (r: TranslateResult) => r.xdsIR.gateways.get('infra/gw')!;

/** A fresh translation, checked against one that saw `before` first. */
function translated(objects: KubeObject[], before: KubeObject[]): TranslateResult {
  const fresh = translate(snapshotFromObjects(objects));
  const t = new Translator();
  t.translate(snapshotFromObjects(before));
  expect(irOf(t.translate(snapshotFromObjects(objects)))).toEqual(irOf(fresh));
  return fresh;
}

describe('ProxyConfig.spec.http', () => {
  it('absent, or empty: the Gateway IR carries nothing (the xds side applies the defaults)', () => {
    expect(irOf(translated([gatewayClass(), gw, proxyConfig()], []))).not.toHaveProperty('http');
    expect(irOf(translated([gatewayClass(), gw, proxyConfig({ http: {} })], []))).not.toHaveProperty('http');
  });

  it('what it sets, durations in milliseconds ("0s" is 0: off)', () => {
    const spec: ProxyHttp = {
      alpn: ['http/1.1'],
      xffNumTrustedHops: 2,
      escapedSlashes: 'KeepUnchanged',
      headersWithUnderscores: 'DropHeader',
      maxRequestHeadersKiB: 96,
      maxRequestHeaders: 200,
      timeouts: { requestHeaders: '30s', streamIdle: '0s', connectionIdle: '1h30m' },
    };
    const before = [gatewayClass(), gw, proxyConfig()];
    expect(irOf(translated([gatewayClass(), gw, proxyConfig({ http: spec })], before)).http).toEqual({
      alpn: ['http/1.1'],
      xffNumTrustedHops: 2,
      escapedSlashes: 'KeepUnchanged',
      headersWithUnderscores: 'DropHeader',
      maxRequestHeadersKiB: 96,
      maxRequestHeaders: 200,
      requestHeadersTimeoutMs: 30_000,
      streamIdleTimeoutMs: 0,
      connectionIdleTimeoutMs: 5_400_000,
    });
  });

  it('values the schema refuses are left out, so their defaults apply', () => {
    const bad = {
      alpn: ['h3', 'h2'],
      xffNumTrustedHops: -1,
      escapedSlashes: 'Decode',
      headersWithUnderscores: 'Keep',
      maxRequestHeadersKiB: 9000,
      maxRequestHeaders: 0,
      timeouts: { requestHeaders: '10 seconds', streamIdle: 5 },
    };
    expect(irOf(translated([gatewayClass(), gw, proxyConfig({ http: bad })], []))).not.toHaveProperty('http');
    const twice = { alpn: ['h2', 'h2'], maxRequestHeaders: 50 };
    expect(irOf(translated([gatewayClass(), gw, proxyConfig({ http: twice })], [])).http).toEqual({
      maxRequestHeaders: 50,
    });
  });
});

describe('HTTPS listeners of a Gateway whose ALPN leaves out h2', () => {
  const https = (kinds?: string[]) => ({
    name: 'https',
    port: 443,
    protocol: 'HTTPS',
    tls: { certificateRefs: [{ name: 'cert' }] },
    allowedRoutes: { namespaces: { from: 'All' }, ...(kinds ? { kinds: kinds.map((kind) => ({ kind })) } : {}) },
  });
  const objects = (alpn: ProxyHttp['alpn'] | undefined, kinds?: string[]) => [
    gatewayClass(),
    gateway('gw', [https(kinds), http()], {
      infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } },
    }),
    proxyConfig(alpn ? { http: { alpn } } : {}),
    tlsSecret('cert', 'infra', EXAMPLE_COM_CERT, EXAMPLE_COM_KEY),
    route('GRPCRoute', 'g', {
      parentRefs: [
        { name: 'gw', namespace: 'infra', sectionName: 'https' },
        { name: 'gw', namespace: 'infra', sectionName: 'http' },
      ],
      rules: [{ backendRefs: [{ name: 'grpc', port: 8080 }] }],
    }),
    service('grpc'),
    endpointSlice('grpc'),
  ];
  const kindsOf = (r: TranslateResult, name: string) =>
    (listener(r, 'infra', 'gw', name).supportedKinds as { kind: string }[]).map((k) => k.kind);

  it('serve no GRPCRoute (gRPC needs HTTP/2); plain HTTP listeners still do (h2c)', () => {
    const on = translated(objects(undefined), []);
    expect(kindsOf(on, 'https')).toEqual(['HTTPRoute', 'GRPCRoute']);
    expect(cond(parent(on, 'GRPCRoute', 'apps', 'g', 0).conditions, 'Accepted')?.status).toBe('True');
    const off = translated(objects(['http/1.1']), objects(undefined));
    expect(kindsOf(off, 'https')).toEqual(['HTTPRoute']);
    expect(kindsOf(off, 'http')).toEqual(['HTTPRoute', 'GRPCRoute']);
    const refused = cond(parent(off, 'GRPCRoute', 'apps', 'g', 0).conditions, 'Accepted');
    expect([refused?.status, refused?.reason]).toEqual(['False', 'NotAllowedByListeners']);
    expect(cond(parent(off, 'GRPCRoute', 'apps', 'g', 1).conditions, 'Accepted')?.status).toBe('True');
    // h2 anywhere in the list serves them, http/1.1 first or not.
    expect(kindsOf(translated(objects(['http/1.1', 'h2']), []), 'https')).toEqual(['HTTPRoute', 'GRPCRoute']);
  });

  it('one that asks for GRPCRoutes by kind says why it cannot have them', () => {
    const r = translated(objects(['http/1.1'], ['HTTPRoute', 'GRPCRoute']), []);
    const refs = cond(listener(r, 'infra', 'gw', 'https').conditions, 'ResolvedRefs');
    expect([refs?.status, refs?.reason]).toEqual(['False', 'InvalidRouteKinds']);
    expect(refs?.message).toContain('spec.http.alpn leaves out h2');
  });
});
