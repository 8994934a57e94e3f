// Literal text inside the RE2 patterns the proxies run, shared by the translator (which measures a pattern's
// RE2 program before accepting it) and the xDS builder (which writes the same pattern).

/** `s` as an RE2 (and JavaScript) pattern that matches it literally. */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * HTTPCORSFilter allowOrigins: "A wildcard character `*` ... matches any characters (greedy)", so
 * `https://*.bar.com` allows `https://a.b.bar.com` too.
 */
export function corsOriginPattern(origin: string): string {
  return `^${escapeRegex(origin).replaceAll('\\*', '.+')}$`;
}
