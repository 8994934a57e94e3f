// GatewayStaticAddresses, the conformance test's three steps and what is around them: spec.addresses
// asks for an IP through the Service's spec.loadBalancerIP; the Gateway is Programmed only once the
// load balancer reports that address, and its status lists only requested addresses it holds.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { generatedName, Translator } from '../src/index.js';
import { snapshotFromObjects } from '../src/snapshot.js';
import { cond, gateway, gatewayClass, http, run, sr, statusOf } from './builders.js';

const PROXY_SERVICE = generatedName('infra', 'gw');
const USABLE = '203.0.113.10';
const UNUSABLE = '198.51.100.10';

const CLUSTER_IP = '10.96.0.20';

/** The proxies' Service as the API server holds it, with what the load balancer assigned. */
function proxyService(ingress: string[], spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: PROXY_SERVICE, namespace: 'infra' },
    spec: { type: 'LoadBalancer', clusterIP: CLUSTER_IP, ports: [{ name: 'tcp-80', port: 80 }], ...spec },
    status: { loadBalancer: { ingress: ingress.map((ip) => ({ ip })) } },
  } as KubeObject;
}

const withAddresses = (addresses: Record<string, unknown>[]) => gateway('gw', [http()], { addresses });
const programmed = (r: ReturnType<typeof run>) => cond(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Programmed');

describe('GatewayStaticAddresses', () => {
  it('an unsupported address type: Accepted=False/UnsupportedAddress', () => {
    const r = run([
      gatewayClass(),
      withAddresses([{ type: 'test/fake-invalid-type', value: 'fake' }, { value: USABLE }]),
    ]);
    expect(cond(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Accepted')).toMatchObject({
      status: 'False',
      reason: 'UnsupportedAddress',
    });
  });

  it('a second IP beside the first: Accepted, not Programmed (AddressNotUsable), naming the field', () => {
    const r = run([gatewayClass(), withAddresses([{ value: UNUSABLE }, { value: USABLE }]), proxyService([])]);
    expect(cond(statusOf(r, 'Gateway', 'infra', 'gw').conditions, 'Accepted')).toMatchObject({
      status: 'True',
      reason: 'Accepted',
    });
    expect(programmed(r)).toMatchObject({
      status: 'False',
      reason: 'AddressNotUsable',
      message: expect.stringContaining('spec.addresses[1]: only one static IP address can be requested'),
    });
    // The first is the one requested from the load balancer.
    expect(r.infraIR.gateways.get('infra/gw')?.service.addresses).toEqual([UNUSABLE]);
  });

  it('an address the load balancer does not assign: Programmed=False/AddressNotUsable, saying what it reports', () => {
    const r = run([gatewayClass(), withAddresses([{ value: UNUSABLE }]), proxyService(['203.0.113.99'])]);
    expect(programmed(r)).toMatchObject({
      status: 'False',
      reason: 'AddressNotUsable',
      message: `spec.addresses[0]: the load balancer has not assigned ${UNUSABLE} to Service infra/${PROXY_SERVICE} (it reports: 203.0.113.99)`,
    });
    expect(statusOf(r, 'Gateway', 'infra', 'gw').addresses).toBeUndefined();
  });

  it('the usable address, once assigned: Programmed=True and the status lists exactly it, with its type', () => {
    const r = run([
      gatewayClass(),
      withAddresses([{ type: 'IPAddress', value: USABLE }]),
      proxyService([USABLE, '203.0.113.99']),
    ]);
    expect(programmed(r)).toMatchObject({ status: 'True', reason: 'Programmed' });
    expect(statusOf(r, 'Gateway', 'infra', 'gw').addresses).toEqual([
      { type: 'IPAddress', value: USABLE, routability: '' },
    ]);
  });

  it('a hostname cannot be requested from a LoadBalancer Service; neither can an address with a ClusterIP Service', () => {
    const hostname = run([
      gatewayClass(),
      withAddresses([{ type: 'Hostname', value: 'lb.example.com' }]),
      proxyService([]),
    ]);
    expect(programmed(hostname)).toMatchObject({
      reason: 'AddressNotUsable',
      message: expect.stringContaining('the hostname lb.example.com cannot be requested'),
    });
    expect(hostname.infraIR.gateways.get('infra/gw')?.service.addresses).toEqual([]);
    const pc = {
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ProxyConfig',
      metadata: { name: 'internal', namespace: 'infra' },
      spec: { service: { type: 'ClusterIP' } },
    } as KubeObject;
    const gw = gateway('gw', [http()], {
      addresses: [{ value: USABLE }],
      infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'internal' } },
    });
    const clusterIP = run([gatewayClass(), gw, pc, proxyService([])]);
    expect(programmed(clusterIP)).toMatchObject({
      reason: 'AddressNotUsable',
      message: expect.stringContaining('of type LoadBalancer, and it is ClusterIP'),
    });
  });

  it('addresses without a value leave the choice to us: no request, Programmed as usual', () => {
    const r = run([gatewayClass(), withAddresses([{ type: 'IPAddress' }]), proxyService(['203.0.113.7'])]);
    expect(programmed(r)).toMatchObject({ status: 'True' });
    expect(statusOf(r, 'Gateway', 'infra', 'gw').addresses).toEqual([
      { type: 'IPAddress', value: '203.0.113.7', routability: '' },
    ]);
  });

  it('incrementally, the load balancer assigning the address flips Programmed, as a fresh translation says', () => {
    const t = new Translator();
    const base = [gatewayClass(), withAddresses([{ value: USABLE }])];
    const before = t.translate(snapshotFromObjects([...base, proxyService([])]));
    expect(programmed(before)?.status).toBe('False');
    const after = t.translate(snapshotFromObjects([...base, proxyService([USABLE])]));
    expect(programmed(after)?.status).toBe('True');
    expect(statusOf(after, 'Gateway', 'infra', 'gw')).toEqual(
      statusOf(run([...base, proxyService([USABLE])]), 'Gateway', 'infra', 'gw'),
    );
  });
});

