// Only a plugin something uses is fetched (#47 item 7): a PluginInstallation no route, listener or
// ProxyConfig uses gets no fetch (its request says it is unused), says so in Fetched=False/NotUsed,
// and serves nothing; a use is known before the plugin is fetched, and an incremental translation
// re-derives the plugin's request and status when a user comes or goes.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { Translator, snapshotFromObjects, type TranslateResult } from '../src/index.js';
import {
  cond,
  endpointSlice,
  gateway,
  gatewayClass,
  http,
  httpRoute,
  referenceGrant,
  run,
  service,
  sr,
} from './builders.js';

const SHA = 'a'.repeat(64);
const IMAGE = 'registry.example.com/team/hello:v1';
const DOCKER_CONFIG = JSON.stringify({ auths: { 'registry.example.com': { username: 'u', password: 'p' } } });

const plugin: KubeObject = {
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'PluginInstallation',
  metadata: { name: 'hello', namespace: 'apps', generation: 1 },
  spec: { image: IMAGE, type: 'lua', pullSecretRef: { name: 'creds' } },
};
const pullSecret: KubeObject = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'creds', namespace: 'apps' },
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': Buffer.from(DOCKER_CONFIG).toString('base64') },
} as KubeObject;
const fetchedBefore: KubeObject = {
  apiVersion: 'turnpike.dev/internal',
  kind: 'PluginFetch',
  metadata: { name: 'hello', namespace: 'apps' },
  status: {
    observedGeneration: 1,
    image: IMAGE,
    fetched: true,
    reason: 'Fetched',
    message: 'Fetched sha256:1234 (10 bytes)',
    digest: 'sha256:1234',
    sha256: SHA,
    size: 10,
    storage: { configMap: 'turnpike-plugin-hello' },
  },
};
const routeWith = (name: string, pluginName?: string, parent = 'gw') =>
  httpRoute(name, {
    parentRefs: [{ name: parent, namespace: 'infra' }],
    hostnames: [`${name}.example.com`],
    rules: [
      {
        ...(pluginName
          ? {
              filters: [
                {
                  type: 'ExtensionRef',
                  extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: pluginName },
                },
              ],
            }
          : {}),
        backendRefs: [{ name: 'web', port: 8080 }],
      },
    ],
  });
const installingConfig: KubeObject = {
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'ProxyConfig',
  metadata: { name: 'with-plugins', namespace: 'infra', generation: 1 },
  spec: { plugins: [{ name: 'hello', namespace: 'apps' }] },
};
const grantToProxyConfigs = referenceGrant(
  'pc-to-plugins',
  'apps',
  [{ group: 'turnpike.dev', kind: 'ProxyConfig', namespace: 'infra' }],
  [{ group: 'turnpike.dev', kind: 'PluginInstallation' }],
);
const base = [gatewayClass(), gateway('gw', [http()]), service('web'), endpointSlice('web'), plugin, pullSecret];

const statusOf = (r: TranslateResult) => r.statuses.get('PluginInstallation/apps/hello') as Record<string, unknown>;
const UNUSED_REQUEST = { namespace: 'apps', name: 'hello', generation: 1, image: IMAGE, type: 'lua', unused: true };

