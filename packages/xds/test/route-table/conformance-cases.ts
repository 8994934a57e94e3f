// The upstream conformance tests' requests (tables extracted by scripts/extract-conformance-tables.sh)
// run through the route-table check against the Envoy resources Turnpike generates for the tests'
// own manifests. Each request is judged as the conformance suite's CompareRoundTrip would judge the
// answer, with the backends modelled (echo-backend.ts): the Pods of the manifests' Deployments, what
// they listen on, the certificates they present, and echo-basic's `delay` and retry simulation.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROLLER_NAME, type KubeObject } from '@turnpike/api';
import { manifestProblem, normalizeNamespace, parseManifests } from '@turnpike/engine';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { envoyLoadProblems, envoyResourcesFor, validateResources, type EnvoyResources } from '../../src/index.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY, OTHER_TEST_CERT } from '../../../translator/test/tls-fixtures.js';
import type { Cluster, DownstreamTlsContext, UpstreamTlsContext } from '../../src/envoy-types.js';
import {
  listenerFor,
  routeHttp,
  routeTcp,
  routeUdp,
  selectFilterChain,
  type HttpOutcome,
  type WeightedTarget,
} from './envoy-router.js';
import {
  backendAnswers,
  handshakeProblem,
  type BackendAnswer,
  type EchoPod,
  type ServingTls,
  type Upstream,
} from './echo-backend.js';
import { hasGrpcContentType } from './envoy-path.js';

const DIR = join(import.meta.dirname, 'conformance');
const GATEWAY_CLASS = 'turnpike';

type Json = Record<string, any>;

export interface ConformanceTable {
  test: string;
  features: string[];
  manifests: string[];
  calls: { function: string; gateway?: Json; args: any[]; line: number; subtest?: string }[];
}

export function conformanceTables(): ConformanceTable[] {
  return readdirSync(join(DIR, 'tables'))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(DIR, 'tables', f), 'utf8')) as ConformanceTable);
}

const INFRA = 'gateway-conformance-infra';
const WEB = 'gateway-conformance-web-backend';
const APP = 'gateway-conformance-app-backend';

/**
 * The CAs the suite creates (suite.go, Setup), by ConfigMap: the model has two certificates to stand
 * for them, so CAs that must be told apart hold different ones. The per-port client CA is not the
 * default one (GatewayFrontendClientCertificateValidation presents each listener the other's client
 * certificate), and mismatch-ca-certificate signed none of the backends' certificates.
 */
const CA_CERTIFICATES: Record<string, string> = {
  [`${WEB}/web-backend-cm`]: EXAMPLE_COM_CERT,
  [`${INFRA}/tls-validity-checks-ca-certificate`]: EXAMPLE_COM_CERT,
  [`${INFRA}/tls-validity-checks-per-port-ca-certificate`]: OTHER_TEST_CERT,
  [`${INFRA}/tls-checks-ca-certificate`]: EXAMPLE_COM_CERT,
  [`${INFRA}/mismatch-ca-certificate`]: OTHER_TEST_CERT,
};

/**
 * The certificates the suite creates (suite.go, Setup), by Secret: the names each carries and the
 * CA that signed it (a self-signed one is signed by no CA the model has). Every Secret holds the
 * same key pair here: what tells them apart is this table.
 */
const SUITE_CERTIFICATES: Record<string, { sans: string[]; issuer: string }> = {
  [`${WEB}/certificate`]: { sans: ['*'], issuer: 'self-signed' },
  [`${INFRA}/tls-validity-checks-certificate`]: { sans: ['*', '*.org', '*.wildcard.org'], issuer: 'self-signed' },
  [`${INFRA}/tls-validity-checks-client-certificate`]: {
    sans: [],
    issuer: CA_CERTIFICATES[`${INFRA}/tls-validity-checks-ca-certificate`]!,
  },
  [`${INFRA}/tls-validity-checks-per-port-client-certificate`]: {
    sans: [],
    issuer: CA_CERTIFICATES[`${INFRA}/tls-validity-checks-per-port-ca-certificate`]!,
  },
  [`${INFRA}/tls-checks-certificate`]: {
    sans: ['abc.example.com', 'spiffe://abc.example.com/test-identity', 'other.example.com'],
    issuer: CA_CERTIFICATES[`${INFRA}/tls-checks-ca-certificate`]!,
  },
  [`${INFRA}/tls-checks-client-certificate`]: {
    sans: [],
    issuer: CA_CERTIFICATES[`${INFRA}/tls-checks-ca-certificate`]!,
  },
  [`${INFRA}/tls-passthrough-checks-certificate`]: {
    sans: ['abc.example.com'],
    issuer: CA_CERTIFICATES[`${INFRA}/tls-checks-ca-certificate`]!,
  },
  [`${APP}/tls-passthrough-checks-certificate`]: {
    sans: ['abc.example.com'],
    issuer: CA_CERTIFICATES[`${INFRA}/tls-checks-ca-certificate`]!,
  },
  [`${INFRA}/tls-terminate-checks-certificate`]: {
    sans: ['tls.example.com'],
    issuer: CA_CERTIFICATES[`${INFRA}/tls-checks-ca-certificate`]!,
  },
};

const secret = (key: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: key.split('/')[1]!, namespace: key.split('/')[0]! },
  type: 'kubernetes.io/tls',
  data: {
    'tls.crt': Buffer.from(EXAMPLE_COM_CERT).toString('base64'),
    'tls.key': Buffer.from(EXAMPLE_COM_KEY).toString('base64'),
  },
});
const caConfigMap = (key: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: key.split('/')[1]!, namespace: key.split('/')[0]! },
  data: { 'ca.crt': CA_CERTIFICATES[key]! },
});

/** What the conformance suite creates in code rather than in manifests (suite.go, Setup). */
function programmaticObjects(): KubeObject[] {
  return [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: GATEWAY_CLASS },
      spec: { controllerName: CONTROLLER_NAME },
    },
    ...Object.keys(SUITE_CERTIFICATES).map(secret),
    ...Object.keys(CA_CERTIFICATES).map(caConfigMap),
  ];
}

