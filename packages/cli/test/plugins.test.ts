// `turnpike run --dir` with plugins: the fetch worker runs beside the engine, its results show
// in the printed statuses, and the recorded event log replays (fetch results included) offline.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestRegistry } from '../../plugins/test/support/registry.js';
import { MANIFEST, start, tmp, turnpike, waitFor, write } from './cli-helpers.js';

const LUA = 'function envoy_on_request(h) h:headers():add("x-plugin", "cli") end\n';

describe('turnpike run --dir with a plugin', () => {
  let reg: TestRegistry;
  beforeAll(async () => {
    reg = await TestRegistry.start();
  });
  afterAll(async () => {
    await reg.stop();
  });

  it('plugin fetched from a registry: statuses printed, the route resolves, and the log replays with --verify', async () => {
    const digest = await reg.pushImage('cli/hello', 'v1', { 'plugin.lua': LUA });
    const dir = tmp();
    const log = join(tmp(), 'events.ndjson');
    write(dir, 'base.yaml', MANIFEST);
    write(
      dir,
      'plugin.yaml',
      `apiVersion: turnpike.dev/v1alpha1
kind: PluginInstallation
metadata: {name: hello, namespace: apps}
spec: {image: "${reg.host}/cli/hello:v1", type: lua}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - filters: [{type: ExtensionRef, extensionRef: {group: turnpike.dev, kind: PluginInstallation, name: hello}}]
    backendRefs: [{name: web, port: 8080}]
`,
    );
    const p = start(
      'run',
      '--dir',
      dir,
      '-o',
      'json',
      '--record',
      log,
      '--xds-address',
      '127.0.0.1:0',
      '--plugin-address',
      '127.0.0.1:0',
      '--quiet-ms',
      '20',
      '--max-delay-ms',
      '100',
    );
    const statusOf = (key: string) =>
      p
        .output()
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((l) => l.object === key)
        .at(-1)?.status;
    await waitFor(
      () =>
        statusOf('PluginInstallation/apps/hello')?.conditions?.some(
          (c: { type: string; status: string }) => c.type === 'Fetched' && c.status === 'True',
        ),
      15_000,
    );
    expect(statusOf('PluginInstallation/apps/hello').digest).toBe(digest);
    await waitFor(
      () =>
        statusOf('HTTPRoute/apps/web')?.parents?.[0]?.conditions?.some(
          (c: { type: string; status: string }) => c.type === 'ResolvedRefs' && c.status === 'True',
        ),
      10_000,
    );
    const res = await p.stop();
    expect(res.code).toBe(0);

    const events = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const fetches = events.filter((e) => e.kind === 'PluginFetch');
    expect(fetches.length).toBeGreaterThanOrEqual(1);
    expect(fetches[0]).toMatchObject({ source: 'plugins', type: 'upsert', namespace: 'apps', name: 'hello' });
    // The registry is not needed to replay: the fetch results are in the log.
    await reg.down();
    const replay = turnpike('replay', log, '--verify');
    expect(replay.stderr).toMatch(/verified \d+ output\(s\)/);
    expect(replay.code).toBe(0);
    await reg.up();
  }, 60_000);
});
