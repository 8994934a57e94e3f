// Random histories of every kind the translator reads, over a small universe of names so that
// references often resolve: shared by the property tests of the translator and the xDS builder.
import { CONTROLLER_NAME, type KubeObject } from '@turnpike/api';
import fc from 'fast-check';
import { generatedName, type Snapshot } from '../src/index.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_TEST_CERT, OTHER_TEST_KEY } from './tls-fixtures.js';
import { CONNECTED_AT, replicaReport, reportedGateway } from './proxy-reports.js';

export const GW = 'gateway.networking.k8s.io/v1';
const b64 = (s: string) => Buffer.from(s).toString('base64');
export const meta = (name: string, namespace?: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...(namespace ? { namespace } : {}),
  ...extra,
});
const pick = <T>(...xs: T[]) => fc.constantFrom(...xs);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const created = pick('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', undefined);

// A small universe of names, so that references often resolve (and sometimes do not).
const listener = fc
  .record({
    name: pick('http', 'https', 'tls', 'tcp', 'udp', 'alt'),
    protocol: pick('HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP'),
    port: pick(80, 443, 8080, 53),
    hostname: maybe(pick('*.example.com', 'a.example.com', 'other.test')),
    from: pick('All', 'Same', 'Selector'),
    cert: pick('cert', 'missing', 'apps/cert'),
    mode: maybe(pick('Terminate', 'Passthrough')),
    // GEP-5224: an ExternalAuth before routing, to a Service a BackendTLSPolicy may target (svc1).
    auth: maybe(pick('svc1', 'svc2', 'missing')),
  })
  .map((l) => ({
    name: l.name,
    protocol: l.protocol,
    port: l.port,
    ...(l.hostname ? { hostname: l.hostname } : {}),
    allowedRoutes: {
      namespaces:
        l.from === 'Selector' ? { from: 'Selector', selector: { matchLabels: { team: 'a' } } } : { from: l.from },
    },
    ...(l.auth && (l.protocol === 'HTTP' || l.protocol === 'HTTPS')
      ? {
          filters: {
            requests: [
              {
                type: 'ExternalAuth',
                externalAuth: { protocol: 'HTTP', backendRef: { name: l.auth, namespace: 'apps', port: 8080 } },
              },
            ],
          },
        }
      : {}),
    ...(l.protocol === 'HTTPS' || l.protocol === 'TLS'
      ? {
          tls: {
            ...(l.mode ? { mode: l.mode } : {}),
            certificateRefs: [l.cert.includes('/') ? { name: 'cert', namespace: 'apps' } : { name: l.cert }],
          },
        }
      : {}),
  }));
const listeners = fc.uniqueArray(listener, { selector: (l) => l.name, maxLength: 3 });

/** ProxyConfig.spec.accessLog: default, off, Text, fields changed, a collector that resolves or not. */
const accessLogs = pick(
  undefined,
  { disabled: true },
  { format: 'Text', text: '%START_TIME% %ROUTE_NAME% %BYTES_SENT%' },
  { json: { tenant: '%REQ(X-TENANT)%', user_agent: '' } },
  { stdout: false, openTelemetry: { backendRef: { name: 'svc1', namespace: 'apps', port: 8080 } } },
  { openTelemetry: { backendRef: { name: 'svc3', namespace: 'other', port: 8080 } } },
  { openTelemetry: { backendRef: { name: 'missing', port: 4317 } } },
);

const parentRef = fc
  .record({
    gw: pick('infra/gw1', 'infra/gw2', 'apps/gw3', 'ls:infra/ls1', 'ls:apps/ls2'),
    section: maybe(pick('http', 'https', 'tls', 'tcp', 'udp', 'alt')),
  })
  .map(({ gw, section }) => {
    const ls = gw.startsWith('ls:');
    const [namespace, name] = (ls ? gw.slice(3) : gw).split('/') as [string, string];
    return { ...(ls ? { kind: 'ListenerSet' } : {}), name, namespace, ...(section ? { sectionName: section } : {}) };
  });
const backendRef = fc
  .record({
    svc: pick('apps/svc1', 'apps/svc2', 'other/svc3', 'apps/missing', 'xb:apps/sel', 'xb:other/sel'),
    port: pick(8080, 53, 9090),
    weight: maybe(pick(0, 1, 10)),
  })
  .map(({ svc, port, weight }) => {
    const w = weight !== undefined ? { weight } : {};
    // An XBackend (GEP-4894): no port on the ref; in another namespace it is refused.
    if (svc.startsWith('xb:')) {
      const [namespace, name] = svc.slice(3).split('/') as [string, string];
      return { group: 'gateway.networking.x-k8s.io', kind: 'XBackend', name, namespace, ...w };
    }
    const [namespace, name] = svc.split('/') as [string, string];
    return { name, namespace, port, ...w };
  });
