// BackendTLSPolicy (backend-tls-policies.ts, stages/policy-ancestors-stage.ts): ancestors beyond 16, and CAs
// from a ClusterTrustBundle (GEP-5075), which the cluster may not serve.
import { describe, expect, it } from '@jest/globals';
import { Translator, snapshotFromObjects } from '../src/index.js';
import {
  cond,
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  irRoutes,
  run,
  service,
  statusOf,
} from './builders.js';
import { EXAMPLE_COM_CERT, OTHER_TEST_CERT } from './tls-fixtures.js';
import { rule, toGw } from './route-fixtures.js';

describe('BackendTLSPolicy ancestors beyond 16', () => {
  it('lists 16 ancestors and says on the last one how many more there are (Aggregated); the Gateways beyond may not use the Service', () => {
    const gws = Array.from({ length: 18 }, (_, i) => gateway(`gw-${String(i).padStart(2, '0')}`, [http()]));
    const ca = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ca', namespace: 'apps' },
      data: { 'ca.crt': EXAMPLE_COM_CERT },
    };
    const policy = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'p', namespace: 'apps', generation: 1 },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'a' }],
        validation: { hostname: 'example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] },
      },
    };
    const r = run([
      gatewayClass(),
      ...gws,
      service('a'),
      endpointSlice('a'),
      ca as never,
      policy as never,
      httpRoute('r', {
        parentRefs: gws.map((g) => ({ name: g.metadata.name, namespace: 'infra' })),
        rules: [rule('a')],
      }),
    ]);
    const ancestors = statusOf(r, 'BackendTLSPolicy', 'apps', 'p').ancestors as {
      ancestorRef: { name: string };
      conditions: unknown;
    }[];
    expect(ancestors).toHaveLength(16);
    expect(ancestors.map((a) => a.ancestorRef.name)).toEqual(gws.slice(0, 16).map((g) => g.metadata.name));
    const agg = cond(ancestors[15]!.conditions, 'Aggregated');
    expect(agg).toMatchObject({ status: 'True', reason: 'Aggregated' });
    expect(agg!.message).toContain('2 more are not listed: infra/gw-16, infra/gw-17');
    expect(ancestors.slice(0, 15).every((a) => cond(a.conditions, 'Aggregated') === undefined)).toBe(true);
    // The policy is unimplementable for the Gateways beyond the 16th: their rule answers 500 and
    // the route says so on those parents only; the listed ones serve the Service over TLS.
    const parents = statusOf(r, 'HTTPRoute', 'apps', 'r').parents as {
      parentRef: { name: string };
      conditions: unknown;
    }[];
    const resolved = (gw: string) => cond(parents.find((p) => p.parentRef.name === gw)!.conditions, 'ResolvedRefs');
    expect(resolved('gw-17')).toMatchObject({ status: 'False', reason: 'InvalidBackendTLSPolicy' });
    expect(resolved('gw-17')!.message).toContain('BackendTLSPolicy apps/p already lists 16 Gateways');
    expect(resolved('gw-15')).toMatchObject({ status: 'True' });
    const route = (gw: string) =>
      r.xdsIR.gateways.get(`infra/${gw}`)!.ports[0]!.listeners[0]!.virtualHosts![0]!.routes[0]!;
    expect(route('gw-16').directResponse).toEqual({ status: 500 });
    expect(r.xdsIR.gateways.get('infra/gw-16')!.clusters).toEqual([]);
    expect(route('gw-00').backends).toEqual([{ cluster: 'apps/a/8080', weight: 1 }]);
    expect(r.xdsIR.gateways.get('infra/gw-00')!.clusters[0]!.tls?.policy).toBe('apps/p');
  });

  it('incrementally: when a Gateway stops routing to the Service, the next one beyond the 16th may use it again, as a fresh translation says', () => {
    const gws = Array.from({ length: 18 }, (_, i) => gateway(`gw-${String(i).padStart(2, '0')}`, [http()]));
    const ca = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ca', namespace: 'apps' },
      data: { 'ca.crt': EXAMPLE_COM_CERT },
    };
    const policy = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'p', namespace: 'apps', generation: 1 },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'a' }],
        validation: { hostname: 'example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] },
      },
    };
    const objects = (parents: string[]) => [
      gatewayClass(),
      ...gws,
      service('a'),
      endpointSlice('a'),
      ca as never,
      policy as never,
      httpRoute('r', { parentRefs: parents.map((name) => ({ name, namespace: 'infra' })), rules: [rule('a')] }),
    ];
    const all = gws.map((g) => g.metadata.name);
    const t = new Translator();
    t.translate(snapshotFromObjects(objects(all)));
    const fewer = all.filter((n) => n !== 'gw-03');
    const { result, changes } = t.translateWithChanges(snapshotFromObjects(objects(fewer)));
    expect(JSON.stringify(result)).toBe(
      JSON.stringify(new Translator().translate(snapshotFromObjects(objects(fewer)))),
    );
    expect(changes.gateways).toContain('infra/gw-16');
    expect(result.xdsIR.gateways.get('infra/gw-16')!.clusters[0]!.tls?.policy).toBe('apps/p');
    expect(result.xdsIR.gateways.get('infra/gw-17')!.clusters).toEqual([]);
  });
});

