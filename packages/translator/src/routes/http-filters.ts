// HTTPRoute / GRPCRoute filters: validated (an invalid value makes the rule invalid: the route
// reports UnsupportedValue and the rule answers 500) and compiled into the IR.
import {
  corsOriginPattern,
  ENVOY_RE2_MAX_PROGRAM_SIZE,
  GATEWAY_GROUP,
  re2ProgramSize,
  TURNPIKE_GROUP,
  type HTTPRouteFilter,
  type HeaderModifier,
  type KubeObject,
} from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import type { TranslationContext } from '../context.js';
import { validateHostname } from './hostnames.js';
import type { ClusterIR, HTTPFiltersIR, HeaderChangesIR, RedirectIR } from '@turnpike/api';
import { resolveBackend } from './backends.js';
import { resolvePluginRef } from '../plugins/plugins.js';
import { isPluginUse } from '../plugins/plugin-uses.js';
import { fitted } from '../compact-values.js';

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CONTROL_CHARACTER = /[\x00-\x1f\x7f]/;
/** RFC 9110 field-value: visible characters, space and tab, and obs-text; never CR, LF or NUL. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Each filter type and the one field that configures it (the CRD forbids the others). */
const FILTER_FIELDS: Record<string, string> = {
  RequestHeaderModifier: 'requestHeaderModifier',
  ResponseHeaderModifier: 'responseHeaderModifier',
  RequestMirror: 'requestMirror',
  RequestRedirect: 'requestRedirect',
  URLRewrite: 'urlRewrite',
  ExtensionRef: 'extensionRef',
  CORS: 'cors',
  ExternalAuth: 'externalAuth',
};
/** Headers the proxy owns: changing them would break routing or framing. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);

/** The route a filter list belongs to: its references resolve from the route's namespace. */
interface FilterOwner {
  ctx: TranslationContext;
  route: KubeObject;
  routeKind: string;
}

export interface CompiledFilters {
  filters: HTTPFiltersIR;
  redirect?: RedirectIR;
  /** Makes the rule invalid (Accepted/PartiallyInvalid with UnsupportedValue). */
  invalid?: Problem;
  /** A reference that does not resolve (ResolvedRefs=False); the rule answers 500. */
  unresolved?: Problem;
  /** A mirror whose backend does not resolve (ResolvedRefs=False): the mirror is left out, the rule serves. */
  droppedMirror?: Problem;
  clusters: ClusterIR[];
  /** PluginInstallations (`namespace/name`) the ExtensionRef filters use, resolved or not (isPluginUse). */
  plugins?: string[];
}

function headerNameProblem(name: string, field: string): Problem | undefined {
  if (!name || !HEADER_NAME.test(name))
    return { reason: 'UnsupportedValue', message: `${field}: "${name}" is not a valid HTTP header name` };
  if (RESERVED_HEADERS.has(name.toLowerCase()))
    return { reason: 'UnsupportedValue', message: `${field}: header "${name}" cannot be modified` };
  return undefined;
}

function headerValueProblem(value: unknown, field: string): Problem | undefined {
  if (value === undefined || value === '') return { reason: 'UnsupportedValue', message: `${field} must not be empty` };
  if (typeof value === 'string' && HEADER_VALUE.test(value)) return undefined;
  return {
    reason: 'UnsupportedValue',
    message:
      `${field}: ${JSON.stringify(value)} holds characters not allowed in an HTTP header ` +
      `value (control characters such as CR, LF or NUL)`,
  };
}

function headerChanges(
  modifier: HeaderModifier | undefined,
  field: string,
): { changes?: HeaderChangesIR; problem?: Problem } {
  if (!modifier)
    return { problem: { reason: 'UnsupportedValue', message: `${field} must be set for this filter type` } };
  const changes: HeaderChangesIR = { set: [], add: [], remove: [] };
  for (const operation of ['set', 'add'] as const) {
    const seen = new Set<string>();
    for (const [index, header] of (modifier[operation] ?? []).entries()) {
      const headerField = `${field}.${operation}[${index}]`;
      const problem =
        headerNameProblem(header.name, `${headerField}.name`) ??
        headerValueProblem(header.value, `${headerField}.value`);
      if (problem) return { problem };
      // Adding a header twice gives it two values; setting it twice keeps the last value.
      const key = header.name.toLowerCase();
      if (operation === 'set' && seen.has(key))
        changes.set = changes.set.filter((earlier) => earlier.name.toLowerCase() !== key);
      seen.add(key);
      changes[operation].push({ name: header.name, value: header.value });
    }
  }
  for (const [index, name] of (modifier.remove ?? []).entries()) {
    const problem = headerNameProblem(name, `${field}.remove[${index}]`);
    if (problem) return { problem };
    if (!changes.remove.includes(name)) changes.remove.push(name);
  }
  changes.set = fitted(changes.set);
  changes.add = fitted(changes.add);
  changes.remove = fitted(changes.remove);
  return { changes };
}