const httpRule = fc
  .record({
    path: maybe(
      fc.record({ type: pick('Exact', 'PathPrefix', 'RegularExpression'), value: pick('/', '/a', '/a/b', '(') }),
    ),
    backends: fc.array(backendRef, { maxLength: 2 }),
    header: fc.boolean(),
    plugin: fc.boolean(),
  })
  .map((r) => ({
    ...(r.path ? { matches: [{ path: r.path }] } : {}),
    backendRefs: r.backends,
    filters: [
      ...(r.header
        ? [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-a', value: 'b' }] } }]
        : []),
      ...(r.plugin
        ? [{ type: 'ExtensionRef', extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'p1' } }]
        : []),
    ],
  }));
const routeSpec = fc.record({
  parents: fc.array(parentRef, { minLength: 1, maxLength: 2 }),
  hostnames: fc.array(pick('a.example.com', 'b.example.com', 'x.other.test'), { maxLength: 2 }),
  rules: fc.array(httpRule, { maxLength: 2 }),
});
const l4Spec = fc.record({
  parents: fc.array(parentRef, { minLength: 1, maxLength: 2 }),
  backends: fc.array(backendRef, { maxLength: 2 }),
});

const tls = (which: number) =>
  which === 0
    ? { 'tls.crt': b64(EXAMPLE_COM_CERT), 'tls.key': b64(EXAMPLE_COM_KEY) }
    : which === 1
      ? { 'tls.crt': b64(OTHER_TEST_CERT), 'tls.key': b64(OTHER_TEST_KEY) }
      : { 'tls.crt': b64('garbage') };