/** A Pod as the model needs it: its labels (for Service selectors) and address besides what it serves. */
interface ModelPod extends EchoPod {
  labels: Record<string, string>;
  address: string;
}

/**
 * The Pods of the manifests' Deployments, one each (replicas of a Deployment answer alike; the retry
 * backend, infra-backend-v3, has one), listening as echo-basic's main() starts its servers from the
 * environment: GRPC_ECHO_SERVER, TCP_ECHO_SERVER, UDP_ECHO_SERVER, or else HTTP (HTTP_PORT 3000,
 * H2C_PORT 3001, and HTTPS_PORT 8443 when given a certificate and key), each with its defaults.
 */
function deploymentPods(objects: KubeObject[]): ModelPod[] {
  return objects
    .filter((o) => o.kind === 'Deployment')
    .map((d, i) => {
      const template = (d as Json).spec.template as Json;
      const container = (template.spec.containers as Json[])[0]!;
      const env: Record<string, string> = Object.fromEntries(
        ((container.env ?? []) as Json[]).filter((e) => e.value !== undefined).map((e) => [e.name, String(e.value)]),
      );
      const namespace = d.metadata.namespace ?? 'default';
      // The volume a file the environment names is mounted from.
      const volumeOf = (path: string | undefined): Json | undefined => {
        const mount = ((container.volumeMounts ?? []) as Json[]).find((m) => path?.startsWith(`${m.mountPath}/`));
        return ((template.spec.volumes ?? []) as Json[]).find((v) => v.name === mount?.name);
      };
      const serving = (keyEnv: string): ServingTls | undefined => {
        if (!env.TLS_SERVER_CERT || !env[keyEnv]) return undefined;
        const cert = SUITE_CERTIFICATES[`${namespace}/${volumeOf(env.TLS_SERVER_CERT)?.secret?.secretName}`];
        const clientCa = volumeOf(env.TLS_CLIENT_CACERTS)?.configMap?.name as string | undefined;
        return {
          sans: cert?.sans ?? [],
          issuer: cert?.issuer ?? 'unknown',
          ...(clientCa ? { clientCa: CA_CERTIFICATES[`${namespace}/${clientCa}`] ?? 'unknown' } : {}),
        };
      };
      const port = (name: string, fallback: number) => Number(env[name] ?? fallback);
      const tcp = new Map<number, ServingTls | undefined>();
      const udp = new Set<number>();
      let kind: EchoPod['kind'];
      if (env.GRPC_ECHO_SERVER) {
        kind = 'grpc';
        tcp.set(port('HTTP_PORT', 3000), undefined);
        const tls = serving('TLS_SERVER_PRIV_KEY');
        if (tls) tcp.set(port('HTTPS_PORT', 8443), tls);
      } else if (env.TCP_ECHO_SERVER) {
        kind = 'tcp';
        tcp.set(port('TCP_PORT', 3000), undefined);
        const tls = serving('TLS_SERVER_PRIV_KEY');
        if (tls) tcp.set(port('TLS_PORT', 8443), tls);
      } else if (env.UDP_ECHO_SERVER) {
        kind = 'udp';
        udp.add(port('UDP_PORT', 8080));
      } else {
        kind = String(container.image).includes('echo-basic') ? 'http' : 'unknown';
        tcp.set(port('HTTP_PORT', 3000), undefined);
        tcp.set(port('H2C_PORT', 3001), undefined);
        const tls = serving('TLS_SERVER_PRIVKEY');
        if (tls) tcp.set(port('HTTPS_PORT', 8443), tls);
      }
      return {
        // A Pod's name is its Deployment's, then the ReplicaSet's hash and its own suffix.
        name: `${d.metadata.name}-6d4f9c8b7-x2k4q`,
        namespace,
        kind,
        ...(env.SERVICE_NAME ? { serviceName: env.SERVICE_NAME } : {}),
        ...(kind === 'unknown' ? {} : { tcp, udp }),
        labels: (template.metadata?.labels ?? {}) as Record<string, string>,
        address: `10.2.${Math.floor(i / 250)}.${(i % 250) + 1}`,
      };
    });
}

/**
 * The EndpointSlices the cluster's controller would publish: each Service's ready Pods. A Service
 * whose Pods no manifest defines (HTTPRouteServiceTypes makes its own at run time) gets one endpoint
 * of a Pod named after it that accepts anything, so routing can still be checked.
 */
function endpointSlices(objects: KubeObject[], pods: ModelPod[]): { slices: KubeObject[]; standIns: ModelPod[] } {
  const standIns: ModelPod[] = [];
  const slices = objects
    .filter((o) => o.kind === 'Service')
    .map((svc, n) => {
      const ports = ((svc as Json).spec?.ports ?? []) as Json[];
      const selector = ((svc as Json).spec?.selector ?? {}) as Record<string, string>;
      let selected = Object.keys(selector).length
        ? pods.filter(
            (p) =>
              p.namespace === svc.metadata.namespace && Object.entries(selector).every(([k, v]) => p.labels[k] === v),
          )
        : [];
      if (!selected.length) {
        const standIn: ModelPod = {
          name: svc.metadata.name,
          namespace: svc.metadata.namespace ?? 'default',
          kind: 'unknown',
          labels: {},
          address: `10.1.${Math.floor(n / 250)}.${(n % 250) + 1}`,
        };
        standIns.push(standIn);
        selected = [standIn];
      }
      return {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `${svc.metadata.name}-eps`,
          namespace: svc.metadata.namespace,
          labels: { 'kubernetes.io/service-name': svc.metadata.name },
        },
        addressType: 'IPv4',
        endpoints: selected.map((p) => ({ addresses: [p.address], conditions: { ready: true } })),
        ports: ports.map((p) => ({
          name: p.name ?? '',
          port: typeof p.targetPort === 'number' ? p.targetPort : p.port,
          protocol: p.protocol ?? 'TCP',
        })),
      } as KubeObject;
    });
  return { slices, standIns: standIns };
}

export interface ConformanceWorld {
  objects: KubeObject[];
  envoy(gateway: string): EnvoyResources | undefined;
  /** The endpoints (and their Pods) and TLS of a cluster. */
  upstream(res: EnvoyResources, cluster: string): Upstream;
}