function mergeHeaders(earlier: HeaderChangesIR | undefined, later: HeaderChangesIR): HeaderChangesIR {
  if (!earlier) return later;
  return {
    set: [...earlier.set, ...later.set],
    add: [...earlier.add, ...later.add],
    remove: [...earlier.remove, ...later.remove],
  };
}

/** Each path modifier type and the one field that holds its value. */
const PATH_VALUE_FIELDS = { ReplaceFullPath: 'replaceFullPath', ReplacePrefixMatch: 'replacePrefixMatch' } as const;
type PathModifierType = keyof typeof PATH_VALUE_FIELDS;

function unsupportedPathModifier(type: string, field: string): Problem {
  return {
    reason: 'UnsupportedValue',
    message: `${field}.type: "${type}" is not supported (ReplaceFullPath, ReplacePrefixMatch), or its value is missing`,
  };
}

function pathModifier(
  modifier: { type: string; replaceFullPath?: string; replacePrefixMatch?: string } | undefined,
  field: string,
): { value?: { type: PathModifierType; value: string }; problem?: Problem } {
  if (!modifier) return {};
  const valueField = PATH_VALUE_FIELDS[modifier.type as PathModifierType] as string | undefined;
  if (valueField === undefined) {
    return { problem: unsupportedPathModifier(modifier.type, field) };
  }
  const type = modifier.type as PathModifierType;
  // A path modifier sets the one value its type names: the other one as well is a contradiction.
  const otherField = Object.values(PATH_VALUE_FIELDS).find((name) => name !== valueField)!;
  if (modifier[otherField] !== undefined) {
    return {
      problem: { reason: 'UnsupportedValue', message: `${field}.${otherField} must not be set when type is ${type}` },
    };
  }
  const value = modifier[PATH_VALUE_FIELDS[type]];
  if (typeof value !== 'string') {
    return { problem: unsupportedPathModifier(type, field) };
  }
  if (CONTROL_CHARACTER.test(value)) {
    return {
      problem: {
        reason: 'UnsupportedValue',
        message: `${field}.${valueField}: ${JSON.stringify(value)} holds control characters, which a path cannot`,
      },
    };
  }
  return { value: { type, value } };
}

/** A redirect's or rewrite's hostname: a valid, precise hostname (wildcards make no Host header). */
function hostnameProblem(hostname: string | undefined, field: string): Problem | undefined {
  if (hostname === undefined) return undefined;
  const invalid = validateHostname(hostname);
  if (!invalid && !hostname.startsWith('*')) return undefined;
  return { reason: 'UnsupportedValue', message: `${field}: ${invalid ?? 'wildcards are not allowed'}` };
}

function compileRedirect(filter: HTTPRouteFilter, field: string, out: CompiledFilters): Problem | undefined {
  const redirect = filter.requestRedirect;
  if (!redirect) return { reason: 'UnsupportedValue', message: `${field}.requestRedirect must be set` };
  if (redirect.scheme !== undefined && redirect.scheme !== 'http' && redirect.scheme !== 'https') {
    return {
      reason: 'UnsupportedValue',
      message: `${field}.requestRedirect.scheme: "${redirect.scheme}" is not supported (http, https)`,
    };
  }
  const statusCode = redirect.statusCode ?? 302;
  if (!REDIRECT_CODES.has(statusCode)) {
    return {
      reason: 'UnsupportedValue',
      message: `${field}.requestRedirect.statusCode: ${statusCode} is not a redirect status (301, 302, 303, 307, 308)`,
    };
  }
  const badHostname = hostnameProblem(redirect.hostname, `${field}.requestRedirect.hostname`);
  if (badHostname) return badHostname;
  const path = pathModifier(redirect.path, `${field}.requestRedirect.path`);
  if (path.problem) return path.problem;
  const compiled: RedirectIR = { statusCode };
  if (redirect.scheme) compiled.scheme = redirect.scheme;
  if (redirect.hostname) compiled.hostname = redirect.hostname;
  if (redirect.port !== undefined) compiled.port = redirect.port;
  if (path.value) compiled.path = path.value;
  out.redirect = compiled;
  return undefined;
}

