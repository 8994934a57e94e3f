// GRPCRoute: service/method and header matches map to HTTP/2 paths "/<service>/<method>".
import type { GRPCRoute, GRPCRouteMatch } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import type { TranslationContext } from '../context.js';
import type { HTTPMatchIR } from '@turnpike/api';
import type { ParentIndex } from './attachment.js';
import { checkRegex, programSizeProblem } from './http-matches.js';
import { translateHTTPLikeRoute } from './http-rules.js';
import type { RouteResult } from './route-result.js';

const ESCAPE = /[.*+?^${}()|[\]\\]/g;

export function compileGRPCMatch(m: GRPCRouteMatch, field: string): HTTPMatchIR | Problem {
  const ir: HTTPMatchIR = { path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] };
  const mm = m.method;
  if (mm) {
    const type = mm.type ?? 'Exact';
    if (!mm.service && !mm.method)
      return { reason: 'UnsupportedValue', message: `${field}.method: service or method must be set` };
    ir.grpc = { ...(mm.service ? { service: mm.service } : {}), ...(mm.method ? { method: mm.method } : {}) };
    if (type === 'Exact') {
      if (mm.service && mm.method) ir.path = { type: 'Exact', value: `/${mm.service}/${mm.method}` };
      else if (mm.service) ir.path = { type: 'PathPrefix', value: `/${mm.service}/` };
      else ir.path = { type: 'RegularExpression', value: `/[^/]+/${(mm.method as string).replace(ESCAPE, '\\$&')}` };
    } else if (type === 'RegularExpression') {
      for (const v of [mm.service, mm.method]) {
        const e = v ? checkRegex(v) : undefined;
        if (e) return { reason: 'UnsupportedValue', message: `${field}.method: ${e}` };
      }
      ir.path = { type: 'RegularExpression', value: `/${mm.service || '[^/]+'}/${mm.method || '[^/]+'}` };
    } else {
      return {
        reason: 'UnsupportedValue',
        message: `${field}.method.type: "${type}" is not supported (Exact, RegularExpression)`,
      };
    }
    // The proxy runs service and method as one path regex: its program is what Envoy measures.
    const e = ir.path.type === 'RegularExpression' ? programSizeProblem(ir.path.value) : undefined;
    if (e) return { reason: 'UnsupportedValue', message: `${field}.method: the path regex ${e}` };
  }
  const seen = new Set<string>();
  for (const [i, h] of (m.headers ?? []).entries()) {
    // GRPCHeaderMatch: of entries with equivalent (case-insensitive) names, only the first counts.
    if (seen.has(h.name.toLowerCase())) continue;
    seen.add(h.name.toLowerCase());
    const t = h.type ?? 'Exact';
    if (t !== 'Exact' && t !== 'RegularExpression')
      return { reason: 'UnsupportedValue', message: `${field}.headers[${i}].type: "${t}" is not supported` };
    if (t === 'RegularExpression') {
      const e = checkRegex(h.value);
      if (e) return { reason: 'UnsupportedValue', message: `${field}.headers[${i}].value: ${e}` };
    }
    ir.headers.push({ name: h.name, type: t, value: h.value });
  }
  return ir;
}

export function translateGRPCRoute(ctx: TranslationContext, parents: ParentIndex, route: GRPCRoute): RouteResult {
  return translateHTTPLikeRoute(ctx, parents, route, 'GRPCRoute', compileGRPCMatch);
}
