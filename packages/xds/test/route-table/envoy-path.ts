// What Envoy's HTTP connection manager does to a request's :path before any filter or route sees it
// (ConnectionManagerUtility::maybeNormalizePath in source/common/http/conn_manager_utility.cc), in
// its order: escaped slashes (path_with_escaped_slashes_action), then RFC 3986 normalisation
// (normalize_path), then slash merging (merge_slashes). Each works on the path before the query
// string, which is kept as sent. A field left unset does nothing: Envoy's defaults are KEEP_UNCHANGED
// ("Envoy, by default, takes the KEEP_UNCHANGED action"), normalize_path false ("This defaults to
// false currently") and merge_slashes false.
import type { HttpConnectionManager } from '../../src/envoy-types.js';

export type PathVerdict =
  /** Route this path (it is also the :path the backend gets). */
  | { path: string }
  /** Answered 400 before routing ("httpN.downstream_rq_failed_path_normalization"). */
  | { reject: string }
  /** Answered 307 before routing, Location: this path (UNESCAPE_AND_REDIRECT). */
  | { redirect: string };

function splitQuery(path: string): { path: string; query: string } {
  const i = path.indexOf('?');
  return i < 0 ? { path, query: '' } : { path: path.slice(0, i), query: path.slice(i) };
}

/**
 * Grpc::Common::hasGrpcContentType: application/grpc, or application/grpc+<codec> or ;<params>.
 * A gRPC request is refused (400) where a redirect would be sent: "gRPC clients do not support redirect".
 */
export function hasGrpcContentType(contentType: string | undefined): boolean {
  const ct = (contentType ?? '').toLowerCase();
  return ct === 'application/grpc' || ct.startsWith('application/grpc+') || ct.startsWith('application/grpc;');
}

/** The path as the HTTP connection manager passes it on, or its local answer. */
export function normalizeRequestPath(hcm: HttpConnectionManager, raw: string, grpc: boolean): PathVerdict {
  const split = splitQuery(raw);
  const query = split.query;
  let path = split.path;
  let redirect = false;
  const action = hcm.path_with_escaped_slashes_action ?? 'IMPLEMENTATION_SPECIFIC_DEFAULT';
  if (action !== 'KEEP_UNCHANGED' && action !== 'IMPLEMENTATION_SPECIFIC_DEFAULT') {
    // PathUtil::unescapeSlashes: %2F and %2f become "/", %5C and %5c "\" (which normalisation then
    // turns into "/"), in the path only.
    const unescaped = path.replace(/%2f/gi, '/').replace(/%5c/gi, '\\');
    if (unescaped !== path) {
      if (action === 'REJECT_REQUEST') return { reject: 'escaped slash in the path (REJECT_REQUEST)' };
      if (action === 'UNESCAPE_AND_REDIRECT') redirect = true;
      path = unescaped;
    }
  }
  if (hcm.normalize_path?.value) path = canonicalPath(path);
  // PathTransformer::mergeSlashes, after normalisation "to catch potential edge cases with percent encoding".
  if (hcm.merge_slashes && path.includes('//')) {
    const segments = path.split('/').filter((s) => s !== '');
    path = (path.startsWith('/') ? '/' : '') + segments.join('/') + (path.endsWith('/') ? '/' : '');
  }
  if (redirect) {
    if (grpc)
      return { reject: 'escaped slash in a gRPC request (UNESCAPE_AND_REDIRECT refuses what it cannot redirect)' };
    return { redirect: path + query };
  }
  return { path: path + query };
}

/** "." or its escaped form (url_canon_internal.h, IsDot): its length in the input, 0 for none. */
function dotAt(s: string, i: number): number {
  if (s[i] === '.') return 1;
  return s[i] === '%' && s[i + 1] === '2' && (s[i + 2] === 'e' || s[i + 2] === 'E') ? 3 : 0;
}

const isSlash = (c: string | undefined) => c === '/' || c === '\\';

/**
 * ASCII characters the canonical path escapes (url_canon_path.cc, kPathCharLookup: the ESCAPE
 * entries); every byte of a non-ASCII character is escaped too.
 */
const ESCAPED = new Set([...' "#<>?^`{|}', '\x7f']);

/**
 * PathTransformer::rfcNormalize: Chromium's url::CanonicalizePath, which Envoy vendors (googleurl):
 * dot-segments (".", "..", and "%2e" spelt either way) removed as RFC 3986 section 5.2.4 does, never
 * above the root; "\" read as "/"; characters a path may not hold percent-encoded (upper-case hex).
 * Other escapes are copied as they are: the canonicaliser no longer decodes percent-encoded ASCII
 * (its DontDecodeAsciiPercentEncodedURLPath feature is on by default), so `/a/%2F%2f/c` stays.
 * Envoy does not change case (normalize_path: "Envoy does not perform case normalization").
 */
export function canonicalPath(path: string): string {
  const bytes = Buffer.from(path, 'utf8').toString('latin1');
  let out = isSlash(bytes[0]) ? '' : '/';
  const endsWithSlash = () => out.endsWith('/');
  const backUp = () => {
    // BackUpToPreviousSlash: drop the last segment, keep the slash before it (never the first).
    const i = out.lastIndexOf('/', out.length - 2);
    out = out.slice(0, Math.max(i, 0) + 1);
  };
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    const dot = dotAt(bytes, i);
    if (dot) {
      if (!endsWithSlash()) {
        out += '.';
        i += dot - 1;
        continue;
      }
      // ClassifyAfterDot: "." or ".." ending the path or followed by a slash is a directory step.
      const after = i + dot;
      if (after === bytes.length || isSlash(bytes[after])) {
        i = after; // with the slash that follows, if any
        continue;
      }
      const second = dotAt(bytes, after);
      if (second && (after + second === bytes.length || isSlash(bytes[after + second]))) {
        backUp();
        i = after + second; // past the second dot and its slash, if any
        continue;
      }
      out += '.';
      i += dot - 1;
      continue;
    }
    if (c === '\\') out += '/';
    else if (c === '%') out += '%';
    else if (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) >= 0x80 || ESCAPED.has(c))
      out += `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
    else out += c;
  }
  return out;
}
