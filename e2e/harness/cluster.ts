// A real control plane for end-to-end tests: etcd and kube-apiserver built from Go modules
// (e2e/scripts/build-kube.sh, cached under ~/.cache), started on loopback with generated keys and
// tokens; the Gateway API CRDs (from the sigs.k8s.io/gateway-api module) and deploy/'s CRDs and
// RBAC are installed. The controller under test authenticates as deploy/'s ServiceAccount.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '@turnpike/api';
import { KubeApiError, KubeClient, objectPath, resourceInfo, collectionPath } from '@turnpike/kube';
import { parseAllDocuments } from 'yaml';

// TURNPIKE_ROOT: the harness compiled elsewhere (bench/propagation.mjs) still finds the repository.
export const ROOT = process.env.TURNPIKE_ROOT ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const GATEWAY_API_VERSION = 'v1.7.0';
export const CONTROLLER_USER = 'system:serviceaccount:turnpike-system:turnpike';

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? res(a.port) : rej(new Error('no port'))));
    });
  });
}

export function kubeBinDir(): string {
  const dir = process.env.TURNPIKE_KUBE_BIN;
  // A cache made before kubelet-streaming existed is completed by the script.
  if (dir && existsSync(join(dir, 'kube-apiserver')) && existsSync(join(dir, 'kubelet-streaming'))) return dir;
  return execFileSync('bash', [join(ROOT, 'e2e/scripts/build-kube.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

export function gatewayApiCrds(): KubeObject[] {
  const out = execFileSync('go', ['mod', 'download', '-json', `sigs.k8s.io/gateway-api@${GATEWAY_API_VERSION}`], {
    encoding: 'utf8',
    // gateway-api v1.7's go.mod needs Go >= 1.27: a pinned toolchain, not whatever `go` is on PATH.
    env: { ...process.env, GOTOOLCHAIN: 'go1.27.3', GOFLAGS: '-mod=mod' },
    cwd: join(ROOT, 'e2e/kube'),
  });
  const dir = join((JSON.parse(out) as { Dir: string }).Dir, 'config/crd/experimental');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => loadYaml(join(dir, f)))
    .filter((o) => o.kind === 'CustomResourceDefinition');
}

export function loadYaml(path: string): KubeObject[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((d) => d.toJS() as KubeObject)
    .filter((o) => o && o.kind);
}

async function waitFor<T>(
  what: string,
  f: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  everyMs = 200,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await f();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

export interface ClusterOptions {
  deployRbac?: boolean;
  apiserverArgs?: string[];
}

export class Cluster {
  readonly admin: KubeClient;
  private etcd?: ChildProcess;
  private apiserver?: ChildProcess;
  private kcm?: ChildProcess;
  readonly adminKubeconfig: string;
  readonly controllerKubeconfig: string;
  /** User `viewer` (no permission unless a test binds one, e.g. the ClusterRole turnpike-viewer). */
  readonly viewerKubeconfig: string;

  private constructor(
    readonly dir: string,
    readonly bin: string,
    readonly etcdPort: number,
    readonly apiPort: number,
    private readonly adminToken: string,
    private readonly controllerToken: string,
    viewerToken: string,
    /** Extra kube-apiserver flags, kept across restarts (e.g. --runtime-config to turn an API off). */
    private readonly apiserverArgs: string[] = [],
  ) {
    this.adminKubeconfig = this.kubeconfig('admin', adminToken);
    this.controllerKubeconfig = this.kubeconfig('controller', controllerToken);
    this.viewerKubeconfig = this.kubeconfig('viewer', viewerToken);
    this.admin = KubeClient.fromKubeconfig(this.adminKubeconfig);
  }

  /**
   * `deployRbac: false`: leave deploy/'s namespace objects and RBAC out (a test installs them another way, Helm).
   * `apiserverArgs`: extra kube-apiserver flags.
   */
  static async start(opts: ClusterOptions = {}): Promise<Cluster> {
    const bin = kubeBinDir();
    const dir = mkdtempSync(join(tmpdir(), 'turnpike-e2e-'));
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    const adminToken = randomBytes(16).toString('hex');
    const controllerToken = randomBytes(16).toString('hex');
    const viewerToken = randomBytes(16).toString('hex');
    writeFileSync(
      join(dir, 'tokens.csv'),
      `${adminToken},admin,admin,"system:masters"\n${controllerToken},${CONTROLLER_USER},turnpike-uid,"system:serviceaccounts,system:serviceaccounts:turnpike-system,system:authenticated"\n` +
        `${viewerToken},viewer,viewer-uid,"system:authenticated"\n`,
    );
    const c = new Cluster(
      dir,
      bin,
      await freePort(),
      await freePort(),
      adminToken,
      controllerToken,
      viewerToken,
      opts.apiserverArgs,
    );
    await c.startEtcd();
    await c.startApiserver();
    await c.install(opts.deployRbac ?? true);
    return c;
  }

  /**
   * A kubeconfig for ServiceAccount `namespace`/`name` (made if missing) with a token from the TokenRequest API:
   * a user with no permission but what a test binds to it.
   */
  async serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
    await this.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
    const tr = await this.admin.must<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    );
    return this.kubeconfig(`sa-${namespace}-${name}`, tr.status.token);
  }

  private kubeconfig(user: string, token: string): string {
    const path = join(this.dir, `${user}.kubeconfig`);
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'e2e',
        clusters: [
          { name: 'e2e', cluster: { server: `https://127.0.0.1:${this.apiPort}`, 'insecure-skip-tls-verify': true } },
        ],
        users: [{ name: user, user: { token } }],
        contexts: [{ name: 'e2e', context: { cluster: 'e2e', user } }],
      }),
    );
    return path;
  }

  private async startEtcd(): Promise<void> {
    const peer = await freePort();
    this.etcd = spawn(
      join(this.bin, 'etcd'),
      [
        '--data-dir',
        join(this.dir, 'etcd'),
        '--listen-client-urls',
        `http://127.0.0.1:${this.etcdPort}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${this.etcdPort}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-cluster',
        `default=http://127.0.0.1:${peer}`,
        '--unsafe-no-fsync',
        '--log-level',
        'error',
      ],
      { stdio: 'ignore' },
    );
  }

  async startApiserver(): Promise<void> {
    const d = this.dir;
    this.apiserver = spawn(
      join(this.bin, 'kube-apiserver'),
      [
        `--etcd-servers=http://127.0.0.1:${this.etcdPort}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${this.apiPort}`,
        '--advertise-address=127.0.0.1',
        '--endpoint-reconciler-type=none',
        `--cert-dir=${join(d, 'pki')}`,
        '--service-cluster-ip-range=10.96.0.0/16',
        '--service-account-issuer=https://kubernetes.default.svc',
        `--service-account-key-file=${join(d, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(d, 'sa.key')}`,
        '--authorization-mode=RBAC',
        `--token-auth-file=${join(d, 'tokens.csv')}`,
        '--disable-admission-plugins=ServiceAccount',
        '--allow-privileged=true',
        // The fake kubelet's Node has only an InternalIP; its streaming server's certificate is self-signed
        // (no --kubelet-certificate-authority: the API server does not verify it) and asks for no client
        // certificate.
        '--kubelet-preferred-address-types=InternalIP',
        ...this.apiserverArgs,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    this.apiserver.stderr?.on('data', (b) => {
      err = (err + b).slice(-4000);
    });
    await waitFor(
      'kube-apiserver /readyz',
      async () => {
        if (this.apiserver?.exitCode !== null && this.apiserver?.exitCode !== undefined)
          throw new Error(`kube-apiserver exited: ${err.slice(-1000)}`);
        const r = await this.admin.request('GET', '/readyz');
        return r.status === 200 ? true : undefined;
      },
      90_000,
    );
  }

  /**
   * kube-controller-manager with the controllers the conformance suite relies on: Deployments
   * to Pods, EndpointSlices, namespace deletion, garbage collection, default ServiceAccounts.
   */
  async startControllerManager(): Promise<void> {
    this.kcm = spawn(
      join(this.bin, 'kube-controller-manager'),
      [
        `--kubeconfig=${this.adminKubeconfig}`,
        `--authentication-kubeconfig=${this.adminKubeconfig}`,
        `--authorization-kubeconfig=${this.adminKubeconfig}`,
        '--leader-elect=false',
        '--use-service-account-credentials=false',
        '--secure-port=0',
        '--controllers=deployment-controller,replicaset-controller,endpointslice-controller,namespace-controller,garbage-collector-controller,serviceaccount-controller',
      ],
      { stdio: 'ignore' },
    );
  }

  /** Compacts etcd's history up to now, so watches from older resourceVersions get 410 Gone. */
  async compactEtcd(): Promise<number> {
    const base = `http://127.0.0.1:${this.etcdPort}`;
    const range = (await (
      await fetch(`${base}/v3/kv/range`, {
        method: 'POST',
        body: JSON.stringify({ key: Buffer.from('/').toString('base64') }),
      })
    ).json()) as { header: { revision: string } };
    const revision = Number(range.header.revision);
    const r = await fetch(`${base}/v3/kv/compaction`, {
      method: 'POST',
      body: JSON.stringify({ revision: String(revision), physical: true }),
    });
    if (!r.ok) throw new Error(`etcd compaction: ${r.status} ${await r.text()}`);
    return revision;
  }

  /** Kills kube-apiserver (etcd keeps the data) and starts it again. */
  async restartApiserver(downMs = 2000): Promise<void> {
    this.apiserver?.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, downMs));
    await this.startApiserver();
  }

  private async install(deployRbac: boolean): Promise<void> {
    const crds = [
      ...gatewayApiCrds(),
      ...loadYaml(join(ROOT, 'deploy/crds/turnpike.dev_proxyconfigs.yaml')),
      ...loadYaml(join(ROOT, 'deploy/crds/turnpike.dev_plugininstallations.yaml')),
      ...loadYaml(join(ROOT, 'deploy/crds/turnpike.dev_proxyreports.yaml')),
    ];
    for (const crd of crds) await this.apply(crd);
    for (const crd of crds) {
      await waitFor(`CRD ${crd.metadata.name} Established`, async () => {
        const c = await this.admin.must<{ status?: { conditions?: { type: string; status: string }[] } }>(
          'GET',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        );
        return c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') ? true : undefined;
      });
    }
    await this.apply(loadYaml(join(ROOT, 'deploy/namespace.yaml'))[0]!);
    if (!deployRbac) return;
    const rbac = ['deploy/rbac.yaml', 'deploy/viewer-rbac.yaml', 'deploy/debugger-rbac.yaml'];
    for (const o of rbac.flatMap((f) => loadYaml(join(ROOT, f)))) await this.apply(o);
  }

  /** Path of an object of any kind, for the few kinds the tests create beyond the watched ones. */
  private pathOf(o: KubeObject, withName: boolean): string {
    const info = resourceInfo(o.kind);
    if (info)
      return withName
        ? objectPath(info, o.metadata.namespace, o.metadata.name)
        : collectionPath(info, o.metadata.namespace);
    const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
    const lower = o.kind.toLowerCase();
    const plural = lower.endsWith('s') ? `${lower}es` : lower.endsWith('y') ? `${lower.slice(0, -1)}ies` : `${lower}s`;
    const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : '';
    return `${base}${ns}/${o.kind === 'CustomResourceDefinition' ? 'customresourcedefinitions' : plural}${withName ? `/${o.metadata.name}` : ''}`;
  }

  /** Create, or replace what exists (keeping its resourceVersion). */
  async apply(o: KubeObject): Promise<KubeObject> {
    const r = await this.admin.request<KubeObject>('POST', this.pathOf(o, false), o);
    if (r.status === 201 || r.status === 200) return r.body;
    if (r.status !== 409)
      throw new KubeApiError(r.status, '', `create ${o.kind} ${o.metadata.name}: ${r.text.slice(0, 300)}`);
    for (let i = 0; i < 5; i++) {
      const cur = await this.admin.must<KubeObject>('GET', this.pathOf(o, true));
      const put = await this.admin.request<KubeObject>('PUT', this.pathOf(o, true), {
        ...o,
        metadata: { ...o.metadata, resourceVersion: cur.metadata.resourceVersion },
        status: cur.status,
      });
      if (put.status === 200) return put.body;
      if (put.status !== 409)
        throw new KubeApiError(put.status, '', `replace ${o.kind} ${o.metadata.name}: ${put.text.slice(0, 300)}`);
    }
    throw new Error(`replace ${o.kind} ${o.metadata.name}: conflicts`);
  }

  /** What a create would answer, without storing anything (dry run, unknown fields refused as kubectl does). */
  async dryRunCreate(o: KubeObject): Promise<{ accepted: boolean; message: string }> {
    // At the object's own apiVersion, which may not be the one the controller watches.
    const info = resourceInfo(o.kind);
    const version = o.apiVersion.split('/').at(-1)!;
    const path = info ? collectionPath({ ...info, version }, o.metadata.namespace) : this.pathOf(o, false);
    const r = await this.admin.request<{ message?: string }>('POST', `${path}?dryRun=All&fieldValidation=Strict`, o);
    return { accepted: r.status === 200 || r.status === 201, message: r.body?.message ?? r.text };
  }

  async get(o: Pick<KubeObject, 'kind' | 'apiVersion' | 'metadata'>): Promise<KubeObject | undefined> {
    const r = await this.admin.request<KubeObject>('GET', this.pathOf(o as KubeObject, true));
    return r.status === 200 ? r.body : undefined;
  }

  async delete(o: Pick<KubeObject, 'kind' | 'apiVersion' | 'metadata'>): Promise<void> {
    await this.admin.request('DELETE', this.pathOf(o as KubeObject, true));
  }

  async stop(): Promise<void> {
    this.admin.close();
    this.kcm?.kill('SIGKILL');
    this.apiserver?.kill('SIGKILL');
    this.etcd?.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export { waitFor };

let xdsCheck: string | undefined;

/**
 * e2e/xds-check (go-control-plane's ValidateAll over ADS): TURNPIKE_XDS_CHECK when scripts/test.sh built
 * it before the suites, else built now by the same script (cached per source version).
 */
export function xdsCheckBinary(): string {
  xdsCheck ??=
    process.env.TURNPIKE_XDS_CHECK ||
    execFileSync('bash', [join(ROOT, 'e2e/scripts/build-xds-check.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
  return xdsCheck;
}
