// The upstream Gateway API conformance tests that need no traffic, run by the upstream Go suite
// against a real kube-apiserver with kube-controller-manager and a fake kubelet, with the
// controller under deploy/'s RBAC. Prints `conformance: P/T passed` and the failing tests. The suite
// looks for the generated proxy objects in the Gateway's namespace (GatewayInfrastructureMetadata),
// so the controller runs as deploy/overlays/gateway-namespace configures it.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, waitFor } from '../harness/cluster.js';
import { conformanceBinary, parseConformance } from '../harness/conformance.js';
import { Controller } from '../harness/controller.js';
import { FakeLoadBalancer } from '../harness/fake-load-balancer.js';
import { FakeKubelet } from '../harness/fake-kubelet.js';
import { gatewayClass } from '../harness/fixtures.js';
import { applyGatewayNamespaceRbac, gatewayNamespaceArgs } from '../harness/proxies.js';

describe('upstream conformance (status only)', () => {
  let cluster: Cluster;
  let controller: Controller;
  let kubelet: FakeKubelet;
  let loadBalancer: FakeLoadBalancer;
  let binary: string;
  beforeAll(async () => {
    binary = conformanceBinary();
    cluster = await Cluster.start();
    await cluster.startControllerManager();
    kubelet = new FakeKubelet(cluster.admin);
    await kubelet.start();
    // GatewayStaticAddresses asks for a usable and an unusable address: the pool decides which is which.
    loadBalancer = new FakeLoadBalancer(cluster.admin, '203.0.113');
    loadBalancer.start();
    await applyGatewayNamespaceRbac(cluster);
    controller = new Controller(cluster.controllerKubeconfig, gatewayNamespaceArgs());
    await controller.start();
    await controller.ready();
    await cluster.apply(gatewayClass('turnpike'));
    // The suite reads the claimed features from the class status: wait until it is written.
    await waitFor('GatewayClass accepted with its features', async () => {
      const gc = await cluster.get(gatewayClass('turnpike'));
      const st = gc?.status as
        { supportedFeatures?: unknown[]; conditions?: { type: string; status: string }[] } | undefined;
      return st?.supportedFeatures?.length && st.conditions?.some((c) => c.type === 'Accepted' && c.status === 'True')
        ? true
        : undefined;
    });
  }, 900_000);
  afterAll(async () => {
    kubelet?.stop();
    loadBalancer?.stop();
    await controller?.stop();
    await cluster?.stop();
  }, 30_000);

  it('every selected status-only test passes', async () => {
    const output = await new Promise<string>((resolve) => {
      let out = '';
      const p = spawn(
        binary,
        [
          '-test.run',
          'TestConformance',
          '-test.v',
          '-test.timeout',
          '25m',
          '--allow-crds-mismatch',
          '--usable-address',
          '203.0.113.10',
          '--unusable-address',
          '198.51.100.10',
        ],
        {
          env: { ...process.env, KUBECONFIG: cluster.adminKubeconfig, TURNPIKE_GATEWAY_CLASS: 'turnpike' },
          cwd: cluster.dir,
        },
      );
      // The whole Go output is kept in $TMPDIR/turnpike-conformance.log for diagnosis.
      p.stdout.on('data', (b) => {
        out += b;
      });
      p.stderr.on('data', (b) => {
        out += b;
      });
      p.on('close', () => resolve(out));
    });
    writeFileSync(join(tmpdir(), 'turnpike-conformance.log'), output);
    const r = parseConformance(output);
    const total = r.passed.length + r.failed.length;
    process.stdout.write(`conformance: ${r.passed.length}/${total} passed\n`);
    if (r.failed.length) process.stdout.write(`failing: ${r.failed.join(', ')}\n`);
    if (r.skipped.length) process.stdout.write(`skipped (features not claimed): ${r.skipped.join(', ')}\n`);
    if (total === 0) process.stdout.write(output.slice(-5000));
    // No selected test may open a connection: Gateway addresses here are cluster IPs that lead
    // nowhere on this machine (and must never be dialled).
    expect(output).not.toMatch(/^\s+(tls|http|tcp|udp|grpc|roundtripper|weight)\.go:\d+:/m);
    expect(r.failed).toEqual([]);
    const only = process.env.TURNPIKE_CONFORMANCE_ONLY?.split(',').filter(Boolean);
    expect(total).toBeGreaterThanOrEqual(only ? only.length : 40);
  }, 1_800_000);
});
