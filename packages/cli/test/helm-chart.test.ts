// The Helm chart (deploy/helm/turnpike) with real Helm, built from Go modules (e2e/scripts/build-helm.sh):
// it lints, refuses a typo in values, and with its default values renders exactly the objects of
// deploy/ (one source of truth: the two cannot drift); gateway-namespace renders the overlay's RBAC
// and argument.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CHART = join(ROOT, 'deploy/helm/turnpike');
type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } } & Record<
  string,
  unknown
>;

let helmPath: string | undefined;
function helm(...args: string[]): { code: number; stdout: string; stderr: string } {
  helmPath ??=
    process.env.TURNPIKE_HELM ??
    execFileSync('bash', [join(ROOT, 'e2e/scripts/build-helm.sh')], { encoding: 'utf8' }).trim();
  const r = spawnSync(helmPath, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function objects(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o && !!o.kind);
}
const keyOf = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const byKey = (list: Obj[]) => new Map(list.map((o) => [keyOf(o), o]));

function render(...set: string[]): Obj[] {
  const r = helm(
    'template',
    'turnpike',
    CHART,
    '-n',
    'turnpike-system',
    '--include-crds',
    ...set.flatMap((s) => ['--set', s]),
  );
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return objects(r.stdout);
}

const deployFiles = (...names: string[]) =>
  names.flatMap((n) => objects(execFileSync('cat', [join(ROOT, 'deploy', n)], { encoding: 'utf8' })));

describe('helm chart', () => {
  it('helm: lint passes, and a typo in values fails with the key named', () => {
    const lint = helm('lint', CHART);
    expect([lint.code, lint.stdout]).toEqual([0, expect.stringContaining('0 chart(s) failed')]);
    const typo = helm('template', 'turnpike', CHART, '--set', 'replicass=3');
    expect(typo.code).not.toBe(0);
    expect(typo.stderr).toMatch(/replicass/);
    const wrong = helm('template', 'turnpike', CHART, '--set', 'proxyPlacement=anywhere');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/proxyPlacement/);
  });

  it('helm: the default values render exactly the objects of deploy/ (the kustomize base)', () => {
    const chart = byKey(render('namespace.create=true'));
    const base = byKey(
      deployFiles(
        'namespace.yaml',
        'crds/turnpike.dev_proxyconfigs.yaml',
        'crds/turnpike.dev_plugininstallations.yaml',
        'crds/turnpike.dev_proxyreports.yaml',
        'rbac.yaml',
        'viewer-rbac.yaml',
        'debugger-rbac.yaml',
        'controller.yaml',
        'networkpolicy.yaml',
      ),
    );
    expect([...chart.keys()].sort()).toEqual([...base.keys()].sort());
    for (const [key, o] of base) expect([key, chart.get(key)]).toEqual([key, o]);
  });

  it("helm: gateway-namespace placement renders the overlay's RBAC and argument; values reach the controller", () => {
    const chart = byKey(
      render('proxyPlacement=gateway-namespace', 'replicas=3', 'logLevel=debug', 'extraArgs={--quiet-ms=50}'),
    );
    for (const o of objects(
      execFileSync('cat', [join(ROOT, 'deploy/overlays/gateway-namespace/rbac.yaml')], { encoding: 'utf8' }),
    ))
      expect(chart.get(keyOf(o))).toEqual(o);
    const deployment = chart.get('Deployment/turnpike-system/turnpike') as Obj & {
      spec: { replicas: number; template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(deployment.spec.replicas).toBe(3);
    const args = deployment.spec.template.spec.containers[0]!.args;
    expect(args.slice(args.indexOf('--proxy-placement'), args.indexOf('--proxy-placement') + 2)).toEqual([
      '--proxy-placement',
      'gateway-namespace',
    ]);
    expect(args.at(-1)).toBe('--quiet-ms=50');
    expect(args[args.indexOf('--log-level') + 1]).toBe('debug');
    // The Gateway API CRDs only when asked.
    expect([...chart.keys()].filter((k) => k.includes('gateway.networking.k8s.io'))).toEqual([]);
    const withCrds = render('gatewayAPI.installCRDs=true').filter((o) => o.kind === 'CustomResourceDefinition');
    expect(withCrds.map((o) => o.metadata.name)).toContain('httproutes.gateway.networking.k8s.io');
    // The chart's bundle is the version e2e installs (and the engine's schemas are generated from).
    const harness = readFileSync(join(ROOT, 'e2e/harness/cluster.ts'), 'utf8');
    const e2eVersion = /GATEWAY_API_VERSION = '(v[^']+)'/.exec(harness)?.[1];
    expect(e2eVersion).toBeDefined();
    const annotations = (o: Obj) => (o.metadata as { annotations?: Record<string, string> }).annotations ?? {};
    const bundle = withCrds.filter((o) => o.metadata.name.includes('.gateway.networking.'));
    expect(bundle.length).toBeGreaterThan(10);
    const bundleVersions = new Set(bundle.map((o) => annotations(o)['gateway.networking.k8s.io/bundle-version']));
    expect(bundleVersions).toEqual(new Set([e2eVersion]));
  });

  it('helm: the controller records by default into an emptyDir whose sizeLimit its retention fits; it can be sized, moved to a PVC or turned off', () => {
    type Deployment = Obj & {
      spec: {
        template: {
          spec: {
            containers: { args: string[]; volumeMounts?: { name: string; mountPath: string }[] }[];
            volumes?: {
              name: string;
              emptyDir?: { sizeLimit: string };
              persistentVolumeClaim?: { claimName: string };
            }[];
          };
        };
      };
    };
    const deploymentOf = (...set: string[]) =>
      byKey(render(...set)).get('Deployment/turnpike-system/turnpike') as Deployment;
    const mib = (q: string) => Number(/^(\d+)Mi$/.exec(q)![1]);
    const d = deploymentOf();
    const c = d.spec.template.spec.containers[0]!;
    const dir = c.args[c.args.indexOf('--record-dir') + 1]!;
    expect(c.volumeMounts).toContainEqual({ name: 'events', mountPath: dir });
    const volume = d.spec.template.spec.volumes!.find((v) => v.name === 'events')!;
    const retain = c.args[c.args.indexOf('--record-retain-bytes') + 1]!;
    expect(mib(retain)).toBeLessThanOrEqual(0.8 * mib(volume.emptyDir!.sizeLimit));
    const sized = deploymentOf('recorder.sizeLimit=2Gi', 'recorder.retainBytes=1600Mi').spec.template.spec;
    expect(sized.volumes![0]!.emptyDir).toEqual({ sizeLimit: '2Gi' });
    expect(sized.containers[0]!.args).toContain('1600Mi');
    const pvc = deploymentOf('recorder.persistentVolumeClaim=turnpike-events').spec.template.spec.volumes![0]!;
    expect(pvc).toEqual({ name: 'events', persistentVolumeClaim: { claimName: 'turnpike-events' } });
    const off = deploymentOf('recorder.enabled=false').spec.template.spec;
    expect(off.containers[0]!.args).not.toContain('--record-dir');
    expect(off.volumes).toBeUndefined();
    // The plugin registries' allow-list only when given (an empty flag would stop the controller).
    expect(d.spec.template.spec.containers[0]!.args).not.toContain('--plugin-registries');
    const listed = deploymentOf('plugins.registries={ghcr.io,registry.internal:5000}').spec.template.spec;
    const pluginArgs = listed.containers[0]!.args;
    expect(pluginArgs[pluginArgs.indexOf('--plugin-registries') + 1]).toBe('ghcr.io,registry.internal:5000');
    const bad = helm('template', 'turnpike', CHART, '--set', 'recorder.sizeLimit=lots');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/recorder.*sizeLimit|sizeLimit/);
  });
});
