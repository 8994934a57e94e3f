// The upstream conformance tests' requests (tables extracted by scripts/extract-conformance-tables.sh)
// run through the route-table check against the Envoy resources Turnpike generates for the tests'
// own manifests. Each request is judged as the conformance suite's CompareRoundTrip would judge the
// answer, with the echo backend modelled: it answers 200 with what it received, honours `delay`
// (HTTPRouteTimeout*) and the retry simulation (`responseCode`, `succeedAfter`) of HTTPRouteRetry.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROLLER_NAME, type KubeObject } from '@turnpike/api';
import { manifestProblem, normalizeNamespace, parseManifests } from '@turnpike/engine';
import { snapshotFromObjects, Translator } from '@turnpike/translator';
import { envoyLoadProblems, envoyResourcesFor, validateResources, type EnvoyResources } from '../../src/index.js';
import { EXAMPLE_COM_CERT, EXAMPLE_COM_KEY } from '../../../translator/test/tls-fixtures.js';
import { routeHttp, routeTcp, routeUdp, type HttpOutcome, type WeightedTarget } from './envoy-router.js';
import { backendAnswer, type BackendAnswer } from './echo-backend.js';

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

const secret = (namespace: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace },
  type: 'kubernetes.io/tls',
  data: {
    'tls.crt': Buffer.from(EXAMPLE_COM_CERT).toString('base64'),
    'tls.key': Buffer.from(EXAMPLE_COM_KEY).toString('base64'),
  },
});
const caConfigMap = (namespace: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data: { 'ca.crt': EXAMPLE_COM_CERT },
});

/** What the conformance suite creates in code rather than in manifests (suite.go, Setup). */
function programmaticObjects(): KubeObject[] {
  const infra = 'gateway-conformance-infra';
  const web = 'gateway-conformance-web-backend';
  return [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: GATEWAY_CLASS },
      spec: { controllerName: CONTROLLER_NAME },
    },
    secret(web, 'certificate'),
    secret(infra, 'tls-validity-checks-certificate'),
    secret(infra, 'tls-validity-checks-client-certificate'),
    secret(infra, 'tls-validity-checks-per-port-client-certificate'),
    secret(infra, 'tls-checks-certificate'),
    secret(infra, 'tls-checks-client-certificate'),
    secret(infra, 'tls-passthrough-checks-certificate'),
    secret(infra, 'tls-terminate-checks-certificate'),
    caConfigMap(infra, 'mismatch-ca-certificate'),
    caConfigMap(web, 'web-backend-cm'),
    caConfigMap(infra, 'tls-validity-checks-ca-certificate'),
    caConfigMap(infra, 'tls-validity-checks-per-port-ca-certificate'),
    caConfigMap(infra, 'tls-checks-ca-certificate'),
  ];
}

/** One ready endpoint per Service port, as the cluster's EndpointSlice controller would publish. */
function endpointSlices(objects: KubeObject[]): KubeObject[] {
  let n = 0;
  return objects
    .filter((o) => o.kind === 'Service')
    .map((svc) => {
      n++;
      const ports = ((svc as Json).spec?.ports ?? []) as Json[];
      return {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `${svc.metadata.name}-eps`,
          namespace: svc.metadata.namespace,
          labels: { 'kubernetes.io/service-name': svc.metadata.name },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: [`10.1.${Math.floor(n / 250)}.${(n % 250) + 1}`], conditions: { ready: true } }],
        ports: ports.map((p) => ({
          name: p.name ?? '',
          port: typeof p.targetPort === 'number' ? p.targetPort : p.port,
          protocol: p.protocol ?? 'TCP',
        })),
      } as KubeObject;
    });
}

export interface ConformanceWorld {
  objects: KubeObject[];
  envoy(gateway: string): EnvoyResources | undefined;
}

/** The objects of a test: its manifests on top of the base ones, and what the suite creates in code. */
function conformanceObjects(table: ConformanceTable, problems: string[]): KubeObject[] {
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
      else objects.push(o);
    }
  }
  objects.push(...programmaticObjects(), ...endpointSlices(objects));
  return objects;
}