describe('a plugin nothing uses', () => {
  it('is not fetched: Fetched=False/NotUsed, nothing of it served, its request unused and without credentials', () => {
    const r = run([...base, fetchedBefore, routeWith('plain')]);
    const status = statusOf(r);
    expect(sr(status.conditions, 'Accepted')).toBe('True/Accepted');
    expect(cond(status.conditions, 'Fetched')).toMatchObject({
      status: 'False',
      reason: 'NotUsed',
      message:
        'Not fetched: no route, listener or ProxyConfig uses PluginInstallation apps/hello; it is fetched when one does',
    });
    // What an earlier fetch left is not served: the worker releases it.
    expect(status.digest).toBeUndefined();
    expect(status.storage).toBeUndefined();
    expect(r.pluginFetches.get('apps/hello')).toEqual(UNUSED_REQUEST);
  });

  it('a route naming it is a use before it is fetched: requested, with its credentials, and the route fails closed', () => {
    const r = run([...base, routeWith('with', 'hello')]);
    expect(r.pluginFetches.get('apps/hello')).toEqual({
      namespace: 'apps',
      name: 'hello',
      generation: 1,
      image: IMAGE,
      type: 'lua',
      dockerConfig: DOCKER_CONFIG,
    });
    expect(sr(statusOf(r).conditions, 'Fetched')).toBe('False/Pending');
    const routeStatus = r.statuses.get('HTTPRoute/apps/with') as { parents: { conditions: unknown }[] };
    expect(sr(routeStatus.parents[0]!.conditions, 'ResolvedRefs')).toBe('False/PluginNotFetched');
  });

  it('a ProxyConfig installing it is a use when permitted; a route with no parent of ours is none', () => {
    expect(run([...base, routeWith('elsewhere', 'hello', 'not-ours')]).pluginFetches.get('apps/hello')).toEqual(
      UNUSED_REQUEST,
    );
    // Another namespace's ProxyConfig without a ReferenceGrant: it could never install it.
    expect(run([...base, installingConfig]).pluginFetches.get('apps/hello')).toEqual(UNUSED_REQUEST);
    const permitted = run([...base, installingConfig, grantToProxyConfigs]);
    expect(permitted.pluginFetches.get('apps/hello')?.unused).toBeUndefined();
    expect(sr(statusOf(permitted).conditions, 'Fetched')).toBe('False/Pending');
  });

  it("a Gateway listener's ExtensionRef filter is a use (GEP-5224), and no longer one once the filter goes", () => {
    const guarded = (filtered: boolean) =>
      gateway(
        'edge',
        [
          http('guarded', 8080, {
            ...(filtered
              ? {
                  filters: {
                    requests: [
                      {
                        type: 'ExtensionRef',
                        extensionRef: { group: 'turnpike.dev', kind: 'PluginInstallation', name: 'hello' },
                      },
                    ],
                  },
                }
              : {}),
          }),
        ],
        {},
        'apps',
      );
    const translator = new Translator();
    const filtered = translator.translate(snapshotFromObjects([...base, guarded(true)]));
    expect(filtered.pluginFetches.get('apps/hello')?.unused).toBeUndefined();
    expect(sr(statusOf(filtered).conditions, 'Fetched')).toBe('False/Pending');
    const unfiltered = translator.translate(snapshotFromObjects([...base, guarded(false)]));
    expect(unfiltered.pluginFetches.get('apps/hello')).toEqual(UNUSED_REQUEST);
  });

  it('incrementally: a route that starts using it requests it, its removal releases it, as a fresh translation says', () => {
    const translator = new Translator();
    const step = (objects: KubeObject[]) => {
      const snapshot = snapshotFromObjects(objects);
      const { result, changes } = translator.translateWithChanges(snapshot);
      const fresh = new Translator().translate(snapshot);
      expect(result.pluginFetches.get('apps/hello')).toEqual(fresh.pluginFetches.get('apps/hello'));
      expect(statusOf(result)).toEqual(statusOf(fresh));
      return { result, changes, pluginPieces: translator.piecesComputed().get('plugin:') ?? 0 };
    };
    const unused = [...base, fetchedBefore, routeWith('plain')];
    expect(step(unused).result.pluginFetches.get('apps/hello')).toEqual(UNUSED_REQUEST);

    const other = step([...unused, routeWith('other')]);
    // A route that names no plugin derives no plugin again.
    expect(other.pluginPieces).toBe(0);
    expect(other.changes.pluginFetches).toEqual([]);

    const used = step([...unused, routeWith('other'), routeWith('with', 'hello')]);
    expect(used.changes.pluginFetches).toEqual(['apps/hello']);
    expect(used.result.pluginFetches.get('apps/hello')?.unused).toBeUndefined();
    expect(used.result.pluginFetches.get('apps/hello')?.dockerConfig).toBe(DOCKER_CONFIG);
    expect(sr(statusOf(used.result).conditions, 'Fetched')).toBe('True/Fetched');
    expect(used.changes.statuses).toContain('PluginInstallation/apps/hello');

    // A second user changes nothing about the plugin.
    const second = step([...unused, routeWith('other', 'hello'), routeWith('with', 'hello')]);
    expect(second.changes.pluginFetches).toEqual([]);

    const released = step([...unused, routeWith('other')]);
    expect(released.changes.pluginFetches).toEqual(['apps/hello']);
    expect(released.result.pluginFetches.get('apps/hello')).toEqual(UNUSED_REQUEST);
    expect(sr(statusOf(released.result).conditions, 'Fetched')).toBe('False/NotUsed');
  });
});