/**
 * An object as the API server stores it: with a creationTimestamp, `seconds` after the suite's
 * manifests were applied (all in the same second: their order is then by name, as the routes'
 * conflict rule says). The translator takes an object without one for the newest.
 */
function stamped(o: KubeObject, seconds: number): KubeObject {
  o.metadata.creationTimestamp ??= new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString();
  return o;
}

/** Structs the API inlines in their parent's JSON (Go's embedded fields). */
const INLINED = new Set(['CommonRouteSpec', 'BackendRef', 'BackendObjectReference', 'TypeMeta']);

/** A Go value of the API, as the extractor evaluated it, in the API's JSON form. */
function apiJson(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(apiJson);
  if (!v || typeof v !== 'object') return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v as Json)) {
    if (k === '_type') continue;
    if (INLINED.has(k)) Object.assign(out, apiJson(x));
    else out[k[0]!.toLowerCase() + k.slice(1)] = apiJson(x);
  }
  return out;
}

/** An object a test creates in code (a Go literal of gatewayv1 or corev1) as a manifest would give it. */
function objectFromGo(go: Json): KubeObject {
  const [pkg, kind] = String(go._type).split('.') as [string, string];
  const meta = (go.ObjectMeta ?? {}) as Json;
  const o: Json = {
    apiVersion: pkg === 'corev1' ? 'v1' : 'gateway.networking.k8s.io/v1',
    kind,
    metadata: { name: meta.Name, ...(meta.Namespace ? { namespace: meta.Namespace } : {}) },
  };
  for (const [k, x] of Object.entries(go))
    if (!['_type', 'ObjectMeta', 'TypeMeta'].includes(k)) o[k[0]!.toLowerCase() + k.slice(1)] = apiJson(x);
  return o as KubeObject;
}