/** These objects translated; Envoy resources per Gateway, built when asked for. */
function conformanceWorld(objects: KubeObject[], problems: string[]): ConformanceWorld {
  const snapshot = snapshotFromObjects(objects);
  const result = new Translator().translate(snapshot);
  const lookup = (kind: string, ns: string, name: string) =>
    snapshot.get(kind)?.get(ns)?.get(name) as KubeObject | undefined;
  const built = new Map<string, EnvoyResources>();
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

/** The status and what the backend saw, for one request that reached a route. */
function answer(outcome: Extract<HttpOutcome, { kind: 'http' }>, expected: Json): BackendAnswer {
  if (outcome.status !== undefined) return { status: outcome.status };
  const live = (outcome.targets ?? []).filter((t) => t.weight > 0);
  if (!live.length) return { status: 500 };
  // Every target that may take the request must answer as expected: check the one that does not.
  const answers = live.map((t) => backendAnswer(outcome.action!, t, expected.Request?.Path ?? '/'));
  return answers.find((a) => a.status !== answers[0]!.status) ?? answers[0]!;
}

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

/** CompareRoundTrip (conformance/utils/http) on the modelled answer; a reason when it fails. */
export function judgeHttp(
  world: ConformanceWorld,
  address: Json,
  expected: Json,
  tls?: { sni: string },
): string | undefined {
  const { gateway, port } = gatewayPort(world, address);
  const res = world.envoy(gateway);
  if (!res) return `no xDS for Gateway ${gateway}`;
  const scheme = tls ? 'https' : 'http';
  const request = (expected.Request ?? {}) as Json;
  const defaultPort = (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443);
  const authority = request.Host || (defaultPort ? '192.0.2.10' : `192.0.2.10:${port}`);
  const method = request.Method || 'GET';
  const headers: Record<string, string> = { ...(request.Headers ?? {}) };
  const outcome = routeHttp(res, {
    port,
    ...(tls ? { sni: tls.sni } : {}),
    authority,
    method,
    path: request.Path || '/',
    headers,
  });
  const codes = statusCodes(expected);
  if (outcome.kind === 'refused') return `connection refused: ${outcome.reason}`;
  const got = answer(outcome, expected);
  const where = `[${outcome.filterChain} ${outcome.virtualHost ?? '-'} ${outcome.route ?? '-'}]`;
  if (!codes.includes(got.status)) return `status ${got.status}, expected ${codes.join('|')} ${where}`;
  if (got.status === 200 || got.status === 204) {
    if (outcome.cors?.preflight) {
      return compareHeaders(new Map(Object.entries(outcome.cors.headers).map(([k, v]) => [k, [v]])), expected);
    }
    const live = (outcome.targets ?? []).filter((t) => t.weight > 0);
    const exp = (expected.ExpectedRequest?.Request ?? expected.Request ?? {}) as Json;
    for (const target of live) {
      const svc = serviceOf(target.cluster);
      if (expected.Backend && !svc.name.startsWith(expected.Backend))
        return `reached ${target.cluster}, expected ${expected.Backend} ${where}`;
      if ((expected.Namespace ?? '') !== svc.namespace)
        return `reached namespace ${svc.namespace}, expected ${expected.Namespace} ${where}`;
      const upstream = target.request;
      if (exp.Host && exp.Host !== upstream.host)
        return `upstream host ${upstream.host}, expected ${exp.Host} ${where}`;
      const expPath = exp.Path ?? '';
      // The echo backend reports the request URI: the path with its query string.
      if (expPath !== upstream.path) return `upstream path ${upstream.path}, expected ${expPath} ${where}`;
      if ((exp.Method || 'GET') !== upstream.method)
        return `upstream method ${upstream.method}, expected ${exp.Method}`;
      // Without an ExpectedRequest the suite expects the request as sent, its headers included.
      for (const [name, value] of Object.entries((exp.Headers ?? {}) as Json)) {
        const actual = upstream.headers.get(name.toLowerCase());
        if (!actual) return `upstream header ${name} missing ${where}`;
        if (actual.join(',') !== value) return `upstream header ${name}: ${actual.join(',')}, expected ${value}`;
      }
      for (const name of (expected.ExpectedRequest?.AbsentHeaders ?? []) as string[])
        if (upstream.headers.has(name.toLowerCase())) return `upstream header ${name} present, expected absent`;
      const responseHeaders = headerMap(target, expected.BackendSetResponseHeaders);
      if (outcome.cors) for (const [k, v] of Object.entries(outcome.cors.headers)) responseHeaders.set(k, [v]);
      const problem = compareHeaders(responseHeaders, expected);
      if (problem) return `${problem} ${where}`;
    }
    return undefined;
  }
  if (got.status >= 300 && got.status < 400 && expected.RedirectRequest) {
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

/** A gRPC call is an HTTP/2 POST to /service/method; a 404 from the proxy is UNIMPLEMENTED. */
function judgeGrpc(world: ConformanceWorld, address: Json, expected: Json): string | undefined {
  const method = expected.EchoRequest ? 'Echo' : expected.EchoTwoRequest ? 'EchoTwo' : 'EchoThree';
  const http: Json = {
    Request: {
      Host: expected.RequestMetadata?.Authority ?? '',
      Path: `/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/${method}`,
      Method: 'POST',
      Headers: { 'content-type': 'application/grpc', ...(expected.RequestMetadata?.Metadata ?? {}) },
    },
    Backend: expected.Backend,
    Namespace: expected.Namespace,
    ExpectedRequest: {
      Request: { Method: 'POST', Path: `/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/${method}` },
    },
    Response: { StatusCode: expected.Response?.Code === 'Unimplemented' ? 404 : 200 },
  };
  return judgeHttp(world, address, http);
}

function judgeTcp(world: ConformanceWorld, address: Json, sni: string | undefined, expected: Json): string | undefined {
  if (expected.Backend !== undefined && typeof expected.Backend !== 'string')
    return `unmodelled backend ${JSON.stringify(expected.Backend)}`;
  const { gateway, port } = gatewayPort(world, address);
  const res = world.envoy(gateway);
  if (!res) return `no xDS for Gateway ${gateway}`;
  const outcome = routeTcp(res, port, sni);
  if (outcome.kind === 'refused') return `refused: ${outcome.reason}`;
  const live = outcome.targets.filter((t) => t.weight > 0);
  if (!live.length || live.some((t) => !t.healthy)) return `no live backend (${JSON.stringify(outcome.targets)})`;
  for (const t of live) {
    const svc = serviceOf(t.cluster);
    if (expected.Backend && !svc.name.startsWith(expected.Backend))
      return `reached ${t.cluster}, expected ${expected.Backend}`;
    if (expected.Namespace && svc.namespace !== expected.Namespace) return `reached namespace ${svc.namespace}`;
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
  let objects = conformanceObjects(table, problems);
  let world = conformanceWorld(objects, problems);
  const results: CaseResult[] = [];
  const unmodelled: string[] = [];
  table.calls.forEach((call, i) => {
    const name = `${call.subtest ? `${call.subtest} ` : ''}#${i} (line ${call.line})`;
    const args = call.args;
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
      world = conformanceWorld(objects, problems);
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
      case 'tls.MakeTLSRequestAndExpectEventuallyConsistentResponse': {
        const sni = sniOf(world, args[args.length - 2]);
        if (sni === undefined) {
          unmodelled.push(`${name}: server name ${JSON.stringify(args[args.length - 2])}`);
          return;
        }
        const { gateway, port } = gatewayPort(world, addressArg);
        const tcp = routeTcp(world.envoy(gateway)!, port, sni);
        // A TLS request through a passthrough listener reaches a TLS backend as it was sent.
        why = tcp.kind === 'tcp' ? judgeTcp(world, addressArg, sni, last) : judgeHttp(world, addressArg, last, { sni });
        break;
      }
      case 'grpc.MakeRequestAndExpectEventuallyConsistentResponse':
        why = judgeGrpc(world, addressArg, last);
        break;
      case 'tcp.MakeTCPRequestAndExpectEventuallyValidResponse': {
        const useTls = args[args.length - 2] === true;
        why = judgeTcp(world, addressArg, useTls ? sniOf(world, args[args.length - 3]) : undefined, last);
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
        const { gateway, port } = gatewayPort(world, addressArg);
        const targets = routeUdp(world.envoy(gateway)!, port) ?? [];
        const expected = (call.function === 'udp.ExpectEchoResponse' ? {} : last) as Json;
        if (!targets.length) why = 'no UDP listener';
        else if (expected.Service && !targets.every((t) => serviceOf(t.cluster).name === expected.Service))
          why = `UDP reaches ${targets.map((t) => t.cluster).join(', ')}, expected ${expected.Service}`;
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
