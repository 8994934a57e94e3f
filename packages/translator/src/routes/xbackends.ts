// backendRefs to an XBackend (GEP-4894, v1.7.0 experimental): a backend that is not a Service.
// ExternalHostname: the proxy resolves the hostname itself (a DNS cluster, no endpoints of ours).
// EndpointSelector: the ready Pods its matchLabels select in its namespace are the endpoints (an EDS
// cluster; the endpoint stage finds the Pods). What is not served (protocols we do not speak, a field
// Envoy cannot honour) is a ResolvedRefs problem naming the field, so its share of requests answers 500
// as for any backend that does not resolve, and nothing is claimed for it.
import {
  PROXY_ADMIN_PORT,
  PROXY_DRAIN_PORT,
  PROXY_READINESS_PORT,
  PROXY_STATS_PORT,
  X_GATEWAY_GROUP,
  type BackendRef,
  type ClusterIR,
  type KubeObject,
  type XBackend,
} from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import type { Inputs } from '../incremental/inputs.js';
import { flat } from '../compact-values.js';
import { caBundleOf, subjectAltNames } from '../policies/backend-tls-policies.js';
import { checkSecretRef } from '../gateways/listener-tls.js';
import { sessionPersistenceOf } from './session-persistence.js';

export const XBACKEND_KIND = 'XBackend';

/** Ports the proxy serves itself on loopback (admin, readiness, stats, drain helper). */
const PROXY_LOCAL_PORTS = new Set([PROXY_ADMIN_PORT, PROXY_READINESS_PORT, PROXY_STATS_PORT, PROXY_DRAIN_PORT]);

export const isXBackendRef = (ref: BackendRef): boolean =>
  (ref.group ?? '') === X_GATEWAY_GROUP && ref.kind === XBACKEND_KIND;

/** `namespace/XBackend/name[/suffix]`: no Service is named `XBackend` (DNS labels are lower case). */
export function xbackendClusterName(namespace: string, name: string, protocol: ClusterIR['protocol']): string {
  return flat(`${namespace}/${XBACKEND_KIND}/${name}${protocol === 'http' ? '' : '/' + protocol}`);
}

/**
 * The cluster protocol a route speaks to an XBackend: the route's, unless the XBackend's `protocol`
 * says otherwise ("When not set, the implementation will use the protocol determined by the route or
 * listener configuration"). undefined: a protocol this route cannot carry, or one we do not speak.
 */
function clusterProtocol(
  protocol: XBackend['spec']['protocol'],
  route: ClusterIR['protocol'],
): ClusterIR['protocol'] | undefined {
  // A UDPRoute's backends are one cluster split by locality over Services' endpoints (l4routes.ts):
  // a name the proxy resolves has none to give. Not served.
  if (route === 'udp') return undefined;
  if (protocol === undefined) return route;
  if (route === 'tcp') return protocol === 'TCP' ? 'tcp' : undefined;
  switch (protocol) {
    case 'HTTP':
      return route;
    case 'HTTP11':
      // A GRPCRoute's requests are HTTP/2 (gRPC needs trailers): HTTP/1.1 cannot carry them.
      return route === 'h2' ? undefined : 'http';
    case 'HTTP2':
    case 'H2C':
    case 'GRPC':
      return 'h2';
    case 'WSS':
      // WebSocket over TLS (the CRD requires a TLS mode): an HTTP/1.1 cluster, whose Upgrade requests
      // every connection manager passes on (upgrade_configs websocket). gRPC cannot ride it.
      return route === 'http' ? 'http' : undefined;
    default:
      // TCP under an HTTP route, MCP: not served.
      return undefined;
  }
}

