// Envoy runs safe_regex with RE2. Matching here uses an RE2 implementation (@bufbuild/re2, already
// the engine's for CEL), so a pattern means what it means to Envoy. Rewrites substitute with a
// JavaScript RegExp of the same pattern: RE2JS exposes no replace, and the patterns we rewrite with
// (escaped literals, anchors, `.*`, `/?`) mean the same in both.
import { RE2JS } from '@bufbuild/re2';

const compiled = new Map<string, RE2JS>();

function re2(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    compiled.set(pattern, re);
  }
  return re;
}

/** Whether RE2 matches the whole of `value` (Envoy's RegexMatcher: "not as a partial match"). */
export function re2FullMatch(pattern: string, value: string): boolean {
  return re2(pattern).matches(value);
}

/** A global JavaScript RegExp for an RE2 pattern that RE2 accepts (it throws otherwise). */
export function re2Replacer(pattern: string): RegExp {
  re2(pattern);
  const flags = pattern.startsWith('(?i)') ? 'gi' : 'g';
  return new RegExp(pattern.replace(/^\(\?i\)/, ''), flags);
}
