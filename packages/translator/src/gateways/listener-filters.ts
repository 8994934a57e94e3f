// Pre-routing listener filters (Gateway API v1.7 experimental, GEP-5224, GatewayListenerFilters): the
// filters.requests of a Gateway or ListenerSet listener, resolved. An ExternalAuth (HTTP and gRPC) is run
// as ext_authz; an ExtensionRef names one of our PluginInstallations (a LocalObjectReference: in the
// listener owner's namespace) and is run as that plugin's Lua or Wasm filter. Another filter type is
// refused: "If a filter is unsupported by the implementation, the listener MUST be rejected via status
// (`Accepted=False`, `Reason=UnsupportedValue`) rather than the filter silently omitted" (GEP-5224,
// Filter Ordering). References: "`ResolvedRefs=False`, `Reason=InvalidListenerFilterRef`. Used when an
// `ExternalAuth.backendRef` or an `ExtensionRef` in `filters.requests` refers to a resource that does
// not exist, has an unsupported group/kind, or is otherwise unresolvable"; "A cross-namespace
// `ExternalAuth.backendRef` without a matching ReferenceGrant MUST have `ResolvedRefs=False`,
// `Reason=RefNotPermitted`" (Conformance 6). A listener whose filter reference does not resolve is not
// programmed: serving it without the filter would serve what its author meant to guard. A plugin not
// fetched yet (or whose current spec failed to fetch) is "otherwise unresolvable": the listener waits
// for it, where a route's rule answers 500; both fail closed.
import {
  GATEWAY_GROUP,
  TURNPIKE_GROUP,
  type ClusterIR,
  type ExternalAuthIR,
  type Gateway,
  type Listener,
  type ListenerFilter,
  type ListenerSet,
  type PluginFilterIR,
} from '@turnpike/api';
import type { Inputs } from '../incremental/inputs.js';
import type { GatewayContext } from '../context.js';
import { resolveBackend } from '../routes/backends.js';
import { resolvePluginRef } from '../plugins/plugins.js';
import type { Problem } from '../status/conditions.js';

/** A resolved pre-routing filter: an ExternalAuth and the cluster of the service it calls, or a plugin. */
export type ListenerFilterModel = { ir: ExternalAuthIR; cluster: ClusterIR } | { ir: PluginFilterIR; cluster?: never };

export interface ListenerFiltersResult {
  notAccepted?: Problem;
  refsProblem?: Problem;
  filters?: ListenerFilterModel[];
  /**
   * The PluginInstallations (`namespace/name`) the listener's ExtensionRef filters name, fetched or not:
   * a use of each, which it must be fetched for.
   */
  pluginUses?: string[];
  /** The BackendTLSPolicies the ExternalAuth Services fall under (valid or not), and those detached from them. */
  tlsPolicies?: { attached: string[]; detached: string[] };
}

/** What a resolved filter does, as `explain` says it. */
export function listenerFilterText(f: ListenerFilterModel): string {
  if (f.ir.type !== 'ExternalAuth') return `plugin ${f.ir.plugin.name} (${f.ir.plugin.type})`;
  const policy = f.cluster!.tls?.policy;
  const tls = policy ? ` over TLS (BackendTLSPolicy ${policy})` : '';
  return `ExternalAuth ${f.ir.protocol} to ${f.cluster!.name}${tls}`;
}

