// HTTPRoute / GRPCRoute filters: validated (an invalid value makes the rule invalid: the route
// reports UnsupportedValue and the rule answers 500) and compiled into the IR.
import {
  GATEWAY_GROUP,
  TURNPIKE_GROUP,
  type HTTPRouteFilter,
  type HeaderModifier,
  type KubeObject,
} from '@turnpike/api';
import type { Problem } from '../conditions.js';
import type { TranslationContext } from '../context.js';
import { validateHostname } from '../hostnames.js';
import type { ClusterIR, HTTPFiltersIR, HeaderChangesIR, RedirectIR } from '@turnpike/api';
import { resolveBackend } from './backends.js';
import { resolvePluginRef } from '../plugins.js';

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

export interface CompiledFilters {
  filters: HTTPFiltersIR;
  redirect?: RedirectIR;
  /** Makes the rule invalid (Accepted/PartiallyInvalid with UnsupportedValue). */
  invalid?: Problem;
  /** A reference that does not resolve (ResolvedRefs=False); the rule answers 500. */
  unresolved?: Problem;
  clusters: ClusterIR[];
}

function headerChanges(m: HeaderModifier | undefined, field: string): { changes?: HeaderChangesIR; problem?: Problem } {
  if (!m) return { problem: { reason: 'UnsupportedValue', message: `${field} must be set for this filter type` } };
  const changes: HeaderChangesIR = { set: [], add: [], remove: [] };
  const check = (name: string, f: string): Problem | undefined => {
    if (!name || !HEADER_NAME.test(name))
      return { reason: 'UnsupportedValue', message: `${f}: "${name}" is not a valid HTTP header name` };
    if (RESERVED_HEADERS.has(name.toLowerCase()))
      return { reason: 'UnsupportedValue', message: `${f}: header "${name}" cannot be modified` };
    return undefined;
  };
  for (const op of ['set', 'add'] as const) {
    const seen = new Set<string>();
    for (const [i, h] of (m[op] ?? []).entries()) {
      const f = `${field}.${op}[${i}]`;
      const p = check(h.name, `${f}.name`);
      if (p) return { problem: p };
      if (h.value === undefined || h.value === '')
        return { problem: { reason: 'UnsupportedValue', message: `${f}.value must not be empty` } };
      if (typeof h.value !== 'string' || !HEADER_VALUE.test(h.value)) {
        return {
          problem: {
            reason: 'UnsupportedValue',
            message:
              `${f}.value: ${JSON.stringify(h.value)} holds characters not allowed in an HTTP header ` +
              `value (control characters such as CR, LF or NUL)`,
          },
        };
      }
      // Adding a header twice gives it two values; setting it twice keeps the last value.
      const key = h.name.toLowerCase();
      if (op === 'set' && seen.has(key)) changes.set = changes.set.filter((x) => x.name.toLowerCase() !== key);
      seen.add(key);
      changes[op].push({ name: h.name, value: h.value });
    }
  }
  for (const [i, name] of (m.remove ?? []).entries()) {
    const p = check(name, `${field}.remove[${i}]`);
    if (p) return { problem: p };
    if (!changes.remove.includes(name)) changes.remove.push(name);
  }
  return { changes };
}

function mergeHeaders(a: HeaderChangesIR | undefined, b: HeaderChangesIR): HeaderChangesIR {
  if (!a) return b;
  return { set: [...a.set, ...b.set], add: [...a.add, ...b.add], remove: [...a.remove, ...b.remove] };
}

