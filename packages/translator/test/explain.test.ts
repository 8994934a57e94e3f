// `explain` says exactly what the proxy does and why: a Gateway left without status because its class
// is not Accepted, a listener that accepts a route but serves nothing, and per rule the match, the
// filters and the answer (including the share that answers 500).
import { describe, expect, it } from '@jest/globals';
import { slimPod, type KubeObject } from '@turnpike/api';
import { explain, snapshotFromObjects } from '../src/index.js';
import { endpointSlice, gateway, gatewayClass, http, httpRoute, service, xbackend } from './builders.js';

const toGw = { name: 'gw', namespace: 'infra' };
const lines = (objects: KubeObject[], kind: string, ns: string | undefined, name: string) =>
  explain(snapshotFromObjects(objects), kind, ns, name).lines.join('\n');

describe('explain', () => {
  it("a Gateway of our class whose class is not Accepted: says so and why, not that the class is someone else's", () => {
    const badClass = {
      ...gatewayClass(),
      spec: {
        controllerName: 'turnpike.dev/gateway-controller',
        parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'nope', namespace: 'infra' },
      },
    };
    const text = lines([badClass, gateway('gw', [http()])], 'Gateway', 'infra', 'gw');
    expect(text).toContain('its GatewayClass "turnpike" is ours but not Accepted (InvalidParameters');
    expect(text).not.toContain('not an object of a turnpike GatewayClass');
  });

  it("a listener that accepts the route but is not programmed: the route's explanation says it serves nothing", () => {
    const https = {
      name: 'https',
      port: 443,
      protocol: 'HTTPS',
      hostname: 'foo.example.com',
      allowedRoutes: { namespaces: { from: 'All' } },
      tls: { mode: 'Terminate', certificateRefs: [{ name: 'missing-cert' }] },
    };
    const objects = [
      gatewayClass(),
      gateway('gw', [https]),
      service('svc'),
      httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }] }),
    ];
    const text = lines(objects, 'HTTPRoute', 'apps', 'r');
    expect(text).toMatch(
      /listener https \(HTTPS :443, hostname foo\.example\.com\): accepts the route, but is not programmed \(.*missing-cert.*\): the proxy serves nothing on it/,
    );
    expect(text).not.toContain('serves foo.example.com');
    expect(text).toContain('the proxy serves none of this route: every listener that accepts it is not programmed');
    expect(text).not.toContain('what the proxy does');
  });

  it('a route no listener accepts: says the proxy serves none of it, and describes no answers', () => {
    const objects = [
      gatewayClass(),
      gateway('gw', [http()]),
      service('svc'),
      httpRoute('r', {
        parentRefs: [{ ...toGw, sectionName: 'nope' }],
        rules: [{ backendRefs: [{ name: 'svc', port: 8080 }] }],
      }),
    ];
    const text = lines(objects, 'HTTPRoute', 'apps', 'r');
    expect(text).toContain('NOT attached');
    expect(text).toContain('the proxy serves none of this route: no parent attached it');
    expect(text).not.toContain('what the proxy does');
    expect(text).not.toContain('sends 100%');
  });

  it('a rule whose regex cannot be compiled: that match is left out (not "answers 500"), its valid match answers 500', () => {
    const objects = [
      gatewayClass(),
      gateway('gw', [http()]),
      service('svc'),
      endpointSlice('svc'),
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [
          { matches: [{ path: { type: 'PathPrefix', value: '/ok' } }], backendRefs: [{ name: 'svc', port: 8080 }] },
          {
            matches: [
              { path: { type: 'RegularExpression', value: '/a(?=b)' } },
              { path: { type: 'Exact', value: '/mine' } },
            ],
            backendRefs: [{ name: 'svc', port: 8080 }],
          },
        ],
      }),
    ];
    const text = lines(objects, 'HTTPRoute', 'apps', 'r');
    expect(text).toContain('some rules are invalid: spec.rules[1].matches[0].path.value');
    expect(text).not.toContain('invalid and answer 500');
    expect(text).toContain('rule/1/match/1: any method, path Exact /mine → answers 500');
    expect(text).toMatch(
      /rule\/1\/match\/0: left out, it cannot be compiled \(spec\.rules\[1\]\.matches\[0\]\.path\.value: .*lookahead.*\): the requests it would match go to whatever else on the host matches them, or get 404/,
    );
    expect(text).toContain('rule/0/match/0: any method, path PathPrefix /ok → sends 100% to apps/svc/8080');
    // The status analyze reports says the same.
    const status = explain(snapshotFromObjects(objects), 'HTTPRoute', 'apps', 'r').status as {
      parents: { conditions: { type: string; message: string }[] }[];
    };
    expect(status.parents[0]!.conditions.find((c) => c.type === 'PartiallyInvalid')!.message).toMatch(
      /^Invalid rules answer 500 \(a match that cannot be compiled is left out instead\): spec\.rules\[1\]\.matches\[0\]/,
    );
  });

  it('per rule: the match, the filters, and the answer with the share that answers 500', () => {
    const objects = [
      gatewayClass(),
      gateway('gw', [http()]),
      service('svc'),
      endpointSlice('svc'),
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' }, method: 'GET' }],
            filters: [
              { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-team', value: 'a' }] } },
              { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' } } },
            ],
            backendRefs: [
              { name: 'svc', port: 8080, weight: 3 },
              { name: 'gone', port: 8080, weight: 1 },
            ],
          },
          {
            matches: [{ path: { type: 'Exact', value: '/old' } }],
            filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'new.example.com', statusCode: 301 } }],
          },
        ],
      }),
    ];
    const text = lines(objects, 'HTTPRoute', 'apps', 'r');
    expect(text).toContain(
      'rule/0/match/0: GET, path PathPrefix /api → request headers: set x-team → replaces the matched prefix with /v2 → sends 75% to apps/svc/8080, 25% answered 500 (backends that do not resolve)',
    );
    expect(text).toContain('rule/1/match/0: any method, path Exact /old → redirects (301) to host new.example.com');
  });

  describe('a BackendTLSPolicy', () => {
    const policy = (sectionName: string) =>
      ({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'BackendTLSPolicy',
        metadata: { name: 'p', namespace: 'apps', generation: 1 },
        spec: {
          targetRefs: [{ group: '', kind: 'Service', name: 'svc', sectionName }],
          validation: { hostname: 'example.com', wellKnownCACertificates: 'System' },
        },
      }) as never;
    const ports = [
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'https', port: 8443, protocol: 'TCP' },
    ];
    const route = httpRoute('r', { parentRefs: [toGw], rules: [{ backendRefs: [{ name: 'svc', port: 8443 }] }] });

    it('whose sectionName names no port of its Service: found and explained, not "not ours"', () => {
      const text = lines(
        [gatewayClass(), gateway('gw', [http()]), service('svc', 'apps', ports), policy('htps'), route],
        'BackendTLSPolicy',
        'apps',
        'p',
      );
      expect(text).toContain(
        'targetRefs[0] Service apps/svc sectionName=htps: NOT attached: spec.targetRefs[0].sectionName: Service apps/svc has no port named "htps" (its ports: http, https)',
      );
      expect(text).toContain('ancestor Gateway infra/gw');
      expect(text).toMatch(/Accepted=False \(TargetNotFound\)/);
      expect(text).not.toContain('not an object of a turnpike GatewayClass');
    });

    it('attached to a port, or with no route to its Service yet: says which, never "not ours"', () => {
      const served = lines(
        [gatewayClass(), gateway('gw', [http()]), service('svc', 'apps', ports), policy('https'), route],
        'BackendTLSPolicy',
        'apps',
        'p',
      );
      expect(served).toContain('targetRefs[0] Service apps/svc sectionName=https: applies to port https (8443)');
      expect(served).toMatch(/Accepted=True \(Accepted\)/);
      const unused = lines(
        [gatewayClass(), gateway('gw', [http()]), service('svc', 'apps', ports), policy('https')],
        'BackendTLSPolicy',
        'apps',
        'p',
      );
      expect(unused).toContain('no status: its ancestors are the Gateways of the routes that send to a Service it');
      expect(unused).not.toContain('not an object of a turnpike GatewayClass');
    });
  });

  it('an XBackend says what it is: the Pods it selects and how many are ready, or the host outside; and the session kept', () => {
    const pod = (name: string, ip: string, ready: boolean): KubeObject =>
      slimPod({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'apps', labels: { app: 'cart' } },
        status: {
          phase: 'Running',
          podIPs: [{ ip }],
          conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
        },
      });
    const X = 'gateway.networking.x-k8s.io';
    const objects = [
      gatewayClass(),
      gateway('gw', [http()]),
      pod('cart-1', '10.2.0.1', true),
      pod('cart-2', '10.2.0.2', true),
      pod('cart-3', '10.2.0.3', false),
      xbackend('cart', {
        type: 'EndpointSelector',
        port: { number: 8080 },
        endpointSelector: { matchLabels: { app: 'cart' } },
        sessionPersistence: { type: 'Cookie', cookie: { name: 'cart-session' } },
      }),
      xbackend('payments', {
        type: 'ExternalHostname',
        port: { number: 443 },
        externalHostname: { hostname: 'pay.example.com' },
        tls: { mode: 'None' },
      }),
      httpRoute('r', {
        parentRefs: [toGw],
        rules: [
          { backendRefs: [{ group: X, kind: 'XBackend', name: 'cart' }] },
          {
            matches: [{ path: { type: 'PathPrefix', value: '/pay' } }],
            backendRefs: [{ group: X, kind: 'XBackend', name: 'payments' }],
          },
        ],
      }),
    ];
    const text = lines(objects, 'HTTPRoute', 'apps', 'r');
    expect(text).toMatch(
      /spec\.rules\[0\]\.backendRefs\[0\] .*cart.*: cluster apps\/XBackend\/cart: the Pods of apps labelled app=cart, port 8080, 2 ready/,
    );
    expect(text).toMatch(
      /spec\.rules\[1\]\.backendRefs\[0\] .*payments.*: cluster \S+: pay\.example\.com:443 outside the cluster, resolved by the proxy's DNS/,
    );
    expect(text).toMatch(
      /rule\/0\/match\/0: .* → sends 100% to apps\/XBackend\/cart → keeps each session on one endpoint by cookie cart-session \(a session cookie, path \/\)/,
    );
    expect(text).not.toMatch(/rule\/1\/match\/0: .*keeps each session/);
  });
});
