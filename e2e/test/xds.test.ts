// xDS from the cluster: a Go ADS client fetches a Gateway's configuration from the running
// controller, and every resource passes go-control-plane's ValidateAll (through every Any).
import { execFileSync } from 'node:child_process';
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { dirname, join } from 'node:path';
import { Cluster, ROOT, waitFor, xdsCheckBinary } from '../harness/cluster.js';
import { Controller } from '../harness/controller.js';
import { cond, gatewayClass, ns, ourParents } from '../harness/fixtures.js';
import {
  EXAMPLE_COM_CERT as crt,
  EXAMPLE_COM_KEY as key,
  OTHER_TEST_CERT,
  OTHER_TEST_KEY,
} from '../../packages/translator/test/tls-fixtures.js';
import { TYPE } from '@turnpike/xds';
import { adsClient, reader, resourceText, type ClientTls, type Stream } from '../../packages/xds/test/ads-client.js';
import {
  proxyCredentials,
  XDS_SERVER_NAME,
  xdsCheckTlsArgs,
  type ProxyCredentials,
} from '../harness/xds-credentials.js';

/** The status of a GET on a connection of its own (a pooled keep-alive socket may be closing). */
function statusOf(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

describe('xDS served from a cluster', () => {
  let cluster: Cluster;
  let controller: Controller;
  let checker: string;
  let creds: ProxyCredentials;
  const tls = (): ClientTls => ({ ca: creds.ca, cert: creds.cert, key: creds.key, serverName: XDS_SERVER_NAME });
  beforeAll(async () => {
    checker = xdsCheckBinary();
    cluster = await Cluster.start();
    controller = new Controller(cluster.controllerKubeconfig);
    await controller.start();
    await controller.ready();
  }, 400_000);
  afterAll(async () => {
    await controller?.stop();
    await cluster?.stop();
  }, 30_000);

  it('every resource of a Gateway passes go-control-plane ValidateAll', async () => {
    const objects: KubeObject[] = [
      ns('shop'),
      gatewayClass('tp'),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'cert', namespace: 'shop' },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': Buffer.from(crt).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'shop' },
        spec: {
          gatewayClassName: 'tp',
          listeners: [
            { name: 'http', port: 80, protocol: 'HTTP' },
            {
              name: 'https',
              port: 443,
              protocol: 'HTTPS',
              hostname: 'shop.example.com',
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] },
            },
            { name: 'tcp', port: 9000, protocol: 'TCP' },
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'shop' },
        spec: {
          ports: [
            { name: 'http', port: 8080 },
            { name: 'tcp', port: 9000 },
          ],
        },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'web-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4',
        ports: [
          { name: 'http', port: 8080 },
          { name: 'tcp', port: 9000 },
        ],
        endpoints: [{ addresses: ['10.1.2.3'], conditions: { ready: true } }],
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'web', namespace: 'shop' },
        spec: {
          parentRefs: [
            { name: 'gw', sectionName: 'http' },
            { name: 'gw', sectionName: 'https' },
          ],
          rules: [
            {
              matches: [{ path: { type: 'PathPrefix', value: '/api' }, headers: [{ name: 'x-v', value: '2' }] }],
              filters: [
                {
                  type: 'RequestHeaderModifier',
                  requestHeaderModifier: { set: [{ name: 'x-gw', value: 'turnpike' }] },
                },
              ],
              backendRefs: [
                { name: 'web', port: 8080, weight: 9 },
                { name: 'gone', port: 8080, weight: 1 },
              ],
              timeouts: { request: '10s' },
            },
            {
              matches: [{ path: { type: 'Exact', value: '/old' } }],
              filters: [
                {
                  type: 'RequestRedirect',
                  requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/new' }, statusCode: 301 },
                },
              ],
            },
          ],
        },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'TCPRoute',
        metadata: { name: 'raw', namespace: 'shop' },
        spec: {
          parentRefs: [{ name: 'gw', sectionName: 'tcp' }],
          rules: [{ backendRefs: [{ name: 'web', port: 9000 }] }],
        },
      },
    ];
    for (const o of objects) await cluster.apply(o);
    await waitFor('route attached', async () =>
      cond(ourParents(await cluster.get(objects[6]!))[0]?.conditions, 'Accepted')?.status === 'True' ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 1000));
    // Over mTLS, with the client certificate the controller issued for this Gateway's proxies.
    creds = await proxyCredentials(cluster, 'shop', 'gw');
    let out = '';
    try {
      out = execFileSync(
        checker,
        ['-address', `127.0.0.1:${controller.xdsPort}`, '-node', 'shop/gw', ...xdsCheckTlsArgs(creds)],
        { encoding: 'utf8' },
      );
    } catch (e) {
      throw new Error(
        `xds-check failed: ${(e as { stdout?: string }).stdout ?? ''} ${(e as { stderr?: string }).stderr ?? ''}`,
      );
    }
    const report = JSON.parse(out) as { counts: Record<string, number>; errors: string[] };
    expect(report.errors).toEqual([]);
    // The checker's stream was counted as a connected proxy and served pushes.
    expect(await controller.metric('turnpike_xds_pushes')).toBeGreaterThan(0);
    // Two Service ports (the invalid backend's share names no cluster: it answers 500).
    expect(report.counts).toEqual({
      Listener: 3,
      Cluster: 2,
      ClusterLoadAssignment: 2,
      RouteConfiguration: 2,
      Secret: 1,
    });
  }, 120_000);

  it('a certificate rotated in the cluster reaches a SotW and a delta ADS client within a second of the holdoff', async () => {
    const node = { id: 'e2e', cluster: 'shop/gw' };
    const sotw: Stream = adsClient(controller.xdsPort, tls()).StreamAggregatedResources();
    const nextSotw = reader(sotw);
    sotw.write({ node, type_url: TYPE.secret, resource_names: ['shop/cert'] });
    const first = await nextSotw(10_000);
    expect(resourceText(first)).toContain(crt.slice(40, 80));
    sotw.write({
      node,
      type_url: TYPE.secret,
      resource_names: ['shop/cert'],
      version_info: first.version_info,
      response_nonce: first.nonce,
    });
    const delta: Stream = adsClient(controller.xdsPort, tls()).DeltaAggregatedResources();
    const nextDelta = reader(delta);
    delta.write({ node, type_url: TYPE.secret, resource_names_subscribe: ['shop/cert'] });
    delta.write({ node, type_url: TYPE.secret, response_nonce: (await nextDelta(10_000)).nonce });
    try {
      const rotated = Date.now();
      await cluster.apply({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'cert', namespace: 'shop' },
        type: 'kubernetes.io/tls',
        data: {
          'tls.crt': Buffer.from(OTHER_TEST_CERT).toString('base64'),
          'tls.key': Buffer.from(OTHER_TEST_KEY).toString('base64'),
        },
      } as KubeObject);
      // The controller's holdoff is at most 500 ms; the push must follow within a second.
      const [s, d] = await Promise.all([nextSotw(1500), nextDelta(1500)]);
      expect(Date.now() - rotated).toBeLessThan(1500);
      expect(s.version_info).not.toBe(first.version_info);
      expect(resourceText(s)).toContain(OTHER_TEST_CERT.slice(40, 80));
      expect(resourceText(d)).toContain(OTHER_TEST_CERT.slice(40, 80));
    } finally {
      sotw.end();
      delta.end();
    }
  }, 60_000);

  it('turnpike proxy-status lists a connected proxy with the versions it accepted and what it rejected', async () => {
    const node = { id: 'status-probe', cluster: 'shop/gw' };
    const sotw: Stream = adsClient(controller.xdsPort, tls()).StreamAggregatedResources();
    const next = reader(sotw);
    try {
      sotw.write({ node, type_url: TYPE.listener });
      const lds = await next(10_000);
      sotw.write({ node, type_url: TYPE.listener, version_info: lds.version_info, response_nonce: lds.nonce });
      sotw.write({ node, type_url: TYPE.cluster });
      const cds = await next(10_000);
      sotw.write({
        node,
        type_url: TYPE.cluster,
        version_info: 'old',
        response_nonce: cds.nonce,
        error_detail: { message: 'cluster refused by test' },
      });
      const cli = (...args: string[]) =>
        execFileSync(
          process.execPath,
          [
            join(ROOT, 'packages/cli/dist/main.js'),
            'proxy-status',
            '--controller',
            `http://127.0.0.1:${controller.debugPort}`,
            ...args,
          ],
          { encoding: 'utf8' },
        );
      const status = await waitFor(
        'probe acked and rejected',
        async () => {
          const all = JSON.parse(cli('-o', 'json', '--gateway', 'shop/gw')) as {
            id: string;
            acked: Record<string, string>;
            rejected?: { message: string };
          }[];
          const me = all.find((p) => p.id === 'status-probe');
          return me?.acked[TYPE.listener] && me.rejected ? me : undefined;
        },
        10_000,
      );
      expect(status.acked[TYPE.listener]).toBe(lds.version_info);
      expect(status.rejected!.message).toBe('cluster refused by test');
      const text = cli();
      expect(text.split('\n')[0]).toMatch(
        /^GATEWAY\s+ID\s+STREAM\s+SINCE\s+LDS\s+RDS\s+CDS\s+EDS\s+SDS\s+SYNC\s+REJECTED$/,
      );
      expect(text).toMatch(/status-probe .*behind \(rejected\)\s+Cluster/);
      // security: the list of proxies (and their addresses) is on the debug address only, not on the
      // health address that probes and Prometheus reach.
      expect(await statusOf(`http://127.0.0.1:${controller.healthPort}/debug/proxies`)).toBe(404);
      // The Gateway says so too, naming the proxy that runs an older configuration.
      const gwStatus = await waitFor(
        'ProxiesInSync=False naming the probe',
        async () => {
          const gw = (await cluster.get({
            apiVersion: 'gateway.networking.k8s.io/v1',
            kind: 'Gateway',
            metadata: { name: 'gw', namespace: 'shop' },
          })) as { status?: { conditions?: { type: string; status: string; message: string }[] } } | undefined;
          const c = gw?.status?.conditions?.find((x) => x.type === 'turnpike.dev/ProxiesInSync');
          return c?.status === 'False' && c.message.includes('status-probe') ? c : undefined;
        },
        15_000,
      );
      expect(gwStatus.message).toMatch(
        /^\d+ of \d+ connected proxies have not acknowledged the current configuration: .*status-probe/,
      );
    } finally {
      sotw.end();
    }
  }, 60_000);

  it('turnpike proxy-config prints what the Gateway is served, decoded, over mTLS, with private keys redacted', async () => {
    const dir = dirname(creds.files.cert);
    const out = execFileSync(
      process.execPath,
      [
        join(ROOT, 'packages/cli/dist/main.js'),
        'proxy-config',
        '--gateway',
        'shop/gw',
        '--xds-address',
        `127.0.0.1:${controller.xdsPort}`,
        '--tls-dir',
        dir,
        '--server-name',
        XDS_SERVER_NAME,
      ],
      { encoding: 'utf8' },
    );
    const cfg = JSON.parse(out) as Record<string, Record<string, any>[]>;
    expect(cfg.listeners!.map((l) => l.name).sort()).toEqual(['tcp-443', 'tcp-80', 'tcp-9000']);
    expect(cfg.routes!.flatMap((r) => r.virtual_hosts.flatMap((v: any) => v.routes.map((x: any) => x.name)))).toContain(
      'httproute/shop/web/rule/0/match/0',
    );
    expect(cfg.clusters!.map((c) => c.name).sort()).toEqual(['shop/web/8080', 'shop/web/9000/tcp']);
    expect(cfg.endpoints!.length).toBe(2);
    expect(cfg.secrets!.map((x) => x.name)).toEqual(['shop/cert']);
    expect(JSON.stringify(cfg.secrets)).toContain('<redacted>');
    expect(out).not.toContain('PRIVATE KEY');
    // A debug read, not a proxy: the Gateway's sync accounting never saw it (the log is written
    // asynchronously: wait for its line).
    await waitFor(
      'the debug read in the log',
      async () => /debug read connected[^\n]*turnpike-proxy-config/.test(controller.out) || undefined,
    );
    expect(controller.out).not.toMatch(/proxy connected[^\n]*turnpike-proxy-config/);
  }, 60_000);
});