function pathModifier(
  p: { type: string; replaceFullPath?: string; replacePrefixMatch?: string } | undefined,
  field: string,
): { value?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string }; problem?: Problem } {
  if (!p) return {};
  // A path modifier sets the one value its type names: both, or the other one, is a contradiction.
  const other =
    p.type === 'ReplaceFullPath'
      ? 'replacePrefixMatch'
      : p.type === 'ReplacePrefixMatch'
        ? 'replaceFullPath'
        : undefined;
  if (other && p[other] !== undefined) {
    return {
      problem: { reason: 'UnsupportedValue', message: `${field}.${other} must not be set when type is ${p.type}` },
    };
  }
  const value =
    p.type === 'ReplaceFullPath'
      ? p.replaceFullPath
      : p.type === 'ReplacePrefixMatch'
        ? p.replacePrefixMatch
        : undefined;
  if (typeof value === 'string' && CONTROL_CHARACTER.test(value)) {
    return {
      problem: {
        reason: 'UnsupportedValue',
        message:
          `${field}.${other === 'replaceFullPath' ? 'replacePrefixMatch' : 'replaceFullPath'}: ` +
          `${JSON.stringify(value)} holds control characters, which a path cannot`,
      },
    };
  }
  if (p.type === 'ReplaceFullPath' && typeof p.replaceFullPath === 'string')
    return { value: { type: 'ReplaceFullPath', value: p.replaceFullPath } };
  if (p.type === 'ReplacePrefixMatch' && typeof p.replacePrefixMatch === 'string')
    return { value: { type: 'ReplacePrefixMatch', value: p.replacePrefixMatch } };
  return {
    problem: {
      reason: 'UnsupportedValue',
      message:
        `${field}.type: "${p.type}" is not supported (ReplaceFullPath, ReplacePrefixMatch), or its value ` +
        `is missing`,
    },
  };
}