// GEP-5093 (Gateway API v1.7.0, experimental): each spec.addresses entry may ask for a routability.
describe('GatewayAddressRoutability, GatewayAddressRoutabilityCluster', () => {
  const SENTINEL = 'testing.x-k8s.io/sentinel';
  const status = (r: ReturnType<typeof run>) => statusOf(r, 'Gateway', 'infra', 'gw');
  const assigned = (r: ReturnType<typeof run>) => cond(status(r).conditions, 'AddressesAssigned');
  const serviceType = (r: ReturnType<typeof run>) => r.infraIR.gateways.get('infra/gw')?.service.type;
  const clusterIPService = proxyService([], { type: 'ClusterIP' });

  it('"For an `IPAddress` result, `Cluster` MUST use a ClusterIP": a ClusterIP Service, its ClusterIP reported as Cluster', () => {
    const r = run([gatewayClass(), withAddresses([{ type: 'IPAddress', routability: 'Cluster' }]), clusterIPService]);
    expect(serviceType(r)).toBe('ClusterIP');
    expect(status(r).addresses).toEqual([{ type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' }]);
    expect(assigned(r)).toMatchObject({ status: 'True', reason: 'AddressesAssigned', observedGeneration: 1 });
    expect(programmed(r)).toMatchObject({ status: 'True', reason: 'Programmed' });
  });

  it("a Cluster entry is never answered with the load balancer's address, nor an empty one with nothing", () => {
    // The ClusterIP of a LoadBalancer Service is a ClusterIP too; the ingress address is not.
    const r = run([gatewayClass(), withAddresses([{ routability: 'Cluster' }]), proxyService([USABLE])]);
    expect(status(r).addresses).toEqual([{ type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' }]);
  });

  it('"An unset or empty request matches either an explicit empty value or `Cluster`": one address per entry, in either order', () => {
    for (const addresses of [
      [{}, { routability: 'Cluster' }],
      [{ routability: 'Cluster' }, { routability: '' }],
    ]) {
      const r = run([gatewayClass(), withAddresses(addresses), proxyService([USABLE])]);
      // Not every entry asks for Cluster: the load balancer stays, for the other.
      expect(serviceType(r)).toBe('LoadBalancer');
      expect(new Set(status(r).addresses)).toEqual(
        new Set([
          { type: 'IPAddress', value: USABLE, routability: '' },
          { type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' },
        ]),
      );
      expect(sr(status(r).conditions, 'AddressesAssigned')).toBe('True/AddressesAssigned');
    }
  });

  it('"leave that entry unsatisfied and report it": an unsatisfiable routability is named, the other entries kept, Programmed', () => {
    const r = run([
      gatewayClass(),
      withAddresses([{ routability: 'Cluster' }, { value: USABLE, routability: 'example.com/vpc' }]),
      proxyService([USABLE]),
    ]);
    expect(status(r).addresses).toEqual([{ type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' }]);
    // "MUST set `AddressesAssigned=False` with reason `PartiallyAssigned`, with a message enumerating the
    // unsatisfied entries"; the Gateway is programmed with the addresses it has.
    expect(assigned(r)).toMatchObject({ status: 'False', reason: 'PartiallyAssigned' });
    expect(assigned(r)!.message).toBe(
      '1 of 2 spec.addresses entries not assigned: spec.addresses[1]: routability "example.com/vpc" is an ' +
        'implementation-specific scope Turnpike does not offer (it offers the default, Cluster and ' +
        `${SENTINEL})`,
    );
    expect(programmed(r)).toMatchObject({ status: 'True', reason: 'Programmed' });
    // Its value is never requested from the load balancer: that would be another scope.
    expect(r.infraIR.gateways.get('infra/gw')!.service.addresses).toEqual([]);
  });

  it('"If ***no*** entries can be satisfied, the Gateway MUST NOT be programmed": Programmed=False/AddressNotAssigned, NotAssigned', () => {
    const r = run([
      gatewayClass(),
      withAddresses([
        { value: USABLE, routability: 'example.com/internal' },
        // "MUST treat an unrecognized routability value as unsatisfiable" (a file the API server never saw).
        { routability: 'Internet' },
        // "Other values using the `testing.x-k8s.io` prefix are reserved and MUST be treated as unsupported".
        { routability: 'testing.x-k8s.io/other' },
        // Cluster for a Hostname: "Otherwise, it MUST leave the request unsatisfied."
        { type: 'Hostname', routability: 'Cluster' },
      ]),
      proxyService([USABLE]),
    ]);
    expect(programmed(r)).toMatchObject({ status: 'False', reason: 'AddressNotAssigned' });
    expect(assigned(r)).toMatchObject({ status: 'False', reason: 'NotAssigned' });
    for (const part of [
      'spec.addresses[0]: routability "example.com/internal" is an implementation-specific scope',
      'spec.addresses[1]: routability "Internet" is not one Turnpike recognizes',
      'spec.addresses[2]: routability "testing.x-k8s.io/other" is reserved for conformance testing',
      'spec.addresses[3]: routability Cluster is offered for IPAddress entries only',
    ]) {
      expect(programmed(r)!.message).toContain(part);
      expect(assigned(r)!.message).toContain(part);
    }
    expect(status(r).addresses).toBeUndefined();
    expect(r.infraIR.gateways.get('infra/gw')!.service.addresses).toEqual([]);
  });

  it('"MUST support and report" testing.x-k8s.io/sentinel: the default address, with that routability', () => {
    const r = run([
      gatewayClass(),
      withAddresses([{ type: 'IPAddress', routability: SENTINEL }]),
      proxyService([USABLE]),
    ]);
    expect(status(r).addresses).toEqual([{ type: 'IPAddress', value: USABLE, routability: SENTINEL }]);
    expect(sr(status(r).conditions, 'AddressesAssigned')).toBe('True/AddressesAssigned');
  });

  it('"exactly one distinct matching address for every satisfied spec entry": two Cluster entries, one ClusterIP', () => {
    const single = run([
      gatewayClass(),
      withAddresses([{ routability: 'Cluster' }, { routability: 'Cluster' }]),
      clusterIPService,
    ]);
    expect(status(single).addresses).toEqual([{ type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' }]);
    expect(assigned(single)).toMatchObject({ status: 'False', reason: 'PartiallyAssigned' });
    expect(assigned(single)!.message).toContain(
      `spec.addresses[1]: no ClusterIP of the proxies' Service infra/${PROXY_SERVICE} is left for it (it has: ${CLUSTER_IP})`,
    );
    // Dual stack: a ClusterIP per family, one for each.
    const dual = run([
      gatewayClass(),
      withAddresses([{ routability: 'Cluster' }, { routability: 'Cluster' }]),
      proxyService([], { type: 'ClusterIP', clusterIPs: [CLUSTER_IP, 'fd00:10:96::20'] }),
    ]);
    expect(status(dual).addresses.map((a: { value: string }) => a.value)).toEqual([CLUSTER_IP, 'fd00:10:96::20']);
    expect(sr(status(dual).conditions, 'AddressesAssigned')).toBe('True/AddressesAssigned');
  });

  it('a Cluster entry with a value is satisfied by that ClusterIP only; Turnpike does not choose ClusterIPs', () => {
    const held = run([
      gatewayClass(),
      withAddresses([{ value: CLUSTER_IP, routability: 'Cluster' }]),
      clusterIPService,
    ]);
    expect(status(held).addresses).toEqual([{ type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' }]);
    const other = run([
      gatewayClass(),
      withAddresses([{ value: '10.96.0.99', routability: 'Cluster' }]),
      clusterIPService,
    ]);
    expect(programmed(other)).toMatchObject({ status: 'False', reason: 'AddressNotAssigned' });
    expect(assigned(other)!.message).toContain(
      `spec.addresses[0]: 10.96.0.99 is not a ClusterIP of the proxies' Service infra/${PROXY_SERVICE} (it has: ` +
        `${CLUSTER_IP}); Turnpike does not choose a ClusterIP, the API server allocates it`,
    );
    // Never a loadBalancerIP, never a clusterIP asked of the API server.
    expect(other.infraIR.gateways.get('infra/gw')!.service).toMatchObject({ type: 'ClusterIP', addresses: [] });
  });

  it('"The condition MUST be omitted until the controller has reconciled address assignment": not before the Service exists', () => {
    const r = run([gatewayClass(), withAddresses([{ routability: 'Cluster' }])]);
    expect(assigned(r)).toBeUndefined();
    expect(programmed(r)).toMatchObject({
      status: 'False',
      reason: 'AddressNotAssigned',
      message: expect.stringContaining(`waiting for the proxies' Service infra/${PROXY_SERVICE} to be created`),
    });
    // An entry nothing of ours can satisfy is known at once.
    const refused = run([gatewayClass(), withAddresses([{ routability: 'example.com/x' }])]);
    expect(assigned(refused)).toMatchObject({ status: 'False', reason: 'NotAssigned' });
  });

  it('without spec.addresses: routability on every status address, AddressesAssigned once the Service has one', () => {
    const none = run([gatewayClass(), gateway('gw', [http()])]);
    expect(assigned(none)).toBeUndefined();
    expect(status(none).addresses).toBeUndefined();
    // "An implementation claiming `GatewayAddressRoutabilityCluster` MUST report `Cluster` in status when it
    // provides the `Cluster` guarantee; otherwise it MUST explicitly report an empty value."
    const lb = run([gatewayClass(), gateway('gw', [http()]), proxyService([USABLE])]);
    expect(status(lb).addresses).toEqual([{ type: 'IPAddress', value: USABLE, routability: '' }]);
    expect(sr(status(lb).conditions, 'AddressesAssigned')).toBe('True/AddressesAssigned');
    const internal = run([gatewayClass(), gateway('gw', [http()]), clusterIPService]);
    expect(status(internal).addresses).toEqual([{ type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' }]);
    expect(serviceType(internal)).toBe('LoadBalancer');
  });

  it('a ProxyConfig\'s Service type is kept (a Cluster address "MAY be routable outside the cluster"); the ClusterIP answers', () => {
    const pc = {
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ProxyConfig',
      metadata: { name: 'exposed', namespace: 'infra' },
      spec: { service: { type: 'NodePort' } },
    } as KubeObject;
    const gw = gateway('gw', [http()], {
      addresses: [{ routability: 'Cluster' }],
      infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'exposed' } },
    });
    const r = run([gatewayClass(), gw, pc, proxyService([], { type: 'NodePort' })]);
    expect(serviceType(r)).toBe('NodePort');
    expect(status(r).addresses).toEqual([{ type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' }]);
  });

  it('a Service no longer of type LoadBalancer: its stale ingress is not an address of the Gateway', () => {
    const r = run([gatewayClass(), withAddresses([{}]), proxyService([USABLE], { type: 'ClusterIP' })]);
    expect(status(r).addresses).toEqual([{ type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' }]);
  });

  it('a static address the load balancer does not hold beside a Cluster entry: AddressNotUsable, PartiallyAssigned', () => {
    const r = run([
      gatewayClass(),
      withAddresses([{ value: UNUSABLE }, { routability: 'Cluster' }]),
      proxyService(['203.0.113.99']),
    ]);
    expect(programmed(r)).toMatchObject({ status: 'False', reason: 'AddressNotUsable' });
    expect(assigned(r)).toMatchObject({ status: 'False', reason: 'PartiallyAssigned' });
    expect(assigned(r)!.message).toContain(`spec.addresses[0]: the load balancer has not assigned ${UNUSABLE}`);
    expect(status(r).addresses).toEqual([{ type: 'IPAddress', value: CLUSTER_IP, routability: 'Cluster' }]);
  });

  it('a Gateway that is not accepted says nothing of its addresses', () => {
    const r = run([
      gatewayClass(),
      withAddresses([{ type: 'test/fake-invalid-type', value: 'fake' }, { routability: 'Cluster' }]),
      clusterIPService,
    ]);
    expect(sr(status(r).conditions, 'Accepted')).toBe('False/UnsupportedAddress');
    expect(assigned(r)).toBeUndefined();
  });

  it('incrementally, the Service appearing and changing type gives what a fresh translation gives', () => {
    const t = new Translator();
    const base = [gatewayClass(), withAddresses([{}, { routability: 'Cluster' }])];
    for (const svc of [[], [proxyService([])], [proxyService([USABLE])], [clusterIPService], []]) {
      const snapshot = snapshotFromObjects([...base, ...svc]);
      expect(status(t.translate(snapshot))).toEqual(status(new Translator().translate(snapshot)));
    }
  });
});
