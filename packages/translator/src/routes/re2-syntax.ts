// Regular expressions as Envoy runs them: RE2 (safe_regex), not JavaScript. RE2 has no
// lookaround, backreferences, atomic groups or possessive quantifiers, which JavaScript accepts,
// and it has inline flags `(?i)`, `(?i:…)` and Python-style `(?P<name>…)`, which JavaScript
// refuses. The check names what RE2 lacks in words of its own, then lets RE2JS (a port of RE2's
// parser) judge the rest.
import { RE2JS } from '@bufbuild/re2';

const UNSUPPORTED: [RegExp, string][] = [
  [/\(\?<?[=!]/, 'lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported by RE2'],
  [/\(\?>/, 'atomic groups ((?>…)) are not supported by RE2'],
  [/(?<!\\)(?:\\\\)*\\[1-9]/, 'backreferences (\\1…\\9) are not supported by RE2'],
  [/(?<!\\)(?:\\\\)*\\k</, 'named backreferences (\\k<name>) are not supported by RE2'],
  [/[*+?}]\+/, 'possessive quantifiers (*+, ++, ?+) are not supported by RE2'],
];

/**
 * Removes escaped characters and character classes, so that syntax checks see only the structure. An
 * escape may span braces (`\p{Greek}`, `\x{41}`) or a quoted run (`\Q*+\E`): read left to right, so that
 * an escaped backslash is never taken for the start of one; `\p{Greek}+` is a repeated class, not `}+`.
 */
function structure(re: string): string {
  return re.replace(/\\Q[\s\S]*?(?:\\E|$)|\\[pPx]\{[^}]*\}|\\./g, '_').replace(/\[(?:\\.|[^\]\\])*\]/g, '_');
}

/** Why `re` is not a valid RE2 expression; undefined when it is. */
export function re2Problem(re: string): string | undefined {
  const bare = structure(re);
  for (const [pattern, why] of UNSUPPORTED) {
    // Backreferences are escapes: look at the raw text for those, at the structure for the rest.
    if (pattern.test(why.includes('backreference') ? re : bare)) return why;
  }
  // The same engine as the serving path's check (xds envoy-load-rules.ts), so that what is admitted here
  // is never withheld there: RE2's syntax as RE2JS parses it (it refuses \C, which RE2 in C++ allows).
  try {
    RE2JS.compile(re);
    return undefined;
  } catch (e) {
    return (e as Error).message.replace(/^error parsing regexp: /, '');
  }
}