/** Every kind the translator reads, as a random object of the universe. */
export const anyObject: fc.Arbitrary<KubeObject> = fc.oneof(
  // XBackends of type EndpointSelector and the Pods they may select (GEP-4894).
  fc
    .record({
      ns: pick('apps', 'other'),
      labels: pick({ app: 'web' }, { app: 'web', tier: 'a' }, { tier: 'b' }),
      port: pick(8080, 9090),
      protocol: maybe(pick('H2C', 'HTTP')),
      session: maybe(
        pick<Record<string, unknown>>(
          { type: 'Cookie', cookie: { name: 'sid' } },
          { type: 'Header', header: { name: 'x-session' } },
          { type: 'Cookie', absoluteTimeout: '1h', cookie: { name: 'sid' } }, // refused: a session cookie
        ),
      ),
    })
    .map(({ ns, labels, port, protocol, session }) => xbackendOf(ns, labels, port, protocol, session)),
  fc
    .record({
      name: pick('p1', 'p2', 'p3'),
      ns: pick('apps', 'other'),
      labels: pick({ app: 'web' }, { app: 'web', tier: 'a' }, { tier: 'b' }, { app: 'api' }),
      ip: pick('10.3.0.1', '10.3.0.2', '127.0.0.1'),
      ready: fc.boolean(),
      deleting: fc.boolean(),
    })
    .map(({ name, ns, labels, ip, ready, deleting }) => podOf(name, ns, labels, ip, ready, deleting)),
  fc
    .record({ name: pick('turnpike', 'other'), ours: fc.boolean(), params: fc.boolean() })
    .map(({ name, ours, params }) => ({
      apiVersion: GW,
      kind: 'GatewayClass',
      metadata: meta(name, undefined, { generation: 1 }),
      spec: {
        controllerName: ours ? CONTROLLER_NAME : 'example.com/other',
        ...(params
          ? { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc', namespace: 'infra' } }
          : {}),
      },
    })),
  fc
    .record({
      gw: pick('infra/gw1', 'infra/gw2', 'apps/gw3'),
      cls: pick('turnpike', 'other'),
      ls: listeners,
      allow: maybe(pick('All', 'Same')),
      created,
      params: fc.boolean(),
      clientCA: maybe(pick('configmap', 'bundle')),
      // GEP-5093: entries by routability, beside a static one and an unsatisfiable one.
      addresses: maybe(
        pick(
          [{ routability: 'Cluster' }],
          [{}, { routability: 'Cluster' }],
          [{ value: '203.0.113.10' }, { routability: 'example.com/vpc' }],
          [{ routability: 'testing.x-k8s.io/sentinel' }],
        ),
      ),
    })
    .map(({ gw, cls, ls, allow, created: c, params, clientCA, addresses }) => {
      const [namespace, name] = gw.split('/') as [string, string];
      return {
        apiVersion: GW,
        kind: 'Gateway',
        metadata: meta(name, namespace, { generation: 1, ...(c ? { creationTimestamp: c } : {}) }),
        spec: {
          gatewayClassName: cls,
          listeners: ls,
          ...(addresses ? { addresses } : {}),
          ...(allow ? { allowedListeners: { namespaces: { from: allow } } } : {}),
          ...(params
            ? { infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } } }
            : {}),
          // Client certificate validation from the ConfigMap or the ClusterTrustBundle below.
          ...(clientCA
            ? {
                tls: {
                  frontend: {
                    default: {
                      validation: {
                        caCertificateRefs: [
                          clientCA === 'bundle'
                            ? { group: 'certificates.k8s.io', kind: 'ClusterTrustBundle', name: 'corp-ca' }
                            : { group: '', kind: 'ConfigMap', name: 'ca', namespace: 'apps' },
                        ],
                      },
                    },
                  },
                },
              }
            : {}),
        },
      };
    }),
  fc
    .record({
      ls: pick('infra/ls1', 'apps/ls2'),
      parent: pick('infra/gw1', 'infra/gw2', 'apps/gw3'),
      listeners,
      created,
    })
    .map(({ ls, parent, listeners: l, created: c }) => {
      const [namespace, name] = ls.split('/') as [string, string];
      const [pns, pname] = parent.split('/') as [string, string];
      return {
        apiVersion: GW,
        kind: 'ListenerSet',
        metadata: meta(name, namespace, { generation: 1, ...(c ? { creationTimestamp: c } : {}) }),
        spec: { parentRef: { name: pname, namespace: pns }, listeners: l },
      };
    }),
  fc
    .record({
      kind: pick('HTTPRoute', 'GRPCRoute'),
      name: pick('r1', 'r2'),
      ns: pick('apps', 'other'),
      spec: routeSpec,
      created,
      gen: pick(1, 2),
    })
    .map(({ kind, name, ns, spec, created: c, gen }) => ({
      apiVersion: GW,
      kind,
      metadata: meta(name, ns, { generation: gen, ...(c ? { creationTimestamp: c } : {}) }),
      spec: {
        parentRefs: spec.parents,
        hostnames: spec.hostnames,
        rules: kind === 'GRPCRoute' ? spec.rules.map((r) => ({ backendRefs: r.backendRefs })) : spec.rules,
      },
    })),
  fc
    .record({ kind: pick('TCPRoute', 'UDPRoute', 'TLSRoute'), name: pick('l1', 'l2'), spec: l4Spec, created })
    .map(({ kind, name, spec, created: c }) => ({
      apiVersion: 'gateway.networking.k8s.io/v1alpha2',
      kind,
      metadata: meta(name, 'apps', { generation: 1, ...(c ? { creationTimestamp: c } : {}) }),
      spec: {
        parentRefs: spec.parents,
        ...(kind === 'TLSRoute' ? { hostnames: ['a.example.com'] } : {}),
        rules: [{ backendRefs: spec.backends }],
      },
    })),
  fc
    .record({
      svc: pick('apps/svc1', 'apps/svc2', 'other/svc3'),
      udp: fc.boolean(),
      app: maybe(pick('kubernetes.io/h2c', 'http')),
      portName: pick('http', 'web'),
      ip: pick('10.0.0.1', '10.0.0.2'),
      label: maybe(pick('a', 'b')),
    })
    .map(({ svc, udp, app, portName, ip, label }) => {
      const [namespace, name] = svc.split('/') as [string, string];
      return {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { ...meta(name, namespace), ...(label ? { labels: { tier: label } } : {}) },
        spec: {
          clusterIP: ip,
          ports: [
            { name: portName, port: 8080, protocol: 'TCP', ...(app ? { appProtocol: app } : {}) },
            ...(udp ? [{ name: 'dns', port: 53, protocol: 'UDP' }] : []),
          ],
        },
      };
    }),
  fc
    .record({
      slice: pick('apps/svc1-a', 'apps/svc1-b', 'apps/svc2-a', 'other/svc3-a'),
      owner: maybe(pick('svc1', 'svc2', 'svc3')),
      eps: fc.array(fc.record({ ip: pick('10.1.0.1', '10.1.0.2', '10.1.0.3'), ready: fc.boolean() }), { maxLength: 3 }),
    })
    .map(({ slice, owner, eps }) => {
      const [namespace, name] = slice.split('/') as [string, string];
      return {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: meta(name, namespace, owner ? { labels: { 'kubernetes.io/service-name': owner } } : {}),
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080 }],
        endpoints: eps.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready } })),
      };
    }),
  fc
    .record({
      ns: pick('other', 'apps'),
      from: pick('HTTPRoute', 'TCPRoute', 'Gateway', 'GRPCRoute'),
      fromNs: pick('apps', 'infra'),
      to: pick('Service', 'Secret', 'PluginInstallation'),
    })
    .map(({ ns, from, fromNs, to }) => ({
      apiVersion: 'gateway.networking.k8s.io/v1beta1',
      kind: 'ReferenceGrant',
      metadata: meta(`grant-${to.toLowerCase()}`, ns),
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind: from, namespace: fromNs }],
        to: [{ group: to === 'PluginInstallation' ? 'turnpike.dev' : '', kind: to }],
      },
    })),
  fc.record({ secret: pick('infra/cert', 'apps/cert'), which: pick(0, 1, 2) }).map(({ secret, which }) => {
    const [namespace, name] = secret.split('/') as [string, string];
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(name, namespace),
      type: 'kubernetes.io/tls',
      data: tls(which),
    };
  }),
  fc.record({ name: pick('infra', 'apps', 'other'), team: maybe(pick('a', 'b')) }).map(({ name, team }) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: meta(name, undefined, { labels: team ? { team } : {} }),
  })),
  fc.record({ good: fc.boolean() }).map(({ good }) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta('ca', 'apps'),
    data: { 'ca.crt': good ? EXAMPLE_COM_CERT : 'nope' },
  })),
  fc.record({ good: fc.boolean() }).map(({ good }) => ({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'ClusterTrustBundle',
    metadata: meta('corp-ca', undefined),
    spec: { trustBundle: good ? EXAMPLE_COM_CERT : 'nope' },
  })),
  // Whether the cluster serves ClusterTrustBundle (the kube source's fact): policies and classes follow it.
  fc.record({ served: fc.boolean() }).map(({ served }) => ({
    apiVersion: 'turnpike.dev/internal',
    kind: 'ServedAPI',
    metadata: meta('clustertrustbundles.certificates.k8s.io', undefined),
    status: served ? { served, version: 'v1' } : { served },
  })),
  fc
    .record({
      name: pick('btls1', 'btls2'),
      section: maybe(pick('http')),
      ca: pick('well-known', 'configmap', 'bundle'),
      created,
    })
    .map(({ name, section, ca, created: c }) => ({
      apiVersion: 'gateway.networking.k8s.io/v1alpha3',
      kind: 'BackendTLSPolicy',
      metadata: meta(name, 'apps', { generation: 1, ...(c ? { creationTimestamp: c } : {}) }),
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'svc1', ...(section ? { sectionName: section } : {}) }],
        validation: {
          hostname: 'svc1.example.com',
          ...(ca === 'well-known'
            ? { wellKnownCACertificates: 'System' }
            : {
                caCertificateRefs: [
                  ca === 'bundle'
                    ? { group: 'certificates.k8s.io', kind: 'ClusterTrustBundle', name: 'corp-ca' }
                    : { group: '', kind: 'ConfigMap', name: 'ca' },
                ],
              }),
        },
      },
    })),
  fc
    .record({ replicas: pick(1, 2), plugin: fc.boolean(), hold: fc.boolean(), accessLog: accessLogs })
    .map(({ replicas, plugin, hold, accessLog }) => ({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ProxyConfig',
      metadata: meta('pc', 'infra', { generation: 1 }),
      spec: {
        replicas,
        ...(plugin ? { plugins: [{ name: 'p1', namespace: 'apps' }] } : {}),
        ...(hold ? { rollout: { hold: true } } : {}),
        ...(accessLog ? { accessLog } : {}),
      },
    })),
  // The proxies' Services as the cluster holds them: their type, ClusterIP and what the load balancer assigned.
  fc
    .record({
      gateway: pick('gw1', 'gw2'),
      type: pick('LoadBalancer', 'ClusterIP'),
      ingress: pick([], ['203.0.113.10'], ['203.0.113.99']),
    })
    .map(({ gateway, type, ingress }) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(generatedName('infra', gateway), 'infra'),
      spec: { type, clusterIP: '10.96.0.20', ports: [{ name: 'tcp-80', port: 80, protocol: 'TCP' }] },
      status: { loadBalancer: { ingress: ingress.map((ip) => ({ ip })) } },
    })),
  // The proxy Deployments as the cluster reports them: which plugin digest the template mounts, how far the rollout is.
  fc
    .record({
      gateway: pick('gw1', 'gw2'),
      mounts: pick(undefined, 'a', 'c'),
      image: pick('envoy:1', 'envoyproxy/envoy:distroless-v1.36.2'),
      updated: pick(0, 1, 2),
      failed: fc.boolean(),
    })
    .map(({ gateway, mounts, image, updated, failed }) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(generatedName('infra', gateway), 'infra', {
        generation: 2,
        labels: {
          'app.kubernetes.io/managed-by': 'turnpike',
          'gateway.networking.k8s.io/gateway-name': gateway,
          'turnpike.dev/gateway-namespace': 'infra',
        },
      }),
      spec: {
        replicas: 2,
        template: {
          metadata: {
            annotations: mounts ? { 'turnpike.dev/plugins': JSON.stringify({ 'apps/p1': mounts.repeat(64) }) } : {},
          },
          spec: { containers: [{ name: 'envoy', image }] },
        },
      },
      status: {
        observedGeneration: 2,
        replicas: 2,
        updatedReplicas: updated,
        availableReplicas: updated,
        ...(failed
          ? { conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'x' }] }
          : {}),
      },
    })),
  fc
    .record({
      image: pick('registry.test/p1:1', 'not an image'),
      pullFrom: maybe(pick('apps', 'infra')),
      verifyWith: maybe(pick('Secret' as const, 'ConfigMap' as const)),
    })
    .map(({ image, pullFrom, verifyWith }) => ({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'PluginInstallation',
      metadata: meta('p1', 'apps', { generation: 1 }),
      spec: {
        image,
        type: 'lua',
        ...(pullFrom
          ? { pullSecretRef: { name: 'pull', ...(pullFrom === 'apps' ? {} : { namespace: pullFrom }) } }
          : {}),
        ...(verifyWith ? { verify: { publicKeyRef: { kind: verifyWith, name: 'keys' } } } : {}),
      },
    })),
  // What a plugin fetch is asked to use: pull Secrets, public keys, and the grant to pull across namespaces.
  fc
    .record({ namespace: pick('apps', 'infra'), which: pick(0, 1), docker: fc.boolean() })
    .map(({ namespace, which, docker }) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta('pull', namespace),
      type: docker ? 'kubernetes.io/dockerconfigjson' : 'Opaque',
      data: {
        '.dockerconfigjson': Buffer.from(
          JSON.stringify({ auths: { 'registry.test': { auth: `dTo${which}` } } }),
        ).toString('base64'),
      },
    })),
  fc.record({ kind: pick('Secret', 'ConfigMap'), which: pick(0, 1, 2) }).map(({ kind, which }) => {
    const pem = `-----BEGIN PUBLIC KEY-----\nkey${which}\n-----END PUBLIC KEY-----\n`;
    const values = which === 2 ? { 'other.pub': pem } : { 'cosign.pub': pem };
    return kind === 'Secret'
      ? {
          apiVersion: 'v1',
          kind,
          metadata: meta('keys', 'apps'),
          data: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
        }
      : { apiVersion: 'v1', kind, metadata: meta('keys', 'apps'), data: values };
  }),
  fc.constant({
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: meta('plugins-may-pull', 'infra'),
    spec: {
      from: [{ group: 'turnpike.dev', kind: 'PluginInstallation', namespace: 'apps' }],
      to: [{ group: '', kind: 'Secret' }],
    },
  }),
  fc.record({ ok: fc.boolean() }).map(({ ok }) => ({
    apiVersion: 'turnpike.dev/internal',
    kind: 'PluginFetch',
    metadata: meta('p1', 'apps'),
    status: {
      image: 'registry.test/p1:1',
      observedGeneration: 1,
      fetched: ok,
      reason: ok ? 'Fetched' : 'FetchFailed',
      message: ok ? 'ok' : 'no',
      ...(ok
        ? {
            sha256: 'a'.repeat(64),
            size: 10,
            digest: `sha256:${'b'.repeat(64)}`,
            storage: { configMap: 'turnpike-plugin-p1' },
          }
        : {}),
    },
  })),
  // Replicas' reports: a Gateway's proxies spread over two replicas, one proxy named by both (it moved:
  // the newer connection counts).
  fc
    .record({
      replica: pick('replica-a', 'replica-b'),
      entries: fc.uniqueArray(
        fc.record({
          rejected: fc.boolean(),
          gateway: pick('gw1', 'gw2'),
          acked: pick(undefined, [], ['apps/p1@' + 'a'.repeat(64)]),
          withheld: maybe(pick('HTTPRoute/apps/r1', 'HTTPRoute/apps/r2')),
          moved: pick(undefined, 'before', 'after'),
        }),
        { maxLength: 2, selector: (e) => e.gateway },
      ),
    })
    .map(({ replica, entries }) =>
      replicaReport(
        replica,
        entries.map(({ rejected, gateway, acked, withheld, moved }) => {
          const g = reportedGateway(`infra/${gateway}`, {
            ...(rejected
              ? {
                  rejected: {
                    typeUrl: 'type.googleapis.com/envoy.config.listener.v3.Listener',
                    version: 'v1',
                    message: 'bad',
                    node: `${replica}-proxy`,
                  },
                }
              : {}),
            ...(acked ? { sync: { connected: 1, behind: [], plugins: acked } } : {}),
            ...(withheld
              ? {
                  withheld: [
                    { resource: 'RouteConfiguration tcp-80', field: 'routes[0]', message: 'refused', object: withheld },
                  ],
                }
              : {}),
          });
          if (moved) {
            g.proxies.push({ id: 'moved', connectedAt: moved === 'after' ? LATER : CONNECTED_AT, behind: true });
            g.connected++;
          }
          return g;
        }),
      ),
    ),
);