function compileRewrite(filter: HTTPRouteFilter, field: string, out: CompiledFilters): Problem | undefined {
  const rewrite = filter.urlRewrite;
  if (!rewrite) return { reason: 'UnsupportedValue', message: `${field}.urlRewrite must be set` };
  const badHostname = hostnameProblem(rewrite.hostname, `${field}.urlRewrite.hostname`);
  if (badHostname) return badHostname;
  const path = pathModifier(rewrite.path, `${field}.urlRewrite.path`);
  if (path.problem) return path.problem;
  out.filters.rewrite = {};
  if (rewrite.hostname) out.filters.rewrite.hostname = rewrite.hostname;
  if (path.value) out.filters.rewrite.path = path.value;
  return undefined;
}

/**
 * A mirror's backend must resolve like any backendRef. One that does not is dropped, and the rule
 * serves without it (HTTPRequestMirrorFilter: "If the referent cannot be found, this BackendRef is
 * invalid and must be dropped from the Gateway ... ResolvedRefs ... False"). A GRPCRoute's mirror
 * copies a gRPC request, which only HTTP/2 carries: it goes to the same HTTP/2 cluster as the
 * route's backends, never to an HTTP/1.1 one a gRPC server cannot answer.
 */
function compileMirror(
  owner: FilterOwner,
  filter: HTTPRouteFilter,
  field: string,
  out: CompiledFilters,
): Problem | undefined {
  const mirror = filter.requestMirror;
  if (!mirror?.backendRef)
    return { reason: 'UnsupportedValue', message: `${field}.requestMirror.backendRef must be set` };
  const resolved = resolveBackend(
    owner.ctx,
    owner.route,
    owner.routeKind,
    mirror.backendRef,
    `${field}.requestMirror.backendRef`,
    owner.routeKind === 'GRPCRoute' ? 'h2' : 'http',
  );
  if (resolved.problem) {
    out.droppedMirror ??= resolved.problem;
    return undefined;
  }
  const { cluster } = resolved.backend!;
  const fraction = mirror.fraction;
  const percent = mirror.percent ?? (fraction ? (100 * fraction.numerator) / (fraction.denominator ?? 100) : 100);
  (out.filters.mirrors ??= []).push({ cluster: cluster.name, percent });
  out.clusters.push(cluster);
  return undefined;
}

/**
 * An origin with a wildcard is served as an RE2 pattern (corsOriginPattern), which Envoy refuses, with the whole
 * route configuration of the port, beyond re2.max_program_size.error_level: the rule is refused instead.
 */
function wildcardOriginProblem(origin: string, field: string): Problem | undefined {
  if (origin === '*' || !origin.includes('*')) return undefined;
  const program = re2ProgramSize(corsOriginPattern(origin));
  if (program.size !== undefined && program.size <= ENVOY_RE2_MAX_PROGRAM_SIZE) return undefined;
  const size = program.size === undefined ? program.why : `an RE2 program of ${program.size} instructions`;
  return {
    reason: 'UnsupportedValue',
    message:
      `${field}: the wildcard origin "${origin}" becomes ${size}; ` +
      `Envoy accepts at most ${ENVOY_RE2_MAX_PROGRAM_SIZE} (re2.max_program_size.error_level)`,
  };
}

function compileCORS(filter: HTTPRouteFilter, field: string, out: CompiledFilters): Problem | undefined {
  const cors = filter.cors ?? {};
  const origins = cors.allowOrigins ?? [];
  for (const [j, origin] of origins.entries()) {
    const problem = wildcardOriginProblem(origin, `${field}.cors.allowOrigins[${j}]`);
    if (problem) return problem;
  }
  out.filters.cors = {
    allowOrigins: origins,
    allowMethods: cors.allowMethods ?? [],
    allowHeaders: cors.allowHeaders ?? [],
    exposeHeaders: cors.exposeHeaders ?? [],
    allowCredentials: cors.allowCredentials ?? false,
  };
  if (cors.maxAge !== undefined) out.filters.cors.maxAge = cors.maxAge;
  return undefined;
}

