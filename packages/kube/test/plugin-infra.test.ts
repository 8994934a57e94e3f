// Installed plugins in the proxy objects: a copy of the content in the Gateway's namespace,
// mounted where the xDS config reads it, and a pod-template hash that moves with the content only.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { PLUGINS_ANNOTATION, snapshotFromObjects, translate } from '@turnpike/translator';
import { CONFIG_HASH_ANNOTATION, heldPluginCopies, infraObjects, PluginContentMissing } from '../src/index.js';

const LUA = 'function envoy_on_request(h) end\n';
const SHA = 'e'.repeat(64),
  SHA2 = 'f'.repeat(64);

function objects(sha: string, replicas = 1): KubeObject[] {
  return [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'turnpike' },
      spec: { controllerName: 'turnpike.dev/gateway-controller' },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra', uid: 'u1' },
      spec: {
        gatewayClassName: 'turnpike',
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
        infrastructure: { parametersRef: { group: 'turnpike.dev', kind: 'ProxyConfig', name: 'pc' } },
      },
    },
    {
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ProxyConfig',
      metadata: { name: 'pc', namespace: 'infra' },
      spec: { replicas, plugins: [{ name: 'hello' }] },
    },
    {
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'PluginInstallation',
      metadata: { name: 'hello', namespace: 'infra', generation: 1 },
      spec: { image: 'registry.example.com/t/hello:v1', type: 'lua' },
    },
    {
      apiVersion: 'turnpike.dev/internal',
      kind: 'PluginFetch',
      metadata: { name: 'hello', namespace: 'infra' },
      status: {
        observedGeneration: 1,
        image: 'registry.example.com/t/hello:v1',
        fetched: true,
        reason: 'Fetched',
        message: 'ok',
        digest: 'sha256:1',
        sha256: sha,
        size: LUA.length,
        storage: { configMap: 'turnpike-plugin-hello' },
      },
    },
  ];
}

const infraFor = (sha: string, replicas = 1) =>
  translate(snapshotFromObjects(objects(sha, replicas))).infraIR.gateways.get('infra/gw')!;
const ctx = {
  bootstrap: () => '{}',
  pluginContent: (sha: string) => (sha === SHA || sha === SHA2 ? Buffer.from(LUA) : undefined),
};

describe('plugin installation in proxy objects', () => {
  it('copies the content next to the proxy and mounts it at the path the xDS config reads', () => {
    const objs = infraObjects(infraFor(SHA), ctx);
    const copy = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name.includes('-plugin-'))!;
    expect(copy.metadata.namespace).toBe('infra');
    expect((copy as { data?: Record<string, string> }).data).toEqual({ 'plugin.lua': LUA });
    expect(copy.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Gateway', name: 'gw', uid: 'u1' });
    const dep = objs.find((o) => o.kind === 'Deployment') as unknown as {
      spec: {
        template: {
          metadata: { annotations: Record<string, string> };
          spec: {
            volumes: { name: string; configMap: { name: string } }[];
            containers: { volumeMounts: { name: string; mountPath: string }[] }[];
          };
        };
      };
    };
    const vol = dep.spec.template.spec.volumes.find((v) => v.configMap.name === copy.metadata.name)!;
    const mount = dep.spec.template.spec.containers[0]!.volumeMounts.find((m) => m.name === vol.name)!;
    // The path the xDS config reads once every Pod mounts it (plugin-installation.ts).
    expect(`${mount.mountPath}/plugin.lua`).toBe(infraFor(SHA).plugins[0]!.mountPath);
    // Which digest the Pods mount, read back from the Deployment to tell when they run it.
    expect(JSON.parse(dep.spec.template.metadata.annotations[PLUGINS_ANNOTATION]!)).toEqual({ 'infra/hello': SHA });
  });

  it('a held rollout keeps the Deployment template it has, byte for byte, and the plugin copies it mounts', () => {
    const live = infraObjects(infraFor(SHA), ctx).find((o) => o.kind === 'Deployment')!;
    const template = (live as unknown as { spec: { template: unknown } }).spec.template;
    // As the cluster reports it once rolled out.
    const reported = {
      ...live,
      metadata: { ...live.metadata, generation: 1 },
      status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
    } as KubeObject;
    const heldObjects = objects(SHA2).map((o) =>
      o.kind === 'ProxyConfig'
        ? { ...o, spec: { ...(o.spec as object), rollout: { hold: true, progressDeadlineSeconds: 30 } } }
        : o,
    );
    const ir = translate(snapshotFromObjects([...heldObjects, reported])).infraIR.gateways.get('infra/gw')!;
    expect(ir.held?.pending).toEqual([`plugin infra/hello sha256 ${SHA.slice(0, 12)} → ${SHA2.slice(0, 12)}`]);
    const objs = infraObjects(ir, ctx);
    const dep = objs.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: unknown; progressDeadlineSeconds: number };
    };
    expect(JSON.stringify(dep.spec.template)).toBe(JSON.stringify(template));
    expect(dep.spec.progressDeadlineSeconds).toBe(30);
    // The copy of the old content is neither rewritten nor pruned: the applier keeps it.
    expect(objs.some((o) => o.kind === 'ConfigMap' && o.metadata.name.includes('-plugin-'))).toBe(false);
    const copyName = infraObjects(infraFor(SHA), ctx).find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.includes('-plugin-'),
    )!.metadata.name;
    expect(heldPluginCopies(ir)).toEqual([`ConfigMap/infra/${copyName}`]);
  });

  it('the pod template hash moves when the plugin content changes, and not when something unrelated does', () => {
    const hash = (sha: string, replicas = 1) =>
      (
        infraObjects(infraFor(sha, replicas), ctx).find((o) => o.kind === 'Deployment') as unknown as {
          spec: { template: { metadata: { annotations: Record<string, string> } } };
        }
      ).spec.template.metadata.annotations[CONFIG_HASH_ANNOTATION];
    expect(hash(SHA)).toBe(hash(SHA));
    expect(hash(SHA, 3)).toBe(hash(SHA));
    expect(hash(SHA2)).not.toBe(hash(SHA));
  });

  it('content not loaded yet: the objects are not built (the applier retries) rather than rolled without the plugin', () => {
    expect(() => infraObjects(infraFor(SHA), { bootstrap: () => '{}', pluginContent: () => undefined })).toThrow(
      PluginContentMissing,
    );
  });
});