const LATER = '2026-12-05T10:00:05.000Z';

function xbackendOf(
  ns: string,
  labels: Record<string, string>,
  port: number,
  protocol?: string,
  sessionPersistence?: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: 'gateway.networking.x-k8s.io/v1alpha1',
    kind: 'XBackend',
    metadata: meta('sel', ns, { generation: 1 }),
    spec: {
      type: 'EndpointSelector',
      port: { number: port },
      endpointSelector: { matchLabels: labels },
      ...(protocol ? { protocol } : {}),
      ...(sessionPersistence ? { sessionPersistence } : {}),
    },
  };
}

/** A Pod in slimPod's form (as the sources hold it). */
function podOf(
  name: string,
  ns: string,
  labels: Record<string, string>,
  ip: string,
  ready: boolean,
  deleting = false,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels, ...(deleting ? { deletionTimestamp: LATER } : {}) },
    status: { phase: 'Running', podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

const http = (name: string, port: number, from = 'All') => ({
  name,
  port,
  protocol: 'HTTP',
  allowedRoutes: { namespaces: from === 'Selector' ? { from, selector: { matchLabels: { team: 'a' } } } : { from } },
});
const svcRef = (name: string, namespace = 'apps', port = 8080) => ({ name, namespace, port });
const slice = (name: string, namespace: string, owner: string, ips: string[]) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: meta(name, namespace, { labels: { 'kubernetes.io/service-name': owner } }),
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080 }],
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
});
/** A coherent cluster where every reference resolves and every route attaches: random steps erode it. */
export const BASE: KubeObject[] = [
  {
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: meta('turnpike', undefined, { generation: 1 }),
    spec: { controllerName: CONTROLLER_NAME },
  },
  { apiVersion: 'v1', kind: 'Namespace', metadata: meta('apps', undefined, { labels: { team: 'a' } }) },
  {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: meta('gw1', 'infra', { generation: 1 }),
    spec: {
      gatewayClassName: 'turnpike',
      allowedListeners: { namespaces: { from: 'All' } },
      listeners: [
        http('http', 80),
        {
          name: 'https',
          port: 443,
          protocol: 'HTTPS',
          allowedRoutes: { namespaces: { from: 'All' } },
          tls: { certificateRefs: [{ name: 'cert' }] },
        },
      ],
    },
  },
  {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: meta('gw2', 'infra', { generation: 1 }),
    spec: {
      gatewayClassName: 'turnpike',
      listeners: [http('alt', 8080, 'Selector')],
      infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } },
    },
  },
  {
    apiVersion: GW,
    kind: 'Gateway',
    metadata: meta('gw3', 'apps', { generation: 1 }),
    spec: {
      gatewayClassName: 'turnpike',
      listeners: [
        { name: 'tcp', port: 9000, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } },
        { name: 'udp', port: 53, protocol: 'UDP', allowedRoutes: { namespaces: { from: 'All' } } },
        {
          name: 'tls',
          port: 443,
          protocol: 'TLS',
          tls: { mode: 'Passthrough' },
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ],
    },
  },
  {
    apiVersion: GW,
    kind: 'ListenerSet',
    metadata: meta('ls1', 'infra', { generation: 1 }),
    spec: { parentRef: { name: 'gw1', namespace: 'infra' }, listeners: [http('extra', 8081)] },
  },
  { apiVersion: 'v1', kind: 'Secret', metadata: meta('cert', 'infra'), type: 'kubernetes.io/tls', data: tls(0) },
  { apiVersion: 'v1', kind: 'Secret', metadata: meta('cert', 'apps'), type: 'kubernetes.io/tls', data: tls(1) },
  ...['svc1', 'svc2'].map((n) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(n, 'apps'),
    spec: {
      ports: [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'dns', port: 53, protocol: 'UDP' },
      ],
    },
  })),
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta('svc3', 'other'),
    spec: { ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
  },
  slice('svc1-a', 'apps', 'svc1', ['10.1.0.1']),
  slice('svc2-a', 'apps', 'svc2', ['10.1.0.2', '10.1.0.3']),
  slice('svc3-a', 'other', 'svc3', ['10.1.0.4']),
  {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: meta('grant-service', 'other'),
    spec: {
      from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }],
      to: [{ group: '', kind: 'Service' }],
    },
  },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('ca', 'apps'), data: { 'ca.crt': EXAMPLE_COM_CERT } },
  {
    apiVersion: 'gateway.networking.k8s.io/v1alpha3',
    kind: 'BackendTLSPolicy',
    metadata: meta('btls1', 'apps', { generation: 1 }),
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: 'svc1' }],
      validation: { hostname: 'svc1.example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] },
    },
  },
  {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'ProxyConfig',
    metadata: meta('pc', 'infra', { generation: 1 }),
    spec: { replicas: 2, plugins: [{ name: 'p1', namespace: 'apps' }] },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: meta('grant-pluginin', 'apps'),
    spec: {
      from: [{ group: 'turnpike.dev', kind: 'ProxyConfig', namespace: 'infra' }],
      // Services: the access log's collector (svc1; svc3 in other has no grant for ProxyConfigs).
      to: [
        { group: 'turnpike.dev', kind: 'PluginInstallation' },
        { group: '', kind: 'Service' },
      ],
    },
  },
  {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'PluginInstallation',
    metadata: meta('p1', 'apps', { generation: 1 }),
    spec: { image: 'registry.test/p1:1', type: 'lua' },
  },
  {
    apiVersion: 'turnpike.dev/internal',
    kind: 'PluginFetch',
    metadata: meta('p1', 'apps'),
    status: {
      image: 'registry.test/p1:1',
      observedGeneration: 1,
      fetched: true,
      reason: 'Fetched',
      message: 'ok',
      sha256: 'a'.repeat(64),
      size: 10,
      storage: { configMap: 'turnpike-plugin-p1' },
    },
  },
  {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: meta('r1', 'apps', { generation: 1 }),
    spec: {
      parentRefs: [
        { name: 'gw1', namespace: 'infra' },
        { name: 'gw2', namespace: 'infra' },
      ],
      rules: [
        { backendRefs: [svcRef('svc1')] },
        {
          matches: [{ path: { type: 'PathPrefix', value: '/b' } }],
          backendRefs: [svcRef('svc2'), svcRef('svc3', 'other')],
          filters: [
            { type: 'ExtensionRef', extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'p1' } },
          ],
        },
      ],
    },
  },
  {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: meta('r2', 'other', { generation: 1 }),
    spec: {
      parentRefs: [
        { name: 'gw1', namespace: 'infra' },
        { kind: 'ListenerSet', name: 'ls1', namespace: 'infra' },
      ],
      rules: [{ backendRefs: [svcRef('svc3', 'other')] }],
    },
  },
  {
    apiVersion: GW,
    kind: 'GRPCRoute',
    metadata: meta('r1', 'apps', { generation: 1 }),
    spec: { parentRefs: [{ name: 'gw2', namespace: 'infra' }], rules: [{ backendRefs: [svcRef('svc2')] }] },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1alpha2',
    kind: 'TCPRoute',
    metadata: meta('l1', 'apps', { generation: 1 }),
    spec: {
      parentRefs: [{ name: 'gw3', namespace: 'apps', sectionName: 'tcp' }],
      rules: [{ backendRefs: [svcRef('svc1')] }],
    },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1alpha2',
    kind: 'UDPRoute',
    metadata: meta('l1', 'apps', { generation: 1 }),
    spec: {
      parentRefs: [{ name: 'gw3', namespace: 'apps', sectionName: 'udp' }],
      rules: [{ backendRefs: [svcRef('svc1', 'apps', 53)] }],
    },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1alpha2',
    kind: 'TLSRoute',
    metadata: meta('l2', 'apps', { generation: 1 }),
    spec: {
      parentRefs: [{ name: 'gw3', namespace: 'apps', sectionName: 'tls' }],
      hostnames: ['a.example.com'],
      rules: [{ backendRefs: [svcRef('svc2')] }],
    },
  },
  // An XBackend of type EndpointSelector reached by a route, and a Pod it selects.
  xbackendOf('apps', { app: 'web' }, 8080),
  podOf('p1', 'apps', { app: 'web' }, '10.3.0.1', true),
  {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: meta('xr', 'apps', { generation: 1 }),
    spec: {
      parentRefs: [{ name: 'gw1', namespace: 'infra' }],
      hostnames: ['x.example.com'],
      rules: [{ backendRefs: [{ group: 'gateway.networking.x-k8s.io', kind: 'XBackend', name: 'sel' }] }],
    },
  },
] as KubeObject[];

