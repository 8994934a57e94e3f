// A Pod in a directory of manifests is input as it is from a cluster: an XBackend of type EndpointSelector
// (GEP-4894) in the same files has its address for an endpoint, and the Pod is held slimmed (slimPod):
// the printed resources carry its labels, addresses and Ready condition, not its spec.
import { describe, expect, it } from '@jest/globals';
import { MANIFEST, tmp, turnpike, write } from './cli-helpers.js';

const FILES = `${MANIFEST}---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: pods, namespace: apps}
spec:
  type: EndpointSelector
  port: {number: 8080}
  endpointSelector: {matchLabels: {app: web}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: pods}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: apps, labels: {app: web}, annotations: {a: b}}
spec:
  containers: [{name: web, image: example.com/web:1}]
status:
  phase: Running
  podIP: 10.5.0.7
  podIPs: [{ip: 10.5.0.7}]
  conditions: [{type: PodScheduled, status: "True"}, {type: Ready, status: "True"}]
`;

describe('Pods in files (XBackend EndpointSelector)', () => {
  it('translate -f: the selected Pod is the endpoint, and the Pod is held slimmed', () => {
    const dir = tmp();
    write(dir, 'all.yaml', FILES);
    const r = turnpike('translate', '-f', dir, '-o', 'json');
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('ignoring kind Pod');
    const out = JSON.parse(r.stdout);
    expect(out.xdsIR.endpoints['apps/XBackend/pods']).toEqual([{ address: '10.5.0.7', port: 8080, ready: true }]);
    const pod = out.resources.find((o: { kind: string }) => o.kind === 'Pod');
    expect(pod).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-1', namespace: 'apps', labels: { app: 'web' } },
      status: { phase: 'Running', podIPs: [{ ip: '10.5.0.7' }], conditions: [{ type: 'Ready', status: 'True' }] },
    });
  });
});