/** Resolves a backendRef to an XBackend; `routeProtocol` is how the route speaks (ClusterIR['protocol']). */
export function resolveXBackend(
  inputs: Inputs,
  route: KubeObject,
  ref: BackendRef,
  field: string,
  routeProtocol: ClusterIR['protocol'],
): { cluster?: ClusterIR; problem?: Problem; xbackend?: string } {
  const routeNs = route.metadata.namespace ?? '';
  const ns = ref.namespace ?? routeNs;
  // The CRD's rule on BackendObjectReference ("Must not have port for Backend reference"): the
  // XBackend's spec.port says where to connect. Objects stored before the rule still reach us.
  if (ref.port !== undefined)
    return {
      problem: {
        reason: 'UnsupportedValue',
        message: `${field}.port must not be set for an XBackend: its spec.port says where to connect`,
      },
    };
  // GEP-4894: "Backends MUST live in the same namespace as any route (or other parent resource) that
  // references them." A ReferenceGrant does not change that.
  if (ns !== routeNs)
    return {
      problem: {
        reason: 'RefNotPermitted',
        message: `${field}: an XBackend must be in the namespace of the route that references it (${routeNs}), not ${ns}`,
      },
    };
  const xb = inputs.get<XBackend>(XBACKEND_KIND, ns, ref.name);
  if (!xb) return { problem: { reason: 'BackendNotFound', message: `${field}: XBackend ${ns}/${ref.name} not found` } };
  const spec = xb.spec ?? ({} as Partial<XBackend['spec']>);
  const key = `${ns}/${ref.name}`;
  const what = `${field}: XBackend ${ns}/${ref.name}`;
  const port = spec.port?.number;
  if (!port)
    return { xbackend: key, problem: { reason: 'UnsupportedValue', message: `${what} has no spec.port.number` } };
  const protocol = clusterProtocol(spec.protocol, routeProtocol);
  if (!protocol)
    return {
      xbackend: key,
      problem: {
        reason: 'UnsupportedProtocol',
        message: `${what}: protocol ${spec.protocol} is not supported for a ${routeProtocol} route here`,
      },
    };
  const tlsMode = spec.tls?.mode ?? 'None';
  let tls: ClusterIR['tls'];
  if (tlsMode === 'ServerOnly') {
    const t = serverOnlyTLS(inputs, ns, spec.tls?.validation, `${what}: spec.tls.validation`);
    if ('problem' in t) return { xbackend: key, problem: t.problem };
    tls = { ...t.tls, policy: `${XBACKEND_KIND}/${key}` };
  } else if (tlsMode === 'ClientAndServer') {
    const t = serverOnlyTLS(inputs, ns, spec.tls?.validation, `${what}: spec.tls.validation`);
    if ('problem' in t) return { xbackend: key, problem: t.problem };
    const c = clientCertificate(inputs, ns, spec.tls?.clientCertificateRef, `${what}: spec.tls.clientCertificateRef`);
    if ('problem' in c) return { xbackend: key, problem: c.problem };
    tls = { ...t.tls, clientCertificate: c.certificate, policy: `${XBACKEND_KIND}/${key}` };
  } else if (tlsMode !== 'None')
    return {
      xbackend: key,
      problem: { reason: 'UnsupportedValue', message: `${what}: spec.tls.mode ${tlsMode} is not supported` },
    };
  if (spec.type === 'EndpointSelector')
    return endpointSelectorCluster(key, what, ns, ref.name, spec, port, protocol, tls);
  if (spec.sessionPersistence)
    // The CRD's rule ("sessionPersistence can only be set when type is EndpointSelector"), kept for objects
    // stored before it: one DNS name has no hosts of ours to stick to.
    return {
      xbackend: key,
      problem: {
        reason: 'UnsupportedValue',
        message: `${what}: spec.sessionPersistence can only be set when spec.type is EndpointSelector`,
      },
    };
  if (spec.type !== 'ExternalHostname' || !spec.externalHostname?.hostname)
    return {
      xbackend: key,
      problem: { reason: 'UnsupportedValue', message: `${what}: spec.type ${spec.type} is not supported` },
    };
  const hostname = spec.externalHostname.hostname;
  // The CRD's rule (PreciseHostname, "hostname must not be an IP address or end with .cluster.local"),
  // kept for objects stored before it.
  if (hostname.endsWith('.cluster.local') || /^[0-9.]+$/.test(hostname) || hostname.includes(':'))
    return {
      xbackend: key,
      problem: {
        reason: 'UnsupportedValue',
        message: `${what}: spec.externalHostname.hostname ${hostname} must be a DNS name outside the cluster`,
      },
    };
  // GEP-4894: "implementations implementing `Backend` MUST add either TLS or JWT validation on sensitive
  // localhost endpoints to prevent confused deputy attacks". The proxy's own are on loopback (its admin:
  // /config_dump, /quitquitquit; the drain helper, which trusts loopback) and check neither: a name that
  // resolves to 127.0.0.1 would reach them. So their ports, and the names that are loopback by definition
  // (RFC 6761 localhost), are refused.
  const local = hostname === 'localhost' || hostname.endsWith('.localhost');
  if (local || PROXY_LOCAL_PORTS.has(port))
    return {
      xbackend: key,
      problem: {
        reason: 'UnsupportedValue',
        message: local
          ? `${what}: spec.externalHostname.hostname ${hostname} is the proxy itself`
          : `${what}: spec.port.number ${port} is one the proxy serves itself on loopback`,
      },
    };
  return {
    xbackend: key,
    cluster: {
      name: xbackendClusterName(ns, ref.name, protocol),
      service: { namespace: ns, name: ref.name, port },
      protocol,
      external: { hostname, port },
      ...(tls ? { tls } : {}),
    },
  };
}

/**
 * EndpointSelector: an EDS cluster whose endpoints are the Pods `matchLabels` selects in the XBackend's
 * namespace (the endpoint stage's), at spec.port. TLS and protocol as for ExternalHostname.
 */