export type Op =
  | { type: 'upsert'; object: KubeObject }
  | { type: 'delete'; index: number }
  | { type: 'status-only'; index: number }
  | { type: 'same-again'; index: number };
export const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: anyObject.map((object) => ({ type: 'upsert' as const, object })) },
  { weight: 2, arbitrary: fc.nat().map((index) => ({ type: 'delete' as const, index })) },
  { weight: 1, arbitrary: fc.nat().map((index) => ({ type: 'status-only' as const, index })) },
  { weight: 1, arbitrary: fc.nat().map((index) => ({ type: 'same-again' as const, index })) },
);

type MutableSnapshot = Map<string, Map<string, Map<string, KubeObject>>>;

/** Like the engine's store: a new snapshot that copies only the kind store and shard it touches. */
export function withObject(
  snapshot: Snapshot,
  kind: string,
  ns: string,
  name: string,
  object: KubeObject | undefined,
): Snapshot {
  const next: MutableSnapshot = new Map(snapshot as MutableSnapshot);
  const byNs = new Map(next.get(kind) ?? []);
  const shard = new Map(byNs.get(ns) ?? []);
  if (object) shard.set(name, object);
  else shard.delete(name);
  if (shard.size) byNs.set(ns, shard);
  else byNs.delete(ns);
  if (byNs.size) next.set(kind, byNs);
  else next.delete(kind);
  return next;
}