/** The CRD's pattern for HTTPAuthConfig.path, checked again here (a ListenerSet may come from elsewhere). */
const AUTH_PATH = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$/;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function resolveListenerFilters(
  ctx: GatewayContext,
  owner: Gateway | ListenerSet,
  ownerKind: 'Gateway' | 'ListenerSet',
  l: Listener,
  field: string,
): ListenerFiltersResult {
  const requests = l.filters?.requests ?? [];
  if (!requests.length) return {};
  const { inputs } = ctx;
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
  const unsupported = requests.findIndex((f) => f.type !== 'ExternalAuth' && f.type !== 'ExtensionRef');
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
  const pluginUses = new Set<string>();
  const attachedPolicies = new Set<string>();
  const detachedPolicies = new Set<string>();
  let refsProblem: Problem | undefined;
  for (const [i, f] of requests.entries()) {
    if (f.type === 'ExtensionRef') {
      const r = resolvePluginFilter(inputs, owner, ownerKind, f, `${at}[${i}]`);
      if (r.notAccepted) return { notAccepted: r.notAccepted };
      if (r.use) pluginUses.add(r.use);
      if (r.filter) filters.push(r.filter);
      else refsProblem ??= r.refsProblem;
      continue;
    }
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
    // The auth service is reached as a route's backend is: a BackendTLSPolicy on its Service (the port the
    // ref names) makes the check TLS, the Gateway being among the policy's ancestors; an invalid policy
    // leaves the listener unserved (InvalidListenerFilterRef), never checking in plain text instead.
    const r = resolveBackend(
      ctx,
      owner,
      ownerKind,
      auth.backendRef,
      `${here}.backendRef`,
      auth.protocol === 'GRPC' ? 'h2' : 'http',
    );
    // Valid or not, the policy is the Gateway's too: an invalid one says why on the Gateway's ancestor entry.
    if (r.policy) attachedPolicies.add(r.policy);
    for (const p of r.detachedPolicies ?? []) detachedPolicies.add(p);
    if (!r.backend) {
      const p = r.problem!;
      refsProblem ??= {
        reason: p.reason === 'RefNotPermitted' ? 'RefNotPermitted' : 'InvalidListenerFilterRef',
        message: p.message,
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
  const uses = pluginUses.size ? { pluginUses: [...pluginUses].sort() } : {};
  const tls =
    attachedPolicies.size || detachedPolicies.size
      ? { tlsPolicies: { attached: [...attachedPolicies].sort(), detached: [...detachedPolicies].sort() } }
      : {};
  return refsProblem ? { refsProblem, ...uses, ...tls } : { filters, ...uses, ...tls };
}

/**
 * An ExtensionRef filter: our PluginInstallation in the owner's namespace (extensionRef is a
 * LocalObjectReference), run with the content it serves; a ref to any other kind does not resolve.
 */
function resolvePluginFilter(
  inputs: Inputs,
  owner: Gateway | ListenerSet,
  ownerKind: 'Gateway' | 'ListenerSet',
  f: ListenerFilter,
  field: string,
): { notAccepted?: Problem; refsProblem?: Problem; filter?: ListenerFilterModel; use?: string } {
  const ref = f.extensionRef;
  const here = `${field}.extensionRef`;
  if (!ref?.name)
    return {
      notAccepted: { reason: 'InvalidListenerFilter', message: `${here} must be set for an ExtensionRef filter` },
    };
  if (ref.group !== TURNPIKE_GROUP || ref.kind !== 'PluginInstallation')
    return {
      refsProblem: {
        reason: 'InvalidListenerFilterRef',
        message:
          `${here}: ${ref.group || '(core)'}/${ref.kind} is not a kind of filter this implementation runs; ` +
          `use ${TURNPIKE_GROUP}/PluginInstallation`,
      },
    };
  const namespace = owner.metadata.namespace ?? '';
  const resolved = resolvePluginRef(
    inputs,
    { kind: ownerKind, group: GATEWAY_GROUP, namespace },
    { name: ref.name },
    here,
  );
  // A reference the grants do not permit is no use (never the case for a local reference, kept for symmetry).
  const use = resolved.problem?.reason === 'RefNotPermitted' ? undefined : `${namespace}/${ref.name}`;
  const withUse = use ? { use } : {};
  if (resolved.problem) {
    const reason = resolved.problem.reason === 'RefNotPermitted' ? 'RefNotPermitted' : 'InvalidListenerFilterRef';
    const tail = resolved.problem.reason === 'PluginNotFetched' ? '; the listener is not served until it is' : '';
    return { refsProblem: { reason, message: `${resolved.problem.message}${tail}` }, ...withUse };
  }
  const { plugin, content } = resolved.resolved!;
  const ir: PluginFilterIR = {
    type: 'ExtensionRef',
    plugin: {
      name: `${plugin.metadata.namespace}/${plugin.metadata.name}`,
      type: plugin.spec.type,
      sha256: content.sha256!,
      ...(content.storage?.url ? { url: content.storage.url } : {}),
    },
  };
  return { filter: { ir }, ...withUse };
}
