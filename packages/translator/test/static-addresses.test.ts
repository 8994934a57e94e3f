// GatewayStaticAddresses, the conformance test's three steps and what is around them: spec.addresses
// asks for an IP through the Service's spec.loadBalancerIP; the Gateway is Programmed only once the
// load balancer reports that address, and its status lists only requested addresses it holds.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { generatedName, Translator } from '../src/index.js';
import { snapshotFromObjects } from '../src/snapshot.js';
import { cond, gateway, gatewayClass, http, run, statusOf } from './builders.js';

const PROXY_SERVICE = generatedName('infra', 'gw');
const USABLE = '203.0.113.10';
const UNUSABLE = '198.51.100.10';

/** The proxies' Service as the API server holds it, with what the load balancer assigned. */
function proxyService(ingress: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: PROXY_SERVICE, namespace: 'infra' },
    spec: { type: 'LoadBalancer', clusterIP: '10.96.0.20', ports: [{ name: 'tcp-80', port: 80 }] },
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
    expect(statusOf(r, 'Gateway', 'infra', 'gw').addresses).toEqual([{ type: 'IPAddress', value: USABLE }]);
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
    expect(statusOf(r, 'Gateway', 'infra', 'gw').addresses).toEqual([{ type: 'IPAddress', value: '203.0.113.7' }]);
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

describe('address routability (Gateway API v1.7, not supported)', () => {
  it('a Cluster request is not assigned: Programmed=False/AddressNotAssigned, and the load balancer IP is not listed', () => {
    const r = run([gatewayClass(), withAddresses([{ routability: 'Cluster' }]), proxyService([USABLE])]);
    expect(programmed(r)).toMatchObject({ status: 'False', reason: 'AddressNotAssigned' });
    expect(programmed(r)!.message).toContain('spec.addresses[0].routability: "Cluster" cannot be satisfied');
    expect(statusOf(r, 'Gateway', 'infra', 'gw').addresses ?? []).toEqual([]);
  });

  it('a prefixed routability with a value never becomes the loadBalancerIP', () => {
    const r = run([
      gatewayClass(),
      withAddresses([{ value: USABLE, routability: 'example.com/internal' }]),
      proxyService([USABLE]),
    ]);
    expect(programmed(r)).toMatchObject({ status: 'False', reason: 'AddressNotAssigned' });
    expect(r.infraIR.gateways.get('infra/gw')!.service.addresses).toEqual([]);
  });

  it('an empty routability is the default scope: the Service address is reported as before', () => {
    const r = run([gatewayClass(), withAddresses([{ routability: '' }]), proxyService([USABLE])]);
    expect(programmed(r)).toMatchObject({ status: 'True' });
    expect(statusOf(r, 'Gateway', 'infra', 'gw').addresses).toEqual([{ type: 'IPAddress', value: USABLE }]);
  });
});