/** ExtensionRef names one of our PluginInstallations; anything else does not resolve. */
function compilePluginRef(owner: FilterOwner, filter: HTTPRouteFilter, field: string, out: CompiledFilters): undefined {
  const ref = filter.extensionRef;
  if (!ref || ref.group !== TURNPIKE_GROUP || ref.kind !== 'PluginInstallation') {
    out.unresolved ??= {
      reason: 'InvalidKind',
      message:
        `${field}.extensionRef: ${ref ? `${ref.group}/${ref.kind}` : 'missing'} is not supported, use ` +
        `${TURNPIKE_GROUP}/PluginInstallation`,
    };
    return undefined;
  }
  const resolved = resolvePluginRef(
    owner.ctx.inputs,
    { kind: owner.routeKind, group: GATEWAY_GROUP, namespace: owner.route.metadata.namespace ?? '' },
    { name: ref.name },
    `${field}.extensionRef`,
  );
  // A use before the plugin is fetched: only a used plugin is fetched.
  if (isPluginUse(resolved.problem)) (out.plugins ??= []).push(`${owner.route.metadata.namespace ?? ''}/${ref.name}`);
  if (resolved.problem) {
    out.unresolved ??= resolved.problem;
    return undefined;
  }
  const { plugin, content } = resolved.resolved!;
  (out.filters.plugins ??= []).push({
    name: `${plugin.metadata.namespace}/${plugin.metadata.name}`,
    type: plugin.spec.type,
    sha256: content.sha256!,
    ...(content.storage?.url ? { url: content.storage.url } : {}),
  });
  return undefined;
}

/** A filter list's structural rules: the one field its type names, and no repeated redirect or rewrite. */
function filterListProblem(filter: HTTPRouteFilter, field: string, seenTypes: Set<string>): Problem | undefined {
  // Header modifiers may repeat (their changes merge); redirect and rewrite may not.
  if (
    (filter.type === 'RequestRedirect' || filter.type === 'URLRewrite' || filter.type === 'CORS') &&
    seenTypes.has(filter.type)
  )
    return {
      reason: 'UnsupportedValue',
      message: `${field}: filter ${filter.type} may appear only once in a filter list`,
    };
  seenTypes.add(filter.type);
  const stray = Object.values(FILTER_FIELDS).find(
    (name) => name !== FILTER_FIELDS[filter.type] && (filter as unknown as Record<string, unknown>)[name] !== undefined,
  );
  if (stray)
    return { reason: 'UnsupportedValue', message: `${field}.${stray} must not be set when type is ${filter.type}` };
  return undefined;
}

export function compileFilters(
  ctx: TranslationContext,
  route: KubeObject,
  routeKind: string,
  filters: readonly HTTPRouteFilter[] | undefined,
  field: string,
): CompiledFilters {
  const out: CompiledFilters = { filters: {}, clusters: [] };
  const seenTypes = new Set<string>();
  for (const [index, filter] of (filters ?? []).entries()) {
    const filterField = `${field}[${index}]`;
    const problem =
      filterListProblem(filter, filterField, seenTypes) ??
      compileFilter({ ctx, route, routeKind }, filter, filterField, out);
    // The first invalid filter names the rule's problem.
    if (problem) out.invalid ??= problem;
  }
  if (out.redirect && out.filters.rewrite)
    out.invalid ??= {
      reason: 'UnsupportedValue',
      message: `${field}: RequestRedirect and URLRewrite cannot be combined`,
    };
  return out;
}

function compileFilter(
  owner: FilterOwner,
  filter: HTTPRouteFilter,
  field: string,
  out: CompiledFilters,
): Problem | undefined {
  switch (filter.type) {
    case 'RequestHeaderModifier': {
      const compiled = headerChanges(filter.requestHeaderModifier, `${field}.requestHeaderModifier`);
      if (compiled.problem) return compiled.problem;
      out.filters.requestHeaders = mergeHeaders(out.filters.requestHeaders, compiled.changes!);
      return undefined;
    }
    case 'ResponseHeaderModifier': {
      const compiled = headerChanges(filter.responseHeaderModifier, `${field}.responseHeaderModifier`);
      if (compiled.problem) return compiled.problem;
      out.filters.responseHeaders = mergeHeaders(out.filters.responseHeaders, compiled.changes!);
      return undefined;
    }
    case 'RequestRedirect':
      return compileRedirect(filter, field, out);
    case 'URLRewrite':
      return compileRewrite(filter, field, out);
    case 'RequestMirror':
      return compileMirror(owner, filter, field, out);
    case 'CORS':
      return compileCORS(filter, field, out);
    case 'ExtensionRef':
      return compilePluginRef(owner, filter, field, out);
    default:
      return { reason: 'UnsupportedValue', message: `${field}.type: filter type "${filter.type}" is not supported` };
  }
}