/** The objects of a test: its manifests on top of the base ones, and what the suite creates in code; and its Pods. */
export function conformanceObjects(
  table: ConformanceTable,
  problems: string[],
): { objects: KubeObject[]; pods: ModelPod[] } {
  const objects: KubeObject[] = [];
  const seen = new Set<string>();
  for (const file of ['base.yaml', ...table.manifests]) {
    const text = readFileSync(join(DIR, 'manifests', file), 'utf8').replaceAll('{GATEWAY_CLASS_NAME}', GATEWAY_CLASS);
    for (const o of parseManifests(text, file)) {
      normalizeNamespace(o, 'default');
      const key = `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const problem = manifestProblem(o, file, 'strict');
      if (problem) problems.push(problem);
      else objects.push(stamped(o, 0));
    }
  }
  const pods = deploymentPods(objects);
  const { slices, standIns } = endpointSlices(objects, pods);
  objects.push(...programmaticObjects(), ...slices);
  return { objects, pods: [...pods, ...standIns] };
}

/** These objects translated; Envoy resources per Gateway, built when asked for. */
export function conformanceWorld(objects: KubeObject[], pods: ModelPod[], problems: string[]): ConformanceWorld {
  const snapshot = snapshotFromObjects(objects);
  const result = new Translator().translate(snapshot);
  const lookup = (kind: string, ns: string, name: string) =>
    snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
  const built = new Map<string, EnvoyResources>();
  const byAddress = new Map(pods.map((p) => [p.address, p]));
  return {
    objects,
    envoy(gateway) {
      if (!built.has(gateway)) {
        const ir = result.xdsIR.gateways.get(gateway);
        if (!ir) return undefined;
        const res = envoyResourcesFor(ir, lookup, undefined, result.xdsIR.endpoints);
        // What Envoy would refuse (field rules, then load rules) is a problem before any request is sent.
        const invalid = [
          ...validateResources(res),
          ...envoyLoadProblems(res).map((p) => `${p.resource} ${p.field}: ${p.message}`),
        ];
        if (invalid.length) problems.push(...invalid.map((e) => `${gateway}: ${e}`));
        built.set(gateway, res);
      }
      return built.get(gateway);
    },
    upstream(res, name) {
      const cluster = res.clusters.find((c: Cluster) => c.name === name);
      const assignment =
        cluster?.type === 'EDS' ? res.endpoints.find((e) => e.cluster_name === name) : cluster?.load_assignment;
      const endpoints = (assignment?.endpoints ?? []).flatMap((l) =>
        (l.lb_endpoints ?? [])
          .filter((e) => ['HEALTHY', 'UNKNOWN'].includes(String(e.health_status ?? 'UNKNOWN')))
          .map((e) => {
            const address = e.endpoint?.address?.socket_address;
            const pod = byAddress.get(address?.address ?? '');
            if (!pod) throw new Error(`cluster ${name}: endpoint ${address?.address} is no Pod of the model`);
            return { pod, port: Number(address?.port_value ?? 0) };
          }),
      );
      const socket = cluster?.transport_socket;
      const tls =
        socket?.name === 'envoy.transport_sockets.tls' ? (socket.typed_config as UpstreamTlsContext) : undefined;
      return {
        endpoints,
        ...(tls ? { tls } : {}),
        clientCertificateIssuer: (sds) => SUITE_CERTIFICATES[sds]?.issuer,
      };
    },
  };
}

export interface CaseResult {
  test: string;
  name: string;
  ok: boolean;
  why?: string;
}

function gatewayPort(world: ConformanceWorld, address: Json): { gateway: string; port: number } {
  const ref = address.gatewayAddress ?? address;
  const nn = ref.gateway as { Name: string; Namespace: string };
  const gw = world.objects.find(
    (o) => o.kind === 'Gateway' && o.metadata.name === nn.Name && o.metadata.namespace === nn.Namespace,
  ) as Json | undefined;
  if (!gw) throw new Error(`Gateway ${nn.Namespace}/${nn.Name} is in no manifest`);
  const listeners = gw.spec.listeners as Json[];
  const listener = (ref.listener && listeners.find((l) => l.name === ref.listener)) || listeners[0]!;
  const port = address.port !== undefined ? Number(address.port) : listener.port;
  return { gateway: `${nn.Namespace}/${nn.Name}`, port };
}

/** Cluster names are `namespace/service/port`. */
const serviceOf = (cluster: string) => {
  const [namespace, name] = cluster.split('/');
  return { namespace: namespace ?? '', name: name ?? '' };
};

function statusCodes(expected: Json): number[] {
  const codes = [...((expected.Response?.StatusCodes as number[] | undefined) ?? [])];
  const single = expected.Response?.StatusCode as number | undefined;
  if (single && !codes.includes(single)) codes.push(single);
  return codes.length ? codes : [200];
}

/** One answer the client may get, and the target (weighted cluster) that gave it; none for the proxy's own. */
interface Answered {
  target?: WeightedTarget;
  answer: BackendAnswer;
}

/**
 * Every answer a request that reached a route may get: the proxy's own (404, direct responses,
 * redirects), or each live target's for each endpoint its first try may go to. The conformance tests
 * expect the same answer every time (they require several in a row).
 */
function answers(
  world: ConformanceWorld,
  res: EnvoyResources,
  outcome: Extract<HttpOutcome, { kind: 'http' }>,
): Answered[] {
  if (outcome.status !== undefined) return [{ answer: { status: outcome.status } }];
  const live = (outcome.targets ?? []).filter((t) => t.weight > 0);
  if (!live.length) return [{ answer: { status: 500, why: 'no live backend' } }];
  return live.flatMap((target) => {
    const h2 = !!res.clusters.find((c) => c.name === target.cluster)?.http2_protocol_options;
    const upstream = world.upstream(res, target.cluster);
    return backendAnswers(outcome.action!, target, upstream, h2).map((answer) => ({ target, answer }));
  });
}

const isTimeout = (status: number) => status === 408 || status === 504;

function headerMap(target: WeightedTarget | undefined, backendSet: Json | undefined): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  for (const [k, v] of Object.entries(backendSet ?? {})) headers.set(k.toLowerCase(), [String(v)]);
  for (const h of target?.responseHeaders.add ?? []) {
    const key = h.header!.key!.toLowerCase();
    if (h.append_action === 'OVERWRITE_IF_EXISTS_OR_ADD') headers.set(key, [h.header!.value ?? '']);
    else headers.set(key, [...(headers.get(key) ?? []), h.header!.value ?? '']);
  }
  for (const name of target?.responseHeaders.remove ?? []) headers.delete(name.toLowerCase());
  return headers;
}

/** Where a request to a Gateway address goes, and what it may get back; or why it gets no HTTP answer. */
function sendHttp(
  world: ConformanceWorld,
  address: Json,
  request: Json,
  tls?: { sni: string },
):
  | { refused: string }
  | { outcome: Extract<HttpOutcome, { kind: 'http' }>; answered: Answered[]; scheme: 'http' | 'https'; where: string } {
  const { gateway, port } = gatewayPort(world, address);
  const res = world.envoy(gateway);
  if (!res) return { refused: `no xDS for Gateway ${gateway}` };
  const scheme = tls ? 'https' : 'http';
  const defaultPort = (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443);
  const authority = request.Host || (defaultPort ? '192.0.2.10' : `192.0.2.10:${port}`);
  // The suite's gRPC client (grpc-go) speaks HTTP/2 only, and over TLS asks for it through ALPN.
  const grpc = hasGrpcContentType((request.Headers as Record<string, string> | undefined)?.['content-type']);
  const outcome = routeHttp(res, {
    port,
    ...(tls ? { sni: tls.sni } : {}),
    authority,
    method: request.Method || 'GET',
    path: request.Path || '/',
    headers: { ...(request.Headers ?? {}) },
    ...(grpc ? { alpn: ['h2'], http2Only: true } : {}),
  });
  if (outcome.kind === 'refused') return { refused: `connection refused: ${outcome.reason}` };
  if (outcome.reset) return { refused: `stream reset: ${outcome.localReply}` };
  const where = `[${outcome.filterChain} ${outcome.virtualHost ?? '-'} ${outcome.route ?? '-'}]`;
  return { outcome, answered: answers(world, res, outcome), scheme, where };
}

const because = (a: BackendAnswer) => (a.why ? ` (${a.why})` : '');

/** CompareRoundTrip (conformance/utils/http) on the modelled answers; a reason when one fails. */
export function judgeHttp(
  world: ConformanceWorld,
  address: Json,
  expected: Json,
  tls?: { sni: string },
): string | undefined {
  const request = (expected.Request ?? {}) as Json;
  const sent = sendHttp(world, address, request, tls);
  if ('refused' in sent) return sent.refused;
  const { outcome, answered, scheme, where } = sent;
  const codes = statusCodes(expected);
  for (const { target, answer: got } of answered) {
    // CompareRoundTrip: a timeout (408 or 504) passes where the test expects a timeout.
    if (isTimeout(got.status) && codes.some(isTimeout)) continue;
    if (!codes.includes(got.status)) return `status ${got.status}${because(got)}, expected ${codes.join('|')} ${where}`;
    if (got.status === 200 || got.status === 204) {
      if (outcome.cors?.preflight) {
        return compareHeaders(new Map(Object.entries(outcome.cors.headers).map(([k, v]) => [k, [v]])), expected);
      }
      if (!target) continue;
      const problem = judgeEcho(target, got, expected, outcome.cors?.headers);
      if (problem) return `${problem} ${where}`;
      continue;
    }
    if (got.status >= 300 && got.status < 400 && expected.RedirectRequest) {
      const written = defaultPortWritten(outcome.location!);
      if (written) return written;
      const location = new URL(outcome.location!);
      const want = expected.RedirectRequest as Json;
      const gotPort = location.port;
      const host = location.hostname;
      if (want.Host && want.Host !== host) return `redirect host ${host}, expected ${want.Host} (${outcome.location})`;
      if (want.Port) {
        if (want.Port !== gotPort) return `redirect port '${gotPort}', expected ${want.Port} (${outcome.location})`;
      } else {
        const s = location.protocol.slice(0, -1);
        if (s === 'http' && gotPort !== '' && gotPort !== '80')
          return `redirect port ${gotPort} for http (${outcome.location})`;
        if (s === 'https' && gotPort !== '' && gotPort !== '443')
          return `redirect port ${gotPort} for https (${outcome.location})`;
      }
      const wantScheme = want.Scheme || scheme;
      if (location.protocol !== `${wantScheme}:`) return `redirect scheme ${location.protocol}, expected ${wantScheme}`;
      const wantPath = want.Path || (request.Path || '/').split('?')[0];
      if (wantPath !== location.pathname) return `redirect path ${location.pathname}, expected ${wantPath}`;
    }
  }
  return undefined;
}

/**
 * HTTPRequestRedirectFilter.port: "Implementations SHOULD NOT add the port number in the 'Location'
 * header in the following cases: A Location header that will use HTTP ... _and_ use port 80. A
 * Location header that will use HTTPS ... _and_ use port 443." Read from the header as written:
 * `new URL` drops a default port, so a Location carrying `:80` would look the same as one without.
 */
function defaultPortWritten(location: string): string | undefined {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)/.exec(location);
  const port = m ? /:(\d+)$/.exec(m[2]!.replace(/^\[[^\]]*\]/, ''))?.[1] : undefined;
  const scheme = m?.[1]!.toLowerCase();
  if ((scheme === 'http' && port === '80') || (scheme === 'https' && port === '443'))
    return `redirect Location ${location} writes the default port ${port} (the spec: SHOULD NOT)`;
  return undefined;
}

/** What the echo server reports about the request it got, against the test's expectations. */
function judgeEcho(
  target: WeightedTarget,
  got: BackendAnswer,
  expected: Json,
  corsHeaders: Record<string, string> | undefined,
): string | undefined {
  const svc = serviceOf(target.cluster);
  const pod = got.pod ?? { name: svc.name, namespace: svc.namespace };
  // Without an ExpectedRequest the suite expects the request as sent, its headers included.
  const exp = (expected.ExpectedRequest?.Request ?? expected.Request ?? {}) as Json;
  // The Pod's name starts with its Deployment's.
  if (expected.Backend && !pod.name.startsWith(expected.Backend))
    return `reached ${pod.name} (${target.cluster}), expected ${expected.Backend}`;
  if ((expected.Namespace ?? '') !== pod.namespace)
    return `reached namespace ${pod.namespace}, expected ${expected.Namespace}`;
  const upstream = target.request;
  if (exp.Host && exp.Host !== upstream.host) return `upstream host ${upstream.host}, expected ${exp.Host}`;
  const expPath = exp.Path ?? '';
  // The echo backend reports the request URI: the path with its query string.
  if (expPath !== upstream.path) return `upstream path ${upstream.path}, expected ${expPath}`;
  if ((exp.Method || 'GET') !== upstream.method) return `upstream method ${upstream.method}, expected ${exp.Method}`;
  for (const [name, value] of Object.entries((exp.Headers ?? {}) as Json)) {
    const actual = upstream.headers.get(name.toLowerCase());
    if (!actual) return `upstream header ${name} missing`;
    if (actual.join(',') !== value) return `upstream header ${name}: ${actual.join(',')}, expected ${value}`;
  }
  for (const name of (expected.ExpectedRequest?.AbsentHeaders ?? []) as string[])
    if (upstream.headers.has(name.toLowerCase())) return `upstream header ${name} present, expected absent`;
  // The server name and client certificate the backend saw in the proxy's TLS handshake.
  if (exp.SNI && exp.SNI !== got.sni) return `backend saw SNI ${got.sni ?? '(no TLS)'}, expected ${exp.SNI}`;
  if (exp.ClientCert) {
    const want = (exp.ClientCert as Json).tlsSecretCert as Json | undefined;
    const name = want ? `${want.Namespace}/${want.Name}` : JSON.stringify(exp.ClientCert);
    if (got.clientCertificate !== name)
      return `backend saw client certificate ${got.clientCertificate ?? '(none)'}, expected ${name}`;
  }
  const responseHeaders = headerMap(target, expected.BackendSetResponseHeaders);
  for (const [k, v] of Object.entries(corsHeaders ?? {})) responseHeaders.set(k, [v]);
  return compareHeaders(responseHeaders, expected);
}

/**
 * MakeRequestAndExpectFailure (WaitForConsistentFailureResponse): an HTTP answer that is neither
 * 200 nor a timeout. A request that gets no answer (refused) is never ready, so the test fails.
 */
function judgeHttpFailure(world: ConformanceWorld, address: Json, expected: Json): string | undefined {
  const sent = sendHttp(world, address, (expected.Request ?? {}) as Json);
  if ('refused' in sent) return `${sent.refused}: no HTTP answer, where the test waits for a failing one`;
  for (const { answer } of sent.answered) {
    if (answer.status === 200) return `status 200, expected a failure ${sent.where}`;
    if (isTimeout(answer.status)) return `status ${answer.status}, which the test takes for not ready ${sent.where}`;
  }
  return undefined;
}

function compareHeaders(actual: Map<string, string[]>, expected: Json): string | undefined {
  const ignoreWs = !!expected.Response?.IgnoreWhitespace;
  const norm = (s: string) => (ignoreWs ? s.replaceAll(' ', '') : s);
  for (const [name, values] of Object.entries(
    (expected.Response?.ValidHeaderValues ?? {}) as Record<string, string[]>,
  )) {
    const got = actual.get(name.toLowerCase());
    if (!got) return `response header ${name} missing`;
    if (!values.map(norm).includes(norm(got.join(',')))) return `response header ${name}: ${got.join(',')}`;
  }
  for (const [name, value] of Object.entries((expected.Response?.Headers ?? {}) as Record<string, string>)) {
    const got = actual.get(name.toLowerCase());
    if (!got) return `response header ${name} missing`;
    if (norm(got.join(',')) !== norm(value)) return `response header ${name}: ${got.join(',')}, expected ${value}`;
  }
  for (const name of (expected.Response?.AbsentHeaders ?? []) as string[])
    if (actual.has(name.toLowerCase())) return `response header ${name} present, expected absent`;
  return undefined;
}

const GRPC_ECHO = '/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';

/** A gRPC call as the HTTP/2 POST to /service/method it is. */
function grpcRequest(expected: Json): Json {
  const method = expected.EchoRequest ? 'Echo' : expected.EchoTwoRequest ? 'EchoTwo' : 'EchoThree';
  return {
    Host: expected.RequestMetadata?.Authority ?? '',
    Path: `${GRPC_ECHO}/${method}`,
    Method: 'POST',
    Headers: { 'content-type': 'application/grpc', ...(expected.RequestMetadata?.Metadata ?? {}) },
  };
}

/** A gRPC call judged as HTTP; a 404 from the proxy is UNIMPLEMENTED. */
function judgeGrpc(world: ConformanceWorld, address: Json, expected: Json): string | undefined {
  const request = grpcRequest(expected);
  const http: Json = {
    Request: request,
    Backend: expected.Backend,
    Namespace: expected.Namespace,
    ExpectedRequest: { Request: { Method: 'POST', Path: request.Path } },
    Response: { StatusCode: expected.Response?.Code === 'Unimplemented' ? 404 : 200 },
  };
  return judgeHttp(world, address, http);
}

/**
 * grpc.MakeRequestAndExpectEventuallyConsistentFailure: a status other than OK (any HTTP answer but
 * a 200: Envoy's 503 is UNAVAILABLE, its 404 UNIMPLEMENTED). An RPC that cannot connect returns an
 * error instead, which the test takes for not ready, so it fails.
 */
function judgeGrpcFailure(world: ConformanceWorld, address: Json, expected: Json): string | undefined {
  const sent = sendHttp(world, address, grpcRequest(expected));
  if ('refused' in sent) return `${sent.refused}: the RPC errors, where the test waits for a status`;
  const ok = sent.answered.find(({ answer }) => answer.status === 200);
  return ok ? `the RPC succeeds (reaches ${ok.answer.pod?.name ?? ok.target?.cluster}) ${sent.where}` : undefined;
}

/** `namespace/name` of the Secret a kubernetes.GetTLSSecret call read, as the extractor records it. */
function secretOf(value: unknown): string | undefined {
  const ref = (value as Json | undefined)?.tlsSecretCert as Json | undefined;
  return ref ? `${ref.Namespace}/${ref.Name}` : undefined;
}

/**
 * The client's TLS handshake with a listener that terminates TLS (DownstreamTlsContext): the client
 * trusts only the Gateway certificate the test read (its Secret must be among the chain's), and a
 * listener that validates client certificates takes one only if trusted_ca holds its CA (unless
 * trust_chain_verification is ACCEPT_UNTRUSTED) and refuses a client without one when
 * require_client_certificate is set. Undefined when it succeeds, or when the chain does not terminate TLS.
 */
function clientHandshakeProblem(
  res: EnvoyResources,
  port: number,
  sni: string,
  serverCert: unknown,
  clientCert: unknown,
): string | undefined {
  const listener = listenerFor(res, port);
  const chain = listener && selectFilterChain(listener, sni);
  const socket = chain?.transport_socket;
  if (socket?.name !== 'envoy.transport_sockets.tls') return undefined;
  const ctx = socket.typed_config as DownstreamTlsContext;
  const common = ctx.common_tls_context ?? {};
  const server = secretOf(serverCert);
  const served = (common.tls_certificate_sds_secret_configs ?? []).map((c) => c.name);
  if (server && !served.includes(server)) return `the listener presents ${served.join(', ')}, not ${server}`;
  const client = secretOf(clientCert);
  if (!client) return ctx.require_client_certificate?.value ? 'the listener requires a client certificate' : undefined;
  const validation = common.validation_context;
  if (!validation?.trusted_ca || validation.trust_chain_verification === 'ACCEPT_UNTRUSTED') return undefined;
  const issuer = SUITE_CERTIFICATES[client]?.issuer ?? 'unknown';
  const pem = (s: string) => s.replace(/\s+/g, '');
  if (!pem(validation.trusted_ca.inline_string ?? '').includes(pem(issuer)))
    return `the listener does not trust the CA of the client certificate ${client}`;
  return undefined;
}

/**
 * tls.MakeTLSRequestAndExpectEventuallyConsistentFailureResponse: the request must fail to complete
 * (no listener or filter chain takes it, or the handshake fails); any HTTP answer is a success to it.
 */
function judgeTlsFailure(world: ConformanceWorld, address: Json, sni: string, args: unknown[]): string | undefined {
  const { gateway, port } = gatewayPort(world, address);
  const res = world.envoy(gateway);
  if (!res) return undefined;
  const handshake = clientHandshakeProblem(res, port, sni, args[args.length - 5], args[args.length - 4]);
  if (handshake) return undefined;
  const tcp = routeTcp(res, port, sni);
  if (tcp.kind === 'tcp')
    return tcp.targets.some((t) => t.weight > 0 && t.healthy) ? 'the connection reaches a backend' : undefined;
  const sent = sendHttp(world, address, (args[args.length - 1] as Json).Request ?? {}, { sni });
  if ('refused' in sent) return undefined;
  return `the handshake succeeds and the request gets ${sent.answered[0]!.answer.status} ${sent.where}`;
}

/**
 * A TCP connection through a Gateway (MakeTCPRequestAndExpectEventuallyValidResponse, or a TLS
 * request through a passthrough listener): each endpoint it may reach must accept it, in TLS where
 * the Pod's port serves TLS; the TCP echo server reports its Pod (named `<Backend>-...`), namespace,
 * whether it got TLS (BackendIsTLS) and the server name it saw (Hostname).
 */
function judgeTcp(
  world: ConformanceWorld,
  address: Json,
  sni: string | undefined,
  clientTls: boolean,
  expected: Json,
): string | undefined {
  if (expected.Backend !== undefined && typeof expected.Backend !== 'string')
    return `unmodelled backend ${JSON.stringify(expected.Backend)}`;
  const { gateway, port } = gatewayPort(world, address);
  const res = world.envoy(gateway);
  if (!res) return `no xDS for Gateway ${gateway}`;
  const outcome = routeTcp(res, port, sni);
  if (outcome.kind === 'refused') return `refused: ${outcome.reason}`;
  const live = outcome.targets.filter((t) => t.weight > 0);
  if (!live.length || live.some((t) => !t.healthy)) return `no live backend (${JSON.stringify(outcome.targets)})`;
  const tcpEcho = expected._type === 'tcp.ExpectedResponse';
  for (const t of live) {
    const upstream = world.upstream(res, t.cluster);
    // What reaches the Pod is TLS when the proxy originates it, or passes the client's through.
    const tlsAtPod = !!upstream.tls || (clientTls && !outcome.terminatesTls);
    const sniAtPod = upstream.tls ? upstream.tls.sni : tlsAtPod ? sni : undefined;
    for (const { pod, port: podPort } of upstream.endpoints) {
      if (pod.tcp) {
        if (!pod.tcp.has(podPort)) return `${pod.name} listens on no port ${podPort} (${t.cluster})`;
        const serving = pod.tcp.get(podPort);
        if (tlsAtPod !== !!serving)
          return `${tlsAtPod ? 'TLS' : 'plain text'} reaches ${serving ? 'TLS' : 'plain-text'} port ${podPort} of ${pod.name}`;
        const handshake = upstream.tls && serving && handshakeProblem(upstream.tls, serving, upstream);
        if (handshake) return `the proxy's handshake with ${pod.name} fails: ${handshake}`;
      }
      const prefix = tcpEcho ? `${expected.Backend}-` : expected.Backend;
      if (expected.Backend && !pod.name.startsWith(prefix))
        return `reached ${pod.name} (${t.cluster}), expected ${prefix}`;
      if (expected.Namespace && pod.namespace !== expected.Namespace) return `reached namespace ${pod.namespace}`;
      if (tcpEcho && (expected.BackendIsTLS ?? false) !== tlsAtPod)
        return `the backend got ${tlsAtPod ? 'TLS' : 'plain text'}, expected BackendIsTLS ${expected.BackendIsTLS ?? false}`;
      const hostname = expected.Hostname && sniOf(world, expected.Hostname);
      if (tcpEcho && hostname && hostname !== sniAtPod)
        return `the backend saw server name ${sniAtPod ?? '(none)'}, expected ${hostname}`;
    }
  }
  return undefined;
}

