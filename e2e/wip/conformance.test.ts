// The upstream Gateway API conformance tests that need no traffic, run by the upstream Go suite
// against a real kube-apiserver with kube-controller-manager and a fake kubelet, with the
// controller under deploy/'s RBAC. Prints `conformance: P/T passed` and the failing tests.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from '../harness/cluster.js';
import { conformanceBinary, parseConformance } from '../harness/conformance.js';
import { Controller } from '../harness/controller.js';
import { FakeKubelet } from '../harness/fake-kubelet.js';
import { gatewayClass } from '../harness/fixtures.js';

describe('upstream conformance (status only)', () => {
  let cluster: Cluster;
  let controller: Controller;
  let kubelet: FakeKubelet;
  let binary: string;
  beforeAll(async () => {
    binary = conformanceBinary();
    cluster = await Cluster.start();
    await cluster.startControllerManager();
    kubelet = new FakeKubelet(cluster.admin);
    await kubelet.start();
    controller = new Controller(cluster.controllerKubeconfig);
    await controller.start();
    await controller.ready();
    await cluster.apply(gatewayClass('turnpike'));
  }, 900_000);
  afterAll(async () => {
    kubelet?.stop();
    await controller?.stop();
    await cluster?.stop();
  }, 30_000);

  it('every selected status-only test passes', async () => {
    const output = await new Promise<string>((resolve) => {
      let out = '';
      const p = spawn(binary, ['-test.run', 'TestConformance', '-test.v', '-test.timeout', '25m', '--allow-crds-mismatch'],
        { env: { ...process.env, KUBECONFIG: cluster.adminKubeconfig, TURNPIKE_GATEWAY_CLASS: 'turnpike' }, cwd: cluster.dir });
      p.stdout.on('data', (b) => { out += b; });
      p.stderr.on('data', (b) => { out += b; });
      p.on('close', () => resolve(out));
    });
    const r = parseConformance(output);
    const total = r.passed.length + r.failed.length;
    process.stdout.write(`conformance: ${r.passed.length}/${total} passed\n`);
    if (r.failed.length) process.stdout.write(`failing: ${r.failed.join(', ')}\n`);
    if (r.skipped.length) process.stdout.write(`skipped (features not claimed): ${r.skipped.join(', ')}\n`);
    if (total === 0) process.stdout.write(output.slice(-5000));
    expect(r.failed).toEqual([]);
    expect(total).toBeGreaterThanOrEqual(40);
  }, 1_800_000);
});