export function compileFilters(
  ctx: TranslationContext,
  route: KubeObject,
  routeKind: string,
  filters: readonly HTTPRouteFilter[] | undefined,
  field: string,
): CompiledFilters {
  const out: CompiledFilters = { filters: {}, clusters: [] };
  const seen = new Set<string>();
  for (const [i, f] of (filters ?? []).entries()) {
    const ff = `${field}[${i}]`;
    const fail = (p: Problem) => {
      out.invalid ??= p;
    };
    // Header modifiers may repeat (their changes merge); redirect and rewrite may not.
    if ((f.type === 'RequestRedirect' || f.type === 'URLRewrite' || f.type === 'CORS') && seen.has(f.type)) {
      fail({ reason: 'UnsupportedValue', message: `${ff}: filter ${f.type} may appear only once in a filter list` });
      continue;
    }
    seen.add(f.type);
    const stray = Object.values(FILTER_FIELDS).find(
      (k) => k !== FILTER_FIELDS[f.type] && (f as unknown as Record<string, unknown>)[k] !== undefined,
    );
    if (stray) {
      fail({ reason: 'UnsupportedValue', message: `${ff}.${stray} must not be set when type is ${f.type}` });
      continue;
    }
    switch (f.type) {
      case 'RequestHeaderModifier': {
        const r = headerChanges(f.requestHeaderModifier, `${ff}.requestHeaderModifier`);
        if (r.problem) fail(r.problem);
        else out.filters.requestHeaders = mergeHeaders(out.filters.requestHeaders, r.changes as HeaderChangesIR);
        break;
      }
      case 'ResponseHeaderModifier': {
        const r = headerChanges(f.responseHeaderModifier, `${ff}.responseHeaderModifier`);
        if (r.problem) fail(r.problem);
        else out.filters.responseHeaders = mergeHeaders(out.filters.responseHeaders, r.changes as HeaderChangesIR);
        break;
      }
      case 'RequestRedirect': {
        const rr = f.requestRedirect;
        if (!rr) {
          fail({ reason: 'UnsupportedValue', message: `${ff}.requestRedirect must be set` });
          break;
        }
        if (rr.scheme !== undefined && rr.scheme !== 'http' && rr.scheme !== 'https') {
          fail({
            reason: 'UnsupportedValue',
            message: `${ff}.requestRedirect.scheme: "${rr.scheme}" is not supported (http, https)`,
          });
          break;
        }
        const code = rr.statusCode ?? 302;
        if (!REDIRECT_CODES.has(code)) {
          fail({
            reason: 'UnsupportedValue',
            message: `${ff}.requestRedirect.statusCode: ${code} is not a redirect status (301, 302, 303, 307, 308)`,
          });
          break;
        }
        if (rr.hostname !== undefined) {
          const e = validateHostname(rr.hostname);
          if (e || rr.hostname.startsWith('*')) {
            fail({
              reason: 'UnsupportedValue',
              message: `${ff}.requestRedirect.hostname: ${e ?? 'wildcards are not allowed'}`,
            });
            break;
          }
        }
        const p = pathModifier(rr.path, `${ff}.requestRedirect.path`);
        if (p.problem) {
          fail(p.problem);
          break;
        }
        const red: RedirectIR = { statusCode: code };
        if (rr.scheme) red.scheme = rr.scheme;
        if (rr.hostname) red.hostname = rr.hostname;
        if (rr.port !== undefined) red.port = rr.port;
        if (p.value) red.path = p.value;
        out.redirect = red;
        break;
      }
      case 'URLRewrite': {
        const rw = f.urlRewrite;
        if (!rw) {
          fail({ reason: 'UnsupportedValue', message: `${ff}.urlRewrite must be set` });
          break;
        }
        if (rw.hostname !== undefined) {
          const e = validateHostname(rw.hostname);
          if (e || rw.hostname.startsWith('*')) {
            fail({
              reason: 'UnsupportedValue',
              message: `${ff}.urlRewrite.hostname: ${e ?? 'wildcards are not allowed'}`,
            });
            break;
          }
        }
        const p = pathModifier(rw.path, `${ff}.urlRewrite.path`);
        if (p.problem) {
          fail(p.problem);
          break;
        }
        out.filters.rewrite = {};
        if (rw.hostname) out.filters.rewrite.hostname = rw.hostname;
        if (p.value) out.filters.rewrite.path = p.value;
        break;
      }
      case 'RequestMirror': {
        const m = f.requestMirror;
        if (!m?.backendRef) {
          fail({ reason: 'UnsupportedValue', message: `${ff}.requestMirror.backendRef must be set` });
          break;
        }
        const r = resolveBackend(ctx, route, routeKind, m.backendRef, `${ff}.requestMirror.backendRef`, 'http');
        if (r.problem) {
          out.unresolved ??= r.problem;
          break;
        }
        const b = r.backend!;
        const percent =
          m.percent ?? (m.fraction ? (100 * m.fraction.numerator) / (m.fraction.denominator ?? 100) : 100);
        (out.filters.mirrors ??= []).push({ cluster: b.cluster.name, percent });
        out.clusters.push(b.cluster);
        break;
      }
      case 'CORS': {
        const c = f.cors ?? {};
        out.filters.cors = {
          allowOrigins: c.allowOrigins ?? [],
          allowMethods: c.allowMethods ?? [],
          allowHeaders: c.allowHeaders ?? [],
          exposeHeaders: c.exposeHeaders ?? [],
          allowCredentials: c.allowCredentials ?? false,
        };
        if (c.maxAge !== undefined) out.filters.cors.maxAge = c.maxAge;
        break;
      }
      case 'ExtensionRef': {
        const e = f.extensionRef;
        if (!e || e.group !== TURNPIKE_GROUP || e.kind !== 'PluginInstallation') {
          out.unresolved ??= {
            reason: 'InvalidKind',
            message:
              `${ff}.extensionRef: ${e ? `${e.group}/${e.kind}` : 'missing'} is not supported, use ` +
              `${TURNPIKE_GROUP}/PluginInstallation`,
          };
          break;
        }
        const r = resolvePluginRef(
          ctx.inputs,
          { kind: routeKind, group: GATEWAY_GROUP, namespace: route.metadata.namespace ?? '' },
          { name: e.name },
          `${ff}.extensionRef`,
        );
        if (r.problem) {
          out.unresolved ??= r.problem;
          break;
        }
        const { plugin, content } = r.resolved!;
        (out.filters.plugins ??= []).push({
          name: `${plugin.metadata.namespace}/${plugin.metadata.name}`,
          type: plugin.spec.type,
          sha256: content.sha256!,
          ...(content.storage?.url ? { url: content.storage.url } : {}),
        });
        break;
      }
      default:
        fail({ reason: 'UnsupportedValue', message: `${ff}.type: filter type "${f.type}" is not supported` });
    }
  }
  if (out.redirect && out.filters.rewrite)
    out.invalid ??= {
      reason: 'UnsupportedValue',
      message: `${field}: RequestRedirect and URLRewrite cannot be combined`,
    };
  return out;
}