/**
 * `hostnames[i]` from GatewayAndTLSRoutesMustBeAccepted: the spec.hostnames of the last TLSRoute it
 * was given (it assigns, not appends, per route); the extractor lists the routes.
 */
function routeHostname(world: ConformanceWorld, ref: Json): string | undefined {
  const last = (ref.routeHostnames as Json[]).at(-1);
  const route = world.objects.find(
    (o) => o.kind === 'TLSRoute' && o.metadata.name === last?.Name && o.metadata.namespace === last?.Namespace,
  ) as Json | undefined;
  return ((route?.spec.hostnames ?? []) as string[])[Number(ref.index ?? 0)];
}

function sniOf(world: ConformanceWorld, value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && 'routeHostnames' in value) return routeHostname(world, value as Json);
  return undefined;
}

/**
 * A datagram through a UDP listener: the UDP echo server of each Pod it may reach answers with its
 * SERVICE_NAME and namespace (udp.ExpectEchoResponseFromBackend compares both when given). A cluster
 * split by locality is judged by its localities' names.
 */
function judgeUdp(world: ConformanceWorld, address: Json, expected: Json): string | undefined {
  const { gateway, port } = gatewayPort(world, address);
  const res = world.envoy(gateway)!;
  const targets = routeUdp(res, port) ?? [];
  if (!targets.length) return 'no UDP listener';
  for (const t of targets) {
    if (!res.clusters.some((c) => c.name === t.cluster)) {
      if (expected.Service && t.cluster !== expected.Service)
        return `UDP reaches ${t.cluster}, expected ${expected.Service}`;
      continue;
    }
    for (const { pod, port: podPort } of world.upstream(res, t.cluster).endpoints) {
      if (pod.udp && !pod.udp.has(podPort)) return `${pod.name} listens on no UDP port ${podPort}`;
      const service = pod.kind === 'unknown' ? pod.name : (pod.serviceName ?? '');
      if (expected.Service && service !== expected.Service)
        return `UDP reaches ${pod.name}, which reports service ${service || '(none)'}, expected ${expected.Service}`;
      if (expected.Namespace && pod.namespace !== expected.Namespace) return `UDP reaches namespace ${pod.namespace}`;
    }
  }
  return undefined;
}

