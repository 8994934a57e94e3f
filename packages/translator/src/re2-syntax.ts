// Regular expressions as Envoy runs them: RE2 (safe_regex), not JavaScript. RE2 has no
// lookaround, backreferences, atomic groups or possessive quantifiers, which JavaScript accepts,
// and it has inline flags `(?i)`, `(?i:…)` and Python-style `(?P<name>…)`, which JavaScript
// refuses. The check rejects what RE2 lacks, rewrites what only RE2 has into its JavaScript
// equivalent, and lets JavaScript's parser judge the structure (brackets, quantifiers, escapes).

const UNSUPPORTED: [RegExp, string][] = [
  [/\(\?<?[=!]/, 'lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported by RE2'],
  [/\(\?>/, 'atomic groups ((?>…)) are not supported by RE2'],
  [/(?<!\\)(?:\\\\)*\\[1-9]/, 'backreferences (\\1…\\9) are not supported by RE2'],
  [/(?<!\\)(?:\\\\)*\\k</, 'named backreferences (\\k<name>) are not supported by RE2'],
  [/[*+?}]\+/, 'possessive quantifiers (*+, ++, ?+) are not supported by RE2'],
];

/** Removes escaped characters and character classes, so that syntax checks see only the structure. */
function structure(re: string): string {
  return re.replace(/\\./g, '_').replace(/\[(?:\\.|[^\]\\])*\]/g, '_');
}

/** Why `re` is not a valid RE2 expression; undefined when it is. */
export function re2Problem(re: string): string | undefined {
  const bare = structure(re);
  for (const [pattern, why] of UNSUPPORTED) {
    // Backreferences are escapes: look at the raw text for those, at the structure for the rest.
    if (pattern.test(why.includes('backreference') ? re : bare)) return why;
  }
  // RE2-only syntax, in its JavaScript form: (?P<n>…) → (?<n>…); flag groups → plain groups.
  const js = re
    .replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, '(?<$1>')
    .replace(/\(\?[imsU-]+\)/g, '')
    .replace(/\(\?[imsU-]+:/g, '(?:');
  try {
    new RegExp(js, 'u');
    return undefined;
  } catch (e) {
    try {
      // Without the u flag for escapes RE2 accepts and JavaScript's unicode mode does not (\_).
      new RegExp(js);
      return undefined;
    } catch {
      return (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '');
    }
  }
}