export function objectsOf(snapshot: Snapshot): KubeObject[] {
  const out: KubeObject[] = [];
  for (const kind of [...snapshot.keys()].sort())
    for (const [, shard] of [...snapshot.get(kind)!].sort()) for (const [, o] of [...shard].sort()) out.push(o);
  return out;
}

export function apply(snapshot: Snapshot, o: Op): Snapshot {
  if (o.type === 'upsert')
    return withObject(snapshot, o.object.kind, o.object.metadata.namespace ?? '', o.object.metadata.name, o.object);
  const all = objectsOf(snapshot);
  if (!all.length) return snapshot;
  const target = all[o.index % all.length]!;
  const ns = target.metadata.namespace ?? '';
  if (o.type === 'delete') return withObject(snapshot, target.kind, ns, target.metadata.name, undefined);
  // A status write (our own output coming back) or a relist delivering an equal copy: new identity, nothing new to read.
  const copy = structuredClone(target);
  if (o.type === 'status-only')
    (copy as { status?: unknown }).status = { conditions: [{ type: 'Accepted', status: 'True' }] };
  return withObject(snapshot, target.kind, ns, target.metadata.name, copy);
}

/** The snapshot a history starts from: the coherent base (or not) and some random objects. */
export function startingSnapshot(base: boolean, initial: readonly KubeObject[]): Snapshot {
  let snapshot: Snapshot = new Map();
  for (const o of [...(base ? BASE : []), ...initial]) snapshot = apply(snapshot, { type: 'upsert', object: o });
  return snapshot;
}

/** Arbitrary histories: whether to start from the base, objects to add first, then the steps. */
export const history = fc.tuple(
  fc.boolean(),
  fc.array(anyObject, { maxLength: 12 }),
  fc.array(op, { minLength: 1, maxLength: 30 }),
);