describe('BackendTLSPolicy CA from a ClusterTrustBundle', () => {
  const policy = (ref: Record<string, unknown>) =>
    ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'p', namespace: 'apps', generation: 1 },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'a' }],
        validation: { hostname: 'example.com', caCertificateRefs: [ref] },
      },
    }) as never;
  const base = [
    gatewayClass(),
    gateway('gw', [http()]),
    service('a'),
    endpointSlice('a'),
    httpRoute('r', { parentRefs: [toGw()], rules: [rule('a')] }),
  ];
  const ctb = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'ClusterTrustBundle',
    metadata: { name: 'corp-ca' },
    spec: { trustBundle: EXAMPLE_COM_CERT },
  } as never;

  const served = (isServed: boolean) =>
    ({
      apiVersion: 'turnpike.dev/internal',
      kind: 'ServedAPI',
      metadata: { name: 'clustertrustbundles.certificates.k8s.io' },
      status: isServed ? { served: true, version: 'v1' } : { served: false },
    }) as never;
  const conditionsOf = (r: ReturnType<typeof run>) =>
    (statusOf(r, 'BackendTLSPolicy', 'apps', 'p').ancestors as { conditions: unknown }[])[0]!.conditions;
  const ctbRef = { group: 'certificates.k8s.io', kind: 'ClusterTrustBundle', name: 'corp-ca' };

  it('a ClusterTrustBundle supplies the CA bundle of the cluster (with or without the served fact)', () => {
    for (const fact of [[], [served(true)]]) {
      const r = run([...base, ctb, policy(ctbRef), ...fact]);
      expect(cond(conditionsOf(r), 'Accepted')?.status).toBe('True');
      expect(cond(conditionsOf(r), 'ResolvedRefs')?.status).toBe('True');
      expect(r.xdsIR.gateways.get('infra/gw')!.clusters[0]!.tls?.caBundle).toBe(EXAMPLE_COM_CERT);
    }
  });

  it('a missing ClusterTrustBundle is named, and the policy has no valid CA', () => {
    const r = run([...base, policy({ group: 'certificates.k8s.io', kind: 'ClusterTrustBundle', name: 'absent' })]);
    const conds = (statusOf(r, 'BackendTLSPolicy', 'apps', 'p').ancestors as { conditions: unknown }[])[0]!.conditions;
    expect(cond(conds, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidCACertificateRef' });
    expect(cond(conds, 'ResolvedRefs')!.message).toContain('ClusterTrustBundle absent not found');
    expect(cond(conds, 'Accepted')).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
  });

  it('an empty or unparsable trust bundle is InvalidCACertificateRef; the backend fails closed (500)', () => {
    for (const [trustBundle, problem] of [
      ['', 'spec.trustBundle is empty'],
      [
        '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----',
        'spec.trustBundle holds a certificate that does not parse',
      ],
    ]) {
      const bad = { ...(ctb as object), spec: { trustBundle } } as never;
      const r = run([...base, bad, policy(ctbRef)]);
      expect(cond(conditionsOf(r), 'ResolvedRefs')).toMatchObject({
        status: 'False',
        reason: 'InvalidCACertificateRef',
        message: `spec.validation.caCertificateRefs[0]: ClusterTrustBundle corp-ca: ${problem}`,
      });
      expect(cond(conditionsOf(r), 'Accepted')).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
      expect(irRoutes(r)[0].directResponse).toEqual({ status: 500 });
    }
  });

  it('when the cluster does not serve the API, the reference is InvalidKind (not "not found"), even with the object at hand', () => {
    const r = run([...base, ctb, policy(ctbRef), served(false)]);
    expect(cond(conditionsOf(r), 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'InvalidKind',
      message:
        "spec.validation.caCertificateRefs[0]: ClusterTrustBundle (certificates.k8s.io) is not served by this cluster's API server",
    });
    expect(cond(conditionsOf(r), 'Accepted')).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
    expect(irRoutes(r)[0].directResponse).toEqual({ status: 500 });
  });

  it('a ClusterTrustBundle of the core group is another kind (InvalidKind): only certificates.k8s.io names it', () => {
    const r = run([...base, ctb, policy({ ...ctbRef, group: '' })]);
    expect(cond(conditionsOf(r), 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidKind' });
    expect(cond(conditionsOf(r), 'ResolvedRefs')!.message).toContain('ClusterTrustBundle is not supported');
  });

  it('incrementally: a changed, deleted or unserved bundle re-derives the policy and its cluster as a fresh translation does', () => {
    const t = new Translator();
    const steps = [
      [ctb],
      [{ ...(ctb as object), spec: { trustBundle: OTHER_TEST_CERT } } as never],
      [],
      [ctb, served(false)],
      [ctb, served(true)],
    ];
    const reasons: (string | undefined)[] = [];
    for (const extra of steps) {
      const snapshot = snapshotFromObjects([...base, policy(ctbRef), ...extra]);
      const result = t.translate(snapshot);
      expect(JSON.stringify(result)).toBe(JSON.stringify(new Translator().translate(snapshot)));
      reasons.push(
        result.xdsIR.gateways.get('infra/gw')!.clusters[0]?.tls?.caBundle === OTHER_TEST_CERT
          ? 'other'
          : cond(conditionsOf(result), 'ResolvedRefs')?.reason,
      );
    }
    expect(reasons).toEqual(['ResolvedRefs', 'other', 'InvalidCACertificateRef', 'InvalidKind', 'ResolvedRefs']);
  });
});

describe('BackendTLSPolicy whose sectionName names no port of its Service', () => {
  // LocalPolicyTargetReferenceWithSectionName: "If a SectionName is specified, but does not exist on the
  // targeted object, the Policy must fail to attach, and the policy implementation should record a
  // `ResolvedRefs` or similar Condition in the Policy's status."
  const ports = [
    { name: 'http', port: 8080, protocol: 'TCP' },
    { name: 'https', port: 8443, protocol: 'TCP' },
  ];
  const ca = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'ca', namespace: 'apps' },
    data: { 'ca.crt': EXAMPLE_COM_CERT },
  } as never;
  const policy = (name: string, targetRefs: Record<string, unknown>[], creationTimestamp = '2024-01-01T00:00:00Z') =>
    ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name, namespace: 'apps', generation: 2, creationTimestamp },
      spec: {
        targetRefs: targetRefs.map((t) => ({ group: '', kind: 'Service', ...t })),
        validation: { hostname: 'example.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] },
      },
    }) as never;
  const to = (svc: string, port: number) => ({ backendRefs: [{ name: svc, port }] });
  type Ancestor = { ancestorRef: { name: string }; conditions: unknown };
  const ancestorsOf = (r: ReturnType<typeof run>, name: string) =>
    statusOf(r, 'BackendTLSPolicy', 'apps', name).ancestors as Ancestor[];

  it('fails to attach: Accepted=False (TargetNotFound) naming the section and the ports; the traffic stays plaintext', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('a', 'apps', ports),
      endpointSlice('a'),
      ca,
      policy('p', [{ name: 'a', sectionName: 'htps' }]),
      httpRoute('r', { parentRefs: [toGw()], rules: [to('a', 8443)] }),
    ]);
    const [only, ...more] = ancestorsOf(r, 'p');
    expect(more).toEqual([]);
    expect(only!.ancestorRef.name).toBe('gw');
    expect(cond(only!.conditions, 'Accepted')).toMatchObject({
      status: 'False',
      reason: 'TargetNotFound',
      observedGeneration: 2,
      message: expect.stringContaining(
        'spec.targetRefs[0].sectionName: Service apps/a has no port named "htps" (its ports: http, https)',
      ),
    });
    // The policy is not attached to any port: no port gets TLS from it, and the route is not broken by it.
    expect(r.xdsIR.gateways.get('infra/gw')!.clusters.map((c) => [c.name, c.tls])).toEqual([
      ['apps/a/8443', undefined],
    ]);
    const route = statusOf(r, 'HTTPRoute', 'apps', 'r').parents[0].conditions;
    expect([cond(route, 'Accepted')?.status, cond(route, 'ResolvedRefs')?.status]).toEqual(['True', 'True']);
  });

  it('per ancestor: the Gateway reached through the port it names has it Accepted, the one reached through the missing section does not', () => {
    const r = run([
      gatewayClass(),
      gateway('gw-a', [http()]),
      gateway('gw-b', [http()]),
      service('a', 'apps', ports),
      service('b', 'apps', ports),
      endpointSlice('a'),
      endpointSlice('b'),
      ca,
      policy('p', [
        { name: 'a', sectionName: 'https' },
        { name: 'b', sectionName: 'tls' },
      ]),
      httpRoute('ra', { parentRefs: [{ name: 'gw-a', namespace: 'infra' }], rules: [to('a', 8443)] }),
      httpRoute('rb', { parentRefs: [{ name: 'gw-b', namespace: 'infra' }], rules: [to('b', 8443)] }),
    ]);
    const byGateway = Object.fromEntries(
      ancestorsOf(r, 'p').map((a) => [a.ancestorRef.name, cond(a.conditions, 'Accepted')?.reason]),
    );
    expect(byGateway).toEqual({ 'gw-a': 'Accepted', 'gw-b': 'TargetNotFound' });
    expect(r.xdsIR.gateways.get('infra/gw-a')!.clusters[0]!.tls?.policy).toBe('apps/p');
    expect(r.xdsIR.gateways.get('infra/gw-b')!.clusters[0]!.tls).toBeUndefined();
  });

  it('a missing section wins no conflict: an older policy for the whole Service still applies, and the newer one says why it does not', () => {
    const r = run([
      gatewayClass(),
      gateway('gw', [http()]),
      service('a', 'apps', ports),
      endpointSlice('a'),
      ca,
      policy('whole', [{ name: 'a' }], '2024-01-01T00:00:00Z'),
      policy('typo', [{ name: 'a', sectionName: 'htps' }], '2024-02-01T00:00:00Z'),
      httpRoute('r', { parentRefs: [toGw()], rules: [to('a', 8443)] }),
    ]);
    expect(r.xdsIR.gateways.get('infra/gw')!.clusters[0]!.tls?.policy).toBe('apps/whole');
    expect(cond(ancestorsOf(r, 'whole')[0]!.conditions, 'Accepted')?.reason).toBe('Accepted');
    expect(cond(ancestorsOf(r, 'typo')[0]!.conditions, 'Accepted')?.reason).toBe('TargetNotFound');
  });

  it('incrementally: the Service gaining a port of that name attaches the policy, as a fresh translation says', () => {
    const objects = (svcPorts: Record<string, unknown>[]) => [
      gatewayClass(),
      gateway('gw', [http()]),
      service('a', 'apps', svcPorts),
      endpointSlice('a'),
      ca,
      policy('p', [{ name: 'a', sectionName: 'htps' }]),
      httpRoute('r', { parentRefs: [toGw()], rules: [to('a', 8443)] }),
    ];
    const renamed = [ports[0]!, { ...ports[1]!, name: 'htps' }];
    const t = new Translator();
    t.translate(snapshotFromObjects(objects(ports)));
    for (const next of [renamed, ports]) {
      const result = t.translate(snapshotFromObjects(objects(next)));
      expect(JSON.stringify(result)).toBe(
        JSON.stringify(new Translator().translate(snapshotFromObjects(objects(next)))),
      );
    }
    const attached = t.translate(snapshotFromObjects(objects(renamed)));
    expect(attached.xdsIR.gateways.get('infra/gw')!.clusters[0]!.tls?.policy).toBe('apps/p');
    expect(cond(ancestorsOf(attached, 'p')[0]!.conditions, 'Accepted')?.reason).toBe('Accepted');
  });
});
