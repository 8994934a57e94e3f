// The proxy objects of two Gateways of one name, from two namespaces, all placed in the controller's
// namespace: nothing is shared (names, pod selectors), and no owner reference points across namespaces
// (the garbage collector would delete an object whose owner it cannot find in the object's namespace).
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { infraObjects } from '../src/index.js';

const gatewayIn = (namespace: string): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'web', namespace, uid: `uid-${namespace}` },
  spec: { gatewayClassName: 'turnpike', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
});
const CLASS: KubeObject = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'GatewayClass',
  metadata: { name: 'turnpike' },
  spec: { controllerName: 'turnpike.dev/gateway-controller' },
};

function objectsOf(proxyNamespace: string | undefined): Map<string, KubeObject[]> {
  const t = new Translator(proxyNamespace === undefined ? {} : { proxyNamespace });
  const r = t.translate(snapshotFromObjects([CLASS, gatewayIn('team-a'), gatewayIn('team-b')]));
  const out = new Map<string, KubeObject[]>();
  for (const [key, ir] of r.infraIR.gateways) out.set(key, infraObjects(ir, { bootstrap: () => '{}' }));
  return out;
}

type Selecting = KubeObject & { spec: { selector: Record<string, string> | { matchLabels: Record<string, string> } } };
const selectorOf = (objects: KubeObject[], kind: string) => {
  const o = objects.find((x) => x.kind === kind) as Selecting;
  return 'matchLabels' in o.spec.selector ? o.spec.selector.matchLabels : o.spec.selector;
};

describe('proxy objects placed in one namespace', () => {
  it('security: two Gateways named alike share no object and no pod selector', () => {
    const objects = objectsOf('turnpike-system');
    const a = objects.get('team-a/web')!,
      b = objects.get('team-b/web')!;
    const keys = (list: KubeObject[]) => list.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`);
    for (const key of keys(a)) expect(keys(b)).not.toContain(key);
    for (const o of [...a, ...b]) expect(o.metadata.namespace).toBe('turnpike-system');
    // The Service of one must not select the pods of the other.
    const podsOf = (list: KubeObject[]) =>
      (list.find((o) => o.kind === 'Deployment') as KubeObject & {
        spec: { template: { metadata: { labels: Record<string, string> } } };
      })!.spec.template.metadata.labels;
    const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
      Object.entries(selector).every(([k, v]) => labels[k] === v);
    expect(selects(selectorOf(a, 'Service'), podsOf(a))).toBe(true);
    expect(selects(selectorOf(a, 'Service'), podsOf(b))).toBe(false);
    expect(selects(selectorOf(b, 'Deployment'), podsOf(a))).toBe(false);
    expect(selects(selectorOf(b, 'PodDisruptionBudget'), podsOf(a))).toBe(false);
  });

  it('no owner reference crosses namespaces; beside the Gateway, the Gateway owns every object', () => {
    for (const o of objectsOf('turnpike-system').get('team-a/web')!) expect(o.metadata.ownerReferences).toBeUndefined();
    for (const o of objectsOf(undefined).get('team-a/web')!) {
      expect(o.metadata.namespace).toBe('team-a');
      expect(o.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Gateway', uid: 'uid-team-a' })]);
    }
  });
});
