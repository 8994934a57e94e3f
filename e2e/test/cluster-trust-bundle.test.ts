// ClusterTrustBundle CA references (Gateway API v1.7.0, GEP-5075) against a real kube-apiserver 1.37,
// which serves certificates.k8s.io/v1 by default: with --runtime-config the same binary plays an
// older cluster that serves only v1beta1, and one that serves neither. The controller lists the
// version served (or says none is), and the GatewayClass, listeners and BackendTLSPolicies follow:
// the feature advertised only where the API is served, InvalidKind where it is not.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { ROOT, waitFor, type Cluster } from '../harness/cluster.js';
import { cond, gateway, gatewayClass, httpRoute, ns, service } from '../harness/fixtures.js';
import { clusterWithController } from '../harness/setup.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../../packages/translator/test/tls-fixtures.js';

type Obj = KubeObject & { spec?: any; status?: any };

const bundle = (version: string): KubeObject =>
  ({
    apiVersion: `certificates.k8s.io/${version}`,
    kind: 'ClusterTrustBundle',
    metadata: { name: 'corp-ca' },
    spec: { trustBundle: EXAMPLE_COM_CERT },
  }) as KubeObject;
const ctbRef = { group: 'certificates.k8s.io', kind: 'ClusterTrustBundle', name: 'corp-ca' };

// A Gateway that validates client certificates against the bundle (HTTPS) and routes (HTTP) to a
// Service whose BackendTLSPolicy trusts the same bundle.
const objects: KubeObject[] = [
  ns('edge'),
  gatewayClass('tp'),
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'cert', namespace: 'edge' },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.from(EXAMPLE_COM_CERT).toString('base64'),
      'tls.key': Buffer.from(EXAMPLE_COM_KEY).toString('base64'),
    },
  } as KubeObject,
  gateway('edge', 'web', 'tp', {
    listeners: [
      { name: 'http', port: 80, protocol: 'HTTP' },
      { name: 'https', port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] } },
    ],
    tls: { frontend: { default: { validation: { caCertificateRefs: [ctbRef] } } } },
  }),
  service('edge', 'app'),
  httpRoute('edge', 'r', [{ name: 'web', sectionName: 'http' }], [{ name: 'app', port: 8080 }]),
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'BackendTLSPolicy',
    metadata: { name: 'app-tls', namespace: 'edge' },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: 'app' }],
      validation: { hostname: 'app.example.com', caCertificateRefs: [ctbRef] },
    },
  } as KubeObject,
];

async function read(c: Cluster, kind: string, name: string, namespace?: string): Promise<Obj | undefined> {
  const metadata = { name, ...(namespace ? { namespace } : {}) };
  return (await c.get({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata })) as Obj | undefined;
}

