// HTTPRoute: hostnames, matches (path, headers, query parameters, method), filters, backends.
import type { HTTPRoute } from '@turnpike/api';
import type { TranslationContext } from '../context.js';
import type { ParentIndex } from './attachment.js';
import { compileHTTPMatch } from './http-matches.js';
import { translateHTTPLikeRoute } from './http-rules.js';
import type { RouteResult } from './route-result.js';

export function translateHTTPRoute(ctx: TranslationContext, parents: ParentIndex, route: HTTPRoute): RouteResult {
  return translateHTTPLikeRoute(ctx, parents, route, 'HTTPRoute', compileHTTPMatch);
}