function endpointSelectorCluster(
  key: string,
  what: string,
  ns: string,
  name: string,
  spec: Partial<XBackend['spec']>,
  port: number,
  protocol: ClusterIR['protocol'],
  tls: ClusterIR['tls'],
): { cluster?: ClusterIR; problem?: Problem; xbackend: string } {
  const matchLabels = spec.endpointSelector?.matchLabels;
  // The CRD requires matchLabels with at least one pair (minProperties 1): none would select every Pod.
  if (!matchLabels || typeof matchLabels !== 'object' || Object.keys(matchLabels).length === 0)
    return {
      xbackend: key,
      problem: { reason: 'UnsupportedValue', message: `${what}: spec.endpointSelector.matchLabels must name a label` },
    };
  let session: ClusterIR['sessionPersistence'];
  if (spec.sessionPersistence) {
    // A TCP or TLS route has no requests to carry a cookie or header in.
    if (protocol === 'tcp')
      return {
        xbackend: key,
        problem: {
          reason: 'UnsupportedValue',
          message: `${what}: spec.sessionPersistence is not supported under a route of bytes (TCP, TLS)`,
        },
      };
    const s = sessionPersistenceOf(spec.sessionPersistence, ns, name, what);
    if ('problem' in s) return { xbackend: key, problem: s.problem };
    session = s.session;
  }
  return {
    xbackend: key,
    cluster: {
      name: xbackendClusterName(ns, name, protocol),
      service: { namespace: ns, name, port },
      protocol,
      endpointSelector: { matchLabels: { ...matchLabels } },
      ...(tls ? { tls } : {}),
      ...(session ? { sessionPersistence: session } : {}),
    },
  };
}

type Validation = NonNullable<NonNullable<XBackend['spec']['tls']>['validation']>;

/**
 * TLS mode ServerOnly ("enables TLS with server certificate verification"): SNI and the names the
 * certificate must carry from `validation` as BackendTLSPolicy's (the same type), its CA from the
 * same references or the system bundle. No client certificate is presented: not even the Gateway's
 * (that is ClientAndServer's). Stricter than a BackendTLSPolicy: any CA reference that does not
 * resolve refuses the backend, as TLS it cannot verify would be.
 */
function serverOnlyTLS(
  inputs: Inputs,
  namespace: string,
  v: Validation | undefined,
  field: string,
): { tls: Omit<NonNullable<ClusterIR['tls']>, 'policy'> } | { problem: Problem } {
  if (!v?.hostname) return { problem: { reason: 'UnsupportedValue', message: `${field}.hostname must be set` } };
  const tls: Omit<NonNullable<ClusterIR['tls']>, 'policy'> = {
    sni: v.hostname,
    subjectAltNames: subjectAltNames(v.subjectAltNames),
    clientCertificate: false,
  };
  if (v.wellKnownCACertificates) {
    if (v.wellKnownCACertificates !== 'System')
      return {
        problem: {
          reason: 'UnsupportedValue',
          message: `${field}.wellKnownCACertificates: ${v.wellKnownCACertificates} is not supported, use System`,
        },
      };
    return { tls: { ...tls, wellKnownCA: 'System' } };
  }
  const refs = v.caCertificateRefs ?? [];
  if (refs.length === 0)
    return {
      problem: { reason: 'UnsupportedValue', message: `${field}: caCertificateRefs or wellKnownCACertificates` },
    };
  const bundles: string[] = [];
  for (const [i, ref] of refs.entries()) {
    const r = caBundleOf(inputs, namespace, ref);
    if ('problem' in r)
      return { problem: { reason: r.reason, message: `${field}.caCertificateRefs[${i}]: ${r.problem}` } };
    bundles.push(r.pem);
  }
  return { tls: { ...tls, caBundle: bundles.join('\n') } };
}

/**
 * TLS mode ClientAndServer ("enables mutual TLS"): the XBackend's own clientCertificateRef, a
 * kubernetes.io/tls Secret checked as a listener's certificate is; GEP-4894 gives each backend its
 * own ("Current Gateway API patterns only support one client certificate per Gateway"). Only in the
 * XBackend's namespace: a ReferenceGrant names its referrer by group, and none grants to an XBackend yet.
 */
function clientCertificate(
  inputs: Inputs,
  namespace: string,
  ref: { group?: string; kind?: string; name: string; namespace?: string } | undefined,
  field: string,
): { certificate: { secret: string; sha256: string } } | { problem: Problem } {
  if (!ref) return { problem: { reason: 'UnsupportedValue', message: `${field} must be set` } };
  if (ref.namespace !== undefined && ref.namespace !== namespace)
    return {
      problem: {
        reason: 'RefNotPermitted',
        message: `${field}: the Secret must be in the XBackend's namespace ${namespace}, not ${ref.namespace}`,
      },
    };
  const { namespace: _, ...local } = ref;
  const r = checkSecretRef(inputs, { kind: XBACKEND_KIND, namespace }, local, field, {
    invalid: 'InvalidClientCertificateRef',
  });
  if (!r.certificate)
    return { problem: r.problem ?? { reason: 'InvalidClientCertificateRef', message: `${field}: not usable` } };
  return { certificate: { secret: r.certificate.secret, sha256: r.certificate.sha256 } };
}