/** Weighted distribution: the weights Envoy splits by, as shares, against the expected shares. */
function judgeWeights(
  world: ConformanceWorld,
  table: ConformanceTable,
  address: Json,
  weights: Json,
): string | undefined {
  const { gateway, port } = gatewayPort(world, address);
  const res = world.envoy(gateway)!;
  let targets: { cluster: string; weight: number }[] | undefined;
  if (table.features.some((f) => f.includes('UDPRoute'))) targets = routeUdp(res, port);
  else if (table.features.some((f) => f.includes('TCPRoute'))) {
    const o = routeTcp(res, port);
    targets = o.kind === 'tcp' ? o.targets : undefined;
  } else {
    const grpc = table.features.some((f) => f.includes('GRPC'));
    const o = routeHttp(res, {
      port,
      authority: grpc ? 'grpc-weight.example.com' : '192.0.2.10',
      method: grpc ? 'POST' : 'GET',
      path: grpc ? '/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo' : '/',
      headers: grpc ? { 'content-type': 'application/grpc' } : {},
    });
    targets = o.kind === 'http' ? o.targets : undefined;
  }
  if (!targets?.length) return 'no weighted targets';
  const total = targets.reduce((s, t) => s + t.weight, 0);
  for (const [backend, share] of Object.entries(weights as Record<string, number>)) {
    const weight = targets.filter((t) => serviceOf(t.cluster).name === backend).reduce((s, t) => s + t.weight, 0);
    if (Math.abs(weight / total - share) > 0.001)
      return `${backend} gets ${(weight / total).toFixed(3)}, expected ${share}`;
  }
  return undefined;
}