/** What the cluster says, once the controller has written it: features, the listener's and the policy's refs. */
async function verdicts(c: Cluster, want: (v: Verdicts) => boolean): Promise<Verdicts> {
  let last: Verdicts | undefined;
  try {
    return await waitFor(
      'statuses',
      async () => {
        const gc = await read(c, 'GatewayClass', 'tp');
        const gw = await read(c, 'Gateway', 'web', 'edge');
        const btp = await read(c, 'BackendTLSPolicy', 'app-tls', 'edge');
        const listener = gw?.status?.listeners?.find((l: { name: string }) => l.name === 'https');
        const ancestor = btp?.status?.ancestors?.[0];
        const brief = (list: unknown, type: string) => {
          const x = cond(list, type);
          return x ? `${x.status}/${x.reason}` : undefined;
        };
        last = {
          ctbFeature: (gc?.status?.supportedFeatures ?? []).some(
            (f: { name: string }) => f.name === 'ClusterTrustBundle',
          ),
          features: (gc?.status?.supportedFeatures ?? []).length,
          listener: brief(listener?.conditions, 'ResolvedRefs'),
          listenerMessage: cond(listener?.conditions, 'ResolvedRefs')?.message,
          policy: brief(ancestor?.conditions, 'ResolvedRefs'),
          policyAccepted: brief(ancestor?.conditions, 'Accepted'),
        };
        return want(last) ? last : undefined;
      },
      60_000,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last seen ${JSON.stringify(last)}`);
  }
}
interface Verdicts {
  ctbFeature: boolean;
  features: number;
  listener?: string;
  listenerMessage?: string;
  policy?: string;
  policyAccepted?: string;
}

function cli(...args: string[]): { code: number; stdout: string; stderr: string } {
  // TURNPIKE_CLI: another build, as the harness's controller takes it.
  const main = process.env.TURNPIKE_CLI ?? join(ROOT, 'packages/cli/dist/main.js');
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('ClusterTrustBundle served at v1 (Kubernetes 1.37 default)', () => {
  const env = clusterWithController(async (c) => {
    for (const o of [bundle('v1'), ...objects]) await c.apply(o);
  });

  it('the class advertises ClusterTrustBundle; the listener and the policy use the bundle', async () => {
    const v = await verdicts(env.cluster, (x) => x.ctbFeature && x.listener !== undefined && x.policy !== undefined);
    expect(v).toMatchObject({
      listener: 'True/ResolvedRefs',
      policy: 'True/ResolvedRefs',
      policyAccepted: 'True/Accepted',
    });
  }, 90_000);

  it('deleting the bundle re-translates: both references become InvalidCACertificateRef; re-creating it restores them', async () => {
    await env.cluster.delete(bundle('v1'));
    const gone = await verdicts(env.cluster, (x) => x.listener === 'False/InvalidCACertificateRef');
    expect(gone).toMatchObject({
      policy: 'False/InvalidCACertificateRef',
      policyAccepted: 'False/NoValidCACertificate',
    });
    expect(gone.listenerMessage).toContain('ClusterTrustBundle corp-ca not found');
    await env.cluster.apply(bundle('v1'));
    await verdicts(env.cluster, (x) => x.listener === 'True/ResolvedRefs' && x.policy === 'True/ResolvedRefs');
  }, 150_000);
});

describe('ClusterTrustBundle served at v1beta1 only (an older cluster that enabled it)', () => {
  const env = clusterWithController(
    async (c) => {
      // The harness creates watched kinds at the controller's preferred version: v1beta1 by hand here.
      const r = await c.admin.request(
        'POST',
        '/apis/certificates.k8s.io/v1beta1/clustertrustbundles',
        bundle('v1beta1'),
      );
      if (r.status !== 201) throw new Error(`create v1beta1 ClusterTrustBundle: ${r.status} ${r.text}`);
      for (const o of objects) await c.apply(o);
    },
    [],
    {
      apiserverArgs: [
        '--runtime-config=certificates.k8s.io/v1/clustertrustbundles=false,certificates.k8s.io/v1beta1/clustertrustbundles=true',
      ],
    },
  );
  beforeAll(async () => {
    expect((await env.cluster.admin.request('GET', '/apis/certificates.k8s.io/v1/clustertrustbundles')).status).toBe(
      404,
    );
  });

  it('the controller falls back to v1beta1: the feature is advertised and the bundle is used', async () => {
    const v = await verdicts(env.cluster, (x) => x.ctbFeature && x.listener !== undefined && x.policy !== undefined);
    expect(v).toMatchObject({ listener: 'True/ResolvedRefs', policy: 'True/ResolvedRefs' });
  }, 90_000);
});

describe('ClusterTrustBundle not served (certificates.k8s.io/v1 turned off, v1beta1 off by default)', () => {
  const env = clusterWithController(
    async (c) => {
      for (const o of objects) await c.apply(o);
    },
    [],
    { apiserverArgs: ['--runtime-config=certificates.k8s.io/v1/clustertrustbundles=false'] },
  );

  it('the class does not advertise ClusterTrustBundle, and both references are of a kind that cannot be resolved', async () => {
    const v = await verdicts(env.cluster, (x) => x.features > 0 && x.listener !== undefined && x.policy !== undefined);
    expect(v).toMatchObject({
      ctbFeature: false,
      listener: 'False/InvalidCACertificateKind',
      policy: 'False/InvalidKind',
      policyAccepted: 'False/NoValidCACertificate',
    });
    expect(v.listenerMessage).toContain("is not served by this cluster's API server");
  }, 90_000);

  it("explain --kubeconfig agrees with the controller's written status: the CLI listing says the API is not served too", async () => {
    const explained = (ref: string) => {
      const r = cli('explain', ref, '--kubeconfig', env.cluster.adminKubeconfig, '-o', 'json');
      expect(r.stderr).toBe('');
      return (JSON.parse(r.stdout) as { status: Obj['status'] }).status;
    };
    const written = async (kind: string, name: string, namespace?: string) =>
      (await read(env.cluster, kind, name, namespace))!.status;
    const brief = (list: { type: string; status: string; reason: string }[]) =>
      list.map((c) => `${c.type}=${c.status}/${c.reason}`).sort();
    const ours = (list: { controllerName: string; conditions: never[] }[]) =>
      list.find((a) => a.controllerName === 'turnpike.dev/gateway-controller')!;

    expect(explained('gatewayclass/tp').supportedFeatures).toEqual(
      (await written('GatewayClass', 'tp')).supportedFeatures,
    );
    const https = (st: Obj['status']) => st.listeners.find((l: { name: string }) => l.name === 'https').conditions;
    expect(brief(https(explained('gateway/edge/web')))).toEqual(brief(https(await written('Gateway', 'web', 'edge'))));
    expect(brief(ours(explained('backendtlspolicy/edge/app-tls').ancestors).conditions)).toEqual(
      brief(ours((await written('BackendTLSPolicy', 'app-tls', 'edge')).ancestors).conditions),
    );
  }, 60_000);
});
