// Pre-routing listener filters (Gateway API v1.7 experimental, GEP-5224, GatewayListenerFilters): the
// filters.requests of a Gateway or ListenerSet listener, resolved. ExternalAuth (HTTP and gRPC) is run;
// an ExtensionRef is not yet, and a listener naming one is refused, never served without it: "If a
// filter is unsupported by the implementation, the listener MUST be rejected via status
// (`Accepted=False`, `Reason=UnsupportedValue`) rather than the filter silently omitted" (GEP-5224,
// Filter Ordering). References: "`ResolvedRefs=False`, `Reason=InvalidListenerFilterRef`. Used when an
// `ExternalAuth.backendRef` or an `ExtensionRef` in `filters.requests` refers to a resource that does
// not exist, has an unsupported group/kind, or is otherwise unresolvable"; "A cross-namespace
// `ExternalAuth.backendRef` without a matching ReferenceGrant MUST have `ResolvedRefs=False`,
// `Reason=RefNotPermitted`" (Conformance 6). A listener whose filter reference does not resolve is not
// programmed: serving it without the filter would serve what its author meant to guard.
import type { BackendTLSPolicy, ClusterIR, ExternalAuthIR, Gateway, Listener, ListenerSet } from '@turnpike/api';
import type { Inputs } from '../incremental/inputs.js';
import { resolveBackend } from '../routes/backends.js';
import type { Problem } from '../status/conditions.js';

/** A resolved pre-routing filter: its IR, and the cluster of the service it calls. */
export interface ListenerFilterModel {
  ir: ExternalAuthIR;
  cluster: ClusterIR;
}

export interface ListenerFiltersResult {
  notAccepted?: Problem;
  refsProblem?: Problem;
  filters?: ListenerFilterModel[];
}

/** The CRD's pattern for HTTPAuthConfig.path, checked again here (a ListenerSet may come from elsewhere). */
const AUTH_PATH = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$/;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function resolveListenerFilters(
  inputs: Inputs,
  owner: Gateway | ListenerSet,
  ownerKind: 'Gateway' | 'ListenerSet',
  l: Listener,
  field: string,
): ListenerFiltersResult {
  const requests = l.filters?.requests ?? [];
  if (!requests.length) return {};
  const at = `${field}.filters.requests`;
  // "Filters is only valid when Protocol is `HTTP` or `HTTPS`" (Listener.filters); the Gateway CRD
  // refuses it, the ListenerSet CRD has no such rule.
  if (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS')
    return {
      notAccepted: {
        reason: 'InvalidListenerFilter',
        message: `${at}: filters may only be set when protocol is HTTP or HTTPS, not ${l.protocol}`,
      },
    };
  const unsupported = requests.findIndex((f) => f.type !== 'ExternalAuth');
  if (unsupported >= 0)
    return {
      notAccepted: {
        reason: 'UnsupportedValue',
        message:
          `${at}[${unsupported}]: pre-routing ${requests[unsupported]!.type} filters are not supported; ` +
          `the listener is not served rather than served without it`,
      },
    };
  const filters: ListenerFilterModel[] = [];
  let refsProblem: Problem | undefined;
  for (const [i, f] of requests.entries()) {
    const here = `${at}[${i}].externalAuth`;
    const auth = f.externalAuth;
    if (!auth)
      return {
        notAccepted: { reason: 'InvalidListenerFilter', message: `${here} must be set for an ExternalAuth filter` },
      };
    if (auth.protocol !== 'HTTP' && auth.protocol !== 'GRPC')
      return {
        notAccepted: { reason: 'InvalidListenerFilter', message: `${here}.protocol must be HTTP or GRPC` },
      };
    const path = auth.http?.path;
    if (path && !AUTH_PATH.test(path))
      return {
        notAccepted: {
          reason: 'InvalidListenerFilter',
          message: `${here}.http.path: ${JSON.stringify(path)} is not a path`,
        },
      };
    const headers = [
      ...(auth.protocol === 'HTTP' ? (auth.http?.allowedHeaders ?? []) : (auth.grpc?.allowedHeaders ?? [])),
      ...(auth.protocol === 'HTTP' ? (auth.http?.allowedResponseHeaders ?? []) : []),
    ];
    const badHeader = headers.find((h) => !HEADER_NAME.test(h));
    if (badHeader !== undefined)
      return {
        notAccepted: {
          reason: 'InvalidListenerFilter',
          message: `${here}: ${JSON.stringify(badHeader)} is not a header name`,
        },
      };
    const maxSize = auth.forwardBody?.maxSize ?? 0;
    if (!Number.isInteger(maxSize) || maxSize < 0 || maxSize > 0xffffffff)
      return {
        notAccepted: { reason: 'InvalidListenerFilter', message: `${here}.forwardBody.maxSize must be 0 to 2^32-1` },
      };
    // The auth service is reached as a route's backend would be, but without BackendTLSPolicy (below).
    const r = resolveBackend(
      { inputs, backendTLS: () => undefined },
      owner,
      ownerKind,
      auth.backendRef,
      `${here}.backendRef`,
      auth.protocol === 'GRPC' ? 'h2' : 'http',
    );
    if (!r.backend) {
      const p = r.problem!;
      refsProblem ??= {
        reason: p.reason === 'RefNotPermitted' ? 'RefNotPermitted' : 'InvalidListenerFilterRef',
        message: p.message,
      };
      continue;
    }
    // A BackendTLSPolicy on the auth Service is not applied to the check yet: rather than call it in
    // plain text, the listener is not served (its TLS would fail every check: fail closed, but silently).
    const svc = r.backend.cluster.service;
    const tls = inputs
      .list<BackendTLSPolicy>('BackendTLSPolicy', svc.namespace)
      .find((p) =>
        (p.spec?.targetRefs ?? []).some((t) => (t.group ?? '') === '' && t.kind === 'Service' && t.name === svc.name),
      );
    if (tls) {
      refsProblem ??= {
        reason: 'InvalidListenerFilterRef',
        message:
          `${here}.backendRef: Service ${svc.namespace}/${svc.name} is targeted by BackendTLSPolicy ` +
          `${tls.metadata.name}, which listener filters do not apply yet; the listener is not served rather ` +
          `than check requests in plain text`,
      };
      continue;
    }
    const ir: ExternalAuthIR = { type: 'ExternalAuth', protocol: auth.protocol, cluster: r.backend.cluster.name };
    if (auth.protocol === 'HTTP') {
      if (path) ir.pathPrefix = path.startsWith('/') ? path : `/${path}`;
      if (auth.http?.allowedHeaders?.length) ir.allowedHeaders = auth.http.allowedHeaders.map((h) => h.toLowerCase());
      if (auth.http?.allowedResponseHeaders?.length)
        ir.allowedResponseHeaders = auth.http.allowedResponseHeaders.map((h) => h.toLowerCase());
    } else if (auth.grpc?.allowedHeaders?.length)
      ir.allowedHeaders = auth.grpc.allowedHeaders.map((h) => h.toLowerCase());
    if (maxSize > 0) ir.forwardBodyMaxSize = maxSize;
    filters.push({ ir, cluster: r.backend.cluster });
  }
  return refsProblem ? { refsProblem } : { filters };
}
