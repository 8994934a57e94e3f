import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { generatedName } from '@turnpike/translator';
import { MANIFEST, ROUTE, start, tmp, turnpike, waitFor, write } from './cli-helpers.js';
import { parseObjectRef } from '../src/commands/explain.js';

describe('turnpike translate', () => {
  it('prints the input objects with statuses, the xDS IR, the infra IR and the Envoy resources', () => {
    const dir = tmp();
    write(dir, 'a.yaml', MANIFEST);
    write(dir, 'b.yaml', ROUTE('web'));
    const r = turnpike('translate', '-f', dir, '-o', 'json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const route = out.resources.find((o: { kind: string }) => o.kind === 'HTTPRoute');
    expect(
      route.status.parents[0].conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`),
    ).toEqual(['Accepted=True', 'BackendsAvailable=False', 'ResolvedRefs=True']);
    expect(Object.keys(out.xdsIR.gateways)).toEqual(['infra/gw']);
    expect(out.infraIR.gateways['infra/gw'].name).toBe(generatedName('infra', 'gw'));
    // --to all (the default) includes the Envoy resources, as --to xds prints them.
    expect(out.xds['infra/gw'].listeners.map((l: { name: string }) => l.name)).toEqual(
      JSON.parse(turnpike('translate', '-f', dir, '--to', 'xds').stdout).xds['infra/gw'].listeners.map(
        (l: { name: string }) => l.name,
      ),
    );
    expect(out.xds['infra/gw'].listeners.length).toBeGreaterThan(0);
  });
  it('prints YAML with -o yaml', () => {
    const dir = tmp();
    const f = write(dir, 'a.yaml', MANIFEST);
    const r = turnpike('translate', '-f', f, '-o', 'yaml', '--to', 'resources');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^resources:\n/);
  });
  it('an unreadable path is one clear line and exit 2', () => {
    const r = turnpike('translate', '-f', '/nonexistent/x.yaml');
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('turnpike: /nonexistent/x.yaml: cannot read (ENOENT)');
  });
  it('a symbolic link loop or a dangling link is skipped with one line naming it, as run --dir skips it', () => {
    const loop = tmp();
    write(loop, 'a.yaml', MANIFEST);
    symlinkSync(loop, join(loop, 'again'));
    const r = turnpike('translate', '-f', loop, '-o', 'json');
    expect(r.code).toBe(0);
    expect(r.stderr.trim()).toBe(`turnpike: warning: ${join(loop, 'again')}: a symbolic link loop; skipped`);
    expect(Object.keys(JSON.parse(r.stdout).xdsIR.gateways)).toEqual(['infra/gw']);
    const dangling = tmp();
    write(dangling, 'a.yaml', MANIFEST);
    symlinkSync(join(dangling, 'gone.yaml'), join(dangling, 'b.yaml'));
    expect(turnpike('translate', '-f', dangling).stderr.trim()).toBe(
      `turnpike: warning: ${join(dangling, 'b.yaml')}: cannot read (ENOENT, a dangling link?); skipped`,
    );
  });
  it('a YAML syntax error names file:line:column, without a stack trace', () => {
    const dir = tmp();
    const f = write(dir, 'bad.yaml', 'apiVersion: v1\nkind: Service\nmetadata:\n  name: [unclosed\n');
    const r = turnpike('translate', '-f', f);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^turnpike: ${f}:\\d+:\\d+: YAML syntax error`));
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
  it('a document without kind or name is an error naming the file and line', () => {
    const dir = tmp();
    const noKind = write(dir, 'nokind.yaml', 'apiVersion: v1\nmetadata: {name: x}\n');
    expect(turnpike('translate', '-f', noKind).stderr).toContain(`${noKind}:1: document has no "kind"`);
    const noName = write(dir, 'noname.yaml', '---\napiVersion: v1\nkind: Service\nmetadata: {}\n');
    expect(turnpike('translate', '-f', noName).stderr).toContain(`${noName}:2: Service has no "metadata.name"`);
  });
  it('the same object twice: the copy seen first stays, and the warning names both files', () => {
    const dir = tmp();
    write(dir, 'a.yaml', MANIFEST);
    write(dir, 'b.yaml', MANIFEST.replace('port: 80,', 'port: 81,'));
    const r = turnpike('translate', '-f', dir, '-o', 'json');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /warning: .*b\.yaml: GatewayClass\/\/tp is defined twice \(first in .*a\.yaml\); ignoring this copy/,
    );
    const gw = JSON.parse(r.stdout).resources.find((o: { kind: string }) => o.kind === 'Gateway');
    expect(gw.spec.listeners[0].port).toBe(80);
  });
  it('an unknown kind is warned about once and ignored', () => {
    const dir = tmp();
    write(
      dir,
      'a.yaml',
      `${MANIFEST}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\n`,
    );
    const r = turnpike('translate', '-f', dir);
    expect(r.code).toBe(0);
    expect(r.stderr.match(/ignoring kind Deployment/g)).toHaveLength(1);
  });
  it('--debug adds the stack trace', () => {
    const r = turnpike('translate', '-f', '/nonexistent', '--debug');
    expect(r.stderr).toMatch(/\n\s+at /);
  });
});

describe('turnpike diff', () => {
  it('exits 0 when both sides translate the same', () => {
    const a = tmp(),
      b = tmp();
    for (const d of [a, b]) {
      write(d, 'm.yaml', MANIFEST);
      write(d, 'r.yaml', ROUTE('web'));
    }
    const r = turnpike('diff', a, b);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('no differences\n');
  });
  it('exits 1 and names the condition, attachedRoutes and xDS changes', () => {
    const a = tmp(),
      b = tmp();
    write(a, 'm.yaml', MANIFEST);
    write(a, 'r.yaml', ROUTE('web'));
    write(b, 'm.yaml', MANIFEST);
    write(b, 'r.yaml', ROUTE('gone'));
    const r = turnpike('diff', a, b, '--no-color');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('~ HTTPRoute/apps/web');
    expect(r.stdout).toContain('parent Gateway infra/gw ResolvedRefs: True/ResolvedRefs → False/BackendNotFound');
    expect(r.stdout).toContain('- cluster apps/web/8080');
    const j = JSON.parse(turnpike('diff', a, b, '-o', 'json').stdout);
    expect(j.same).toBe(false);
    expect(j.xds[0].routes.changed).toHaveLength(1);
  });
  it("names what a held rollout keeps waiting, from the proxy Deployment's template", () => {
    // The Gateway's proxy Deployment as `kubectl get -o yaml` shows it (ours: labelled so), rolled out.
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${generatedName('infra', 'held')}
  namespace: infra
  generation: 1
  labels: {app.kubernetes.io/managed-by: turnpike, gateway.networking.k8s.io/gateway-name: held, turnpike.dev/gateway-namespace: infra}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: old}}
    spec: {containers: [{name: envoy, image: envoyproxy/envoy:v1.35.0}]}
status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1}
`;
    const side = (image: string) => `${MANIFEST}---
apiVersion: turnpike.dev/v1alpha1
kind: ProxyConfig
metadata: {name: pc, namespace: infra}
spec: {image: ${image}, rollout: {hold: true}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: held, namespace: infra}
spec:
  gatewayClassName: tp
  infrastructure: {parametersRef: {group: turnpike.dev, kind: ProxyConfig, name: pc}}
  listeners: [{name: http, port: 80, protocol: HTTP}]
`;
    const a = tmp(),
      b = tmp();
    write(a, 'm.yaml', side('envoyproxy/envoy:v1.35.0'));
    write(b, 'm.yaml', side('envoyproxy/envoy:v1.36.2'));
    for (const d of [a, b]) write(d, 'deployment.yaml', deployment);
    const r = turnpike('diff', a, b, '--no-color');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('~ gateway infra/held: held, image');
    expect(r.stdout).toMatch(
      /rollout held by ProxyConfig infra\/pc spec.rollout.hold: the Deployment keeps its pod template; pending: image, pod labels/,
    );
  });
  it('exits 2 on a bad side', () => {
    expect(turnpike('diff', '/nonexistent', '/nonexistent2').code).toBe(2);
    expect(turnpike('diff', '/tmp/nothing.log@x', '/tmp').code).toBe(2);
  });
});

describe('turnpike run --record and replay --verify', () => {
  it('records a log while files change; the log replays identically; an altered log fails verification', async () => {
    const dir = tmp();
    const logDir = tmp();
    const log = join(logDir, 'events.ndjson');
    write(dir, 'm.yaml', MANIFEST);
    const p = start(
      'run',
      '--dir',
      dir,
      '--record',
      log,
      '--plugin-address',
      '127.0.0.1:0',
      '--quiet-ms',
      '20',
      '--max-delay-ms',
      '100',
      '--poll',
      '100',
    );
    await waitFor(() => p.output().includes('Gateway/infra/gw'));
    write(dir, 'r.yaml', ROUTE('web'));
    await waitFor(() => /HTTPRoute\/apps\/web .*ResolvedRefs=True/.test(p.output()));
    writeFileSync(join(dir, 'r.yaml'), ROUTE('gone'));
    await waitFor(() => /HTTPRoute\/apps\/web .*ResolvedRefs=False\(BackendNotFound/.test(p.output()));
    rmSync(join(dir, 'r.yaml'));
    await waitFor(() => p.output().includes('HTTPRoute/apps/web (deleted)'));
    const res = await p.stop();
    expect(res.code).toBe(0);

    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ format: 'turnpike.events', version: 1 });
    expect(lines.filter((l) => l.type === 'delete').map((l) => l.kind)).toContain('HTTPRoute');
    expect(lines.filter((l) => l.type === 'output').length).toBeGreaterThanOrEqual(4);

    const ok = turnpike('replay', log, '--verify');
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/verified \d+ output\(s\)/);

    // --until shows the state at that point: the route with its missing backend.
    const bad = lines.find(
      (l) => l.type === 'upsert' && l.kind === 'HTTPRoute' && l.object.spec.rules[0].backendRefs[0].name === 'gone',
    );
    const at = JSON.parse(turnpike('replay', log, '--until', String(bad.seq), '--to', 'resources').stdout);
    const routeAt = at.resources.find((o: { kind: string }) => o.kind === 'HTTPRoute');
    expect(routeAt.status.parents[0].conditions.find((c: { type: string }) => c.type === 'ResolvedRefs').reason).toBe(
      'BackendNotFound',
    );

    // Alter one recorded event: the backend name of the route's first version.
    const first = lines.find((l) => l.type === 'upsert' && l.kind === 'HTTPRoute');
    first.object.spec.rules[0].backendRefs[0].name = 'altered';
    const altered = join(logDir, 'altered.ndjson');
    writeFileSync(altered, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const fail = turnpike('replay', altered, '--verify');
    expect(fail.code).toBe(1);
    expect(fail.stderr).toMatch(new RegExp(`diverges at the output after event \\d+`));

    // A point past the end of the log is an error, not the last state.
    const last = lines.filter((l) => typeof l.seq === 'number' && l.type !== 'output').at(-1).seq;
    const past = turnpike('diff', `${log}@${first.seq}`, `${log}@${last + 100}`);
    expect([past.code, past.stderr.trim()]).toEqual([
      2,
      `turnpike: ${log}@${last + 100}: the log ends at event ${last}`,
    ]);

    // diff between two points of the log
    const d = turnpike('diff', `${log}@${first.seq}`, `${log}@${bad.seq}`, '--no-color');
    expect(d.code).toBe(1);
    expect(d.stdout).toContain('ResolvedRefs: True/ResolvedRefs → False/BackendNotFound');
  }, 30_000);
});

describe('turnpike replay --timeline', () => {
  const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
  const gwClass = {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'tp' },
    spec: { controllerName: 'turnpike.dev/gateway-controller' },
  };
  const events = [
    { seq: 1, at: at(0), source: 'dir', type: 'upsert', kind: 'GatewayClass', name: 'tp', object: gwClass },
    { seq: 2, at: at(1), source: 'dir', type: 'synced', kind: '*' },
    {
      seq: 3,
      at: at(5000),
      source: 'dir',
      type: 'upsert',
      kind: 'GatewayClass',
      name: 'other',
      object: { ...gwClass, metadata: { name: 'other' } },
    },
    { seq: 4, at: at(9000), source: 'dir', type: 'delete', kind: 'GatewayClass', name: 'other' },
  ];
  const header = { format: 'turnpike.events', version: 1, createdAt: at(0), quietMs: 10, maxDelayMs: 100 };
  const logOf = (outputs: { seq: number; hash: string }[]) => {
    const lines = [
      header,
      ...events.flatMap((e) => [e, ...outputs.filter((o) => o.seq === e.seq).map((o) => ({ type: 'output', ...o }))]),
    ];
    return write(tmp(), 'events.ndjson', lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  };

  it('prints each translation beside what the log recorded, and counts as the log has them', () => {
    // First without recorded outputs: every translation is replayed where the log recorded none.
    const bare = turnpike('replay', logOf([]), '--timeline');
    const replayed = bare.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; hash: string; recorded: string | null });
    expect(replayed.map((t) => [t.seq, t.recorded])).toEqual([
      [2, null],
      [3, null],
      [4, null],
    ]);
    expect(bare.stderr.trim()).toBe(
      'turnpike: 4 events, 0 translations recorded, 3 replayed: 3 replayed at an event where the log recorded none',
    );
    // A log that recorded exactly those: the same.
    const same = turnpike('replay', logOf(replayed.map((t) => ({ seq: t.seq, hash: t.hash }))), '--timeline');
    expect(same.stderr.trim()).toBe('turnpike: 4 events, 3 translations recorded, 3 replayed: the same');
    // One recorded at another event, one with another hash.
    const odd = [
      { seq: 1, hash: replayed[0]!.hash },
      { seq: 3, hash: 'f'.repeat(64) },
      { seq: 4, hash: replayed[2]!.hash },
    ];
    const r = turnpike('replay', logOf(odd), '--timeline', '--until', '4');
    expect(r.stderr.trim()).toBe(
      'turnpike: 4 events, 3 translations recorded, 3 replayed: 1 replayed at an event where the log recorded none; ' +
        '1 recorded at an event where the replay made none; 1 with another output hash (see --verify)',
    );
  });
});

describe('turnpike explain', () => {
  it('names each listener considered and why it refused the route, and each backend', () => {
    const dir = tmp();
    write(
      dir,
      'm.yaml',
      MANIFEST.replace(
        'allowedRoutes: {namespaces: {from: All}}',
        'hostname: "*.example.com", allowedRoutes: {namespaces: {from: Same}}',
      ),
    );
    write(dir, 'r.yaml', ROUTE('web'));
    const r = turnpike('explain', 'HTTPRoute/apps/web', '-f', dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('parentRefs[0] Gateway infra/gw');
    expect(r.stdout).toContain('NOT attached: NotAllowedByListeners');
    expect(r.stdout).toContain(
      'listener http (HTTP :80, hostname *.example.com): refuses routes from namespace apps; allowedRoutes.namespaces.from is Same (only infra)',
    );
    expect(r.stdout).toContain('spec.rules[0].backendRefs[0] Service apps/web:8080 weight 1: cluster apps/web/8080');
  });
  it('says when a backend does not resolve and when the object does not exist', () => {
    const dir = tmp();
    write(dir, 'm.yaml', MANIFEST);
    write(dir, 'r.yaml', ROUTE('gone'));
    expect(turnpike('explain', 'HTTPRoute/apps/web', '-f', dir).stdout).toContain(
      'BackendNotFound: spec.rules[0].backendRefs[0]: Service apps/gone not found (its share answers 500)',
    );
    const missing = turnpike('explain', 'HTTPRoute/apps/nope', '-f', dir);
    expect(missing.code).toBe(1);
    expect(turnpike('explain', 'Bogus/x/y', '-f', dir).code).toBe(2);
  });
  it('takes kinds as kubectl does (any case, plural) and a cluster-scoped object as KIND/NAME or KIND//NAME', () => {
    const dir = tmp();
    write(dir, 'm.yaml', MANIFEST);
    write(dir, 'r.yaml', ROUTE('web'));
    for (const ref of ['httproutes/apps/web', 'HTTPRoute/apps/web', 'httproute/apps/web'])
      expect([ref, turnpike('explain', ref, '-f', dir).code]).toEqual([ref, 0]);
    for (const ref of ['GatewayClass/tp', 'GatewayClass//tp', 'gatewayclasses/tp'])
      expect([ref, turnpike('explain', ref, '-f', dir).stdout]).toEqual([
        ref,
        expect.stringContaining('Accepted=True'),
      ]);
  });
  it('takes a plural in -ies as kubectl does (backendtlspolicies)', () => {
    expect(parseObjectRef('backendtlspolicies/edge/vault-tls')).toEqual({
      kind: 'BackendTLSPolicy',
      namespace: 'edge',
      name: 'vault-tls',
    });
  });
});