/** Every request of one conformance test, judged. Calls the route-table check cannot model are listed as such. */
export function runConformanceTable(table: ConformanceTable): {
  results: CaseResult[];
  unmodelled: string[];
  problems: string[];
} {
  const problems: string[] = [];
  const made = conformanceObjects(table, problems);
  const pods = made.pods;
  let objects = made.objects;
  let world = conformanceWorld(objects, pods, problems);
  const results: CaseResult[] = [];
  const unmodelled: string[] = [];
  // Objects the test created in code, each deleted when the subtest that created it ends
  // (MustApplyObjectsWithCleanup registers the deletion with that subtest's t.Cleanup).
  let created: { object: KubeObject; subtest: string }[] = [];
  const unevaluated = new Set<string>();
  const within = (subtest: string, outer: string) => subtest === outer || subtest.startsWith(`${outer}/`);
  table.calls.forEach((call, i) => {
    const name = `${call.subtest ? `${call.subtest} ` : ''}#${i} (line ${call.line})`;
    const args = call.args;
    const subtest = call.subtest ?? '';
    const ended = created.filter((c) => !within(subtest, c.subtest));
    if (ended.length) {
      created = created.filter((c) => !ended.includes(c));
      objects = objects.filter((o) => !ended.some((c) => c.object === o));
      world = conformanceWorld(objects, pods, problems);
    }
    if (call.function === 'client.Apply') {
      if (JSON.stringify(args).includes('"unresolved"')) {
        unevaluated.add(subtest);
        return;
      }
      for (const go of args[0] as Json[]) {
        const object = stamped(objectFromGo(go), i + 1);
        created.push({ object, subtest });
        objects = [...objects, object];
      }
      world = conformanceWorld(objects, pods, problems);
      return;
    }
    if ([...unevaluated].some((u) => within(subtest, u)) && !call.function.startsWith('client.')) {
      unmodelled.push(`${name}: ${call.function} after objects the extractor could not evaluate`);
      return;
    }
    const addressArg =
      args.find((a) => a && typeof a === 'object' && 'gatewayAddress' in a) ??
      (call.gateway ? { gatewayAddress: call.gateway } : undefined);
    const last = args[args.length - 1];
    if (call.function === 'client.Delete') {
      const target = args[0] as Json;
      const kind = String(target._type).split('.').pop();
      const meta = target.ObjectMeta as Json;
      objects = objects.filter(
        (o) =>
          !(
            o.kind === kind &&
            o.metadata.name === meta.Name &&
            (o.metadata.namespace ?? '') === (meta.Namespace ?? '')
          ),
      );
      world = conformanceWorld(objects, pods, problems);
      return;
    }
    if (JSON.stringify(last).includes('"unresolved"') && call.function !== 'weight.TestWeightedDistribution') {
      unmodelled.push(`${name}: ${call.function} with values the extractor could not evaluate`);
      return;
    }
    let why: string | undefined;
    switch (call.function) {
      case 'http.MakeRequestAndExpectEventuallyConsistentResponse':
        why = judgeHttp(world, addressArg, last);
        break;
      case 'http.MakeRequest':
        why = judgeHttp(world, addressArg, args[0]);
        break;
      case 'http.MakeRequestAndExpectFailure':
        why = judgeHttpFailure(world, addressArg, last);
        break;
      case 'tls.MakeTLSRequestAndExpectEventuallyConsistentResponse':
      case 'tls.MakeTLSRequestAndExpectEventuallyConsistentFailureResponse': {
        const sni = sniOf(world, args[args.length - 2]);
        if (sni === undefined) {
          unmodelled.push(`${name}: server name ${JSON.stringify(args[args.length - 2])}`);
          return;
        }
        if (call.function.endsWith('FailureResponse')) {
          why = judgeTlsFailure(world, addressArg, sni, args);
          break;
        }
        const { gateway, port } = gatewayPort(world, addressArg);
        const res = world.envoy(gateway)!;
        const tcp = routeTcp(res, port, sni);
        // The arguments end: server certificate, client certificate and key, server name, expectation.
        const handshake = clientHandshakeProblem(res, port, sni, args[args.length - 5], args[args.length - 4]);
        // A TLS request through a passthrough listener reaches a TLS backend as it was sent.
        why = handshake
          ? `the client's handshake fails: ${handshake}`
          : tcp.kind === 'tcp'
            ? judgeTcp(world, addressArg, sni, true, last)
            : judgeHttp(world, addressArg, last, { sni });
        break;
      }
      case 'grpc.MakeRequestAndExpectEventuallyConsistentResponse':
        why = judgeGrpc(world, addressArg, last);
        break;
      case 'grpc.MakeRequestAndExpectEventuallyConsistentFailure':
        why = judgeGrpcFailure(world, addressArg, last);
        break;
      case 'tcp.MakeTCPRequestAndExpectEventuallyValidResponse': {
        const useTls = args[args.length - 2] === true;
        why = judgeTcp(world, addressArg, useTls ? sniOf(world, args[args.length - 3]) : undefined, useTls, last);
        break;
      }
      case 'tls.MakeTLSConnectionAndExpectEventuallyConnectionRejection': {
        const { gateway, port } = gatewayPort(world, addressArg);
        const outcome = routeTcp(world.envoy(gateway)!, port, sniOf(world, last));
        const live = outcome.kind === 'tcp' ? outcome.targets.filter((t) => t.weight > 0 && t.healthy) : [];
        if (live.length) why = `connection reaches ${live.map((t) => t.cluster).join(', ')}, expected rejection`;
        break;
      }
      case 'udp.ExpectEchoResponse':
      case 'udp.ExpectEchoResponseFromBackend': {
        const expected = (call.function === 'udp.ExpectEchoResponse' ? {} : last) as Json;
        why = judgeUdp(world, addressArg, expected);
        break;
      }
      case 'weight.TestWeightedDistribution':
        why = judgeWeights(world, table, addressArg, last);
        break;
      default:
        unmodelled.push(`${name}: ${call.function}`);
        return;
    }
    results.push({ test: table.test, name, ok: why === undefined, ...(why ? { why } : {}) });
  });
  return { results, unmodelled, problems };
}
