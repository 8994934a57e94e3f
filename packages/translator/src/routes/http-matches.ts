// HTTPRoute matches: validated (an invalid one makes its rule invalid) and compiled. A rule
// without matches matches every request (PathPrefix "/").
import { ENVOY_RE2_MAX_PROGRAM_SIZE, re2ProgramSize, type HTTPRouteMatch } from '@turnpike/api';
import type { Problem } from '../status/conditions.js';
import { re2Problem } from './re2-syntax.js';
import type { HTTPMatchIR, StringMatchIR } from '@turnpike/api';
import { fitted } from '../compact-values.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/** A regular expression the proxy can run (RE2 syntax). */
export function checkRegex(value: string): string | undefined {
  if (value === '') return 'a regular expression must not be empty';
  const why = re2Problem(value);
  return why === undefined ? programSizeProblem(value) : `"${value}" is not a valid RE2 regular expression (${why})`;
}

/**
 * Envoy refuses a regex whose RE2 program is larger than the runtime's re2.max_program_size.error_level
 * (default 100, which Turnpike's bootstrap keeps), and with it the whole route configuration of the port:
 * such a match is refused here instead, with its size. A pattern whose size cannot be computed is refused too.
 */
export function programSizeProblem(value: string): string | undefined {
  const p = re2ProgramSize(value);
  const limit = `Envoy accepts at most ${ENVOY_RE2_MAX_PROGRAM_SIZE} (re2.max_program_size.error_level)`;
  if (p.size === undefined)
    return p.why.startsWith('RE2 refuses it: ')
      ? `"${value}" is not a valid RE2 regular expression (${p.why.slice('RE2 refuses it: '.length)})`
      : `"${value}" is refused: ${p.why}; ${limit}`;
  if (p.size > ENVOY_RE2_MAX_PROGRAM_SIZE)
    return `"${value}" compiles to an RE2 program of ${p.size} instructions; ${limit}`;
  return undefined;
}

function stringMatch(type: string | undefined, value: string, field: string): StringMatchIR | Problem {
  const t = type ?? 'Exact';
  if (t !== 'Exact' && t !== 'RegularExpression')
    return { reason: 'UnsupportedValue', message: `${field}.type: "${t}" is not supported (Exact, RegularExpression)` };
  if (t === 'RegularExpression') {
    const e = checkRegex(value);
    if (e) return { reason: 'UnsupportedValue', message: `${field}.value: ${e}` };
  }
  return { type: t, value };
}

/** HTTP header and query parameter names are tokens (RFC 9110); the CRD's pattern says the same. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function nameProblem(name: unknown, field: string, what: string): Problem {
  return { reason: 'UnsupportedValue', message: `${field}.name: ${JSON.stringify(name)} is not a valid ${what} name` };
}

function validName(name: unknown): boolean {
  return typeof name === 'string' && name.length <= 256 && TOKEN.test(name);
}

function isProblem(x: unknown): x is Problem {
  return typeof x === 'object' && x !== null && 'reason' in x;
}

/**
 * Header and query parameter matches: a valid name, and an Exact or RE2 value. Of entries with
 * equivalent names only the first is considered (HTTPHeaderMatch, HTTPQueryParamMatch); header
 * names are equivalent regardless of case, query parameter names only when equal.
 */
function namedMatches(
  matches: readonly { name: string; type?: string; value: string }[] | undefined,
  field: string,
  key: 'headers' | 'queryParams',
  what: string,
  nameKey: (name: string) => string,
): (StringMatchIR & { name: string })[] | Problem {
  const compiled: (StringMatchIR & { name: string })[] = [];
  if (!matches?.length) return compiled;
  // A Set only when there can be a repeat: most matches have one header or none.
  const seen = matches.length > 1 ? new Set<string>() : undefined;
  for (let index = 0; index < matches.length; index++) {
    const match = matches[index]!;
    // The field's path is spelled out only for a problem: this runs for every match of every route.
    if (!validName(match.name)) return nameProblem(match.name, `${field}.${key}[${index}]`, what);
    if (seen) {
      const equivalent = nameKey(match.name);
      if (seen.has(equivalent)) continue;
      seen.add(equivalent);
    }
    const type = match.type ?? 'Exact';
    if (type === 'Exact') {
      compiled.push({ name: match.name, type, value: match.value });
      continue;
    }
    const value = stringMatch(type, match.value, `${field}.${key}[${index}]`);
    if (isProblem(value)) return value;
    compiled.push({ name: match.name, type: value.type, value: value.value });
  }
  return fitted(compiled);
}

export function compileHTTPMatch(m: HTTPRouteMatch, field: string): HTTPMatchIR | Problem {
  const pathType = m.path?.type ?? 'PathPrefix';
  const pathValue = m.path?.value ?? '/';
  if (pathType !== 'Exact' && pathType !== 'PathPrefix' && pathType !== 'RegularExpression') {
    return {
      reason: 'UnsupportedValue',
      message: `${field}.path.type: "${pathType}" is not supported (Exact, PathPrefix, RegularExpression)`,
    };
  }
  if (pathType === 'RegularExpression') {
    const e = checkRegex(pathValue);
    if (e) return { reason: 'UnsupportedValue', message: `${field}.path.value: ${e}` };
  } else if (!pathValue.startsWith('/')) {
    return { reason: 'UnsupportedValue', message: `${field}.path.value: "${pathValue}" must start with "/"` };
  } else if (/[?#]/.test(pathValue)) {
    // A request's path never holds '?' (the query begins there) or '#' (never sent): such a match could
    // never match, and Envoy refuses it as a path_separated_prefix (PGV ^[^?#]+[^?#/]$), which would cost
    // the whole route configuration. The CRD refuses '#' already; '?' it admits.
    return {
      reason: 'UnsupportedValue',
      message: `${field}.path.value: "${pathValue}" contains "?" or "#", which a request path never does`,
    };
  }
  const ir: HTTPMatchIR = { path: { type: pathType, value: pathValue }, headers: [], queryParams: [] };
  const headers = namedMatches(m.headers, field, 'headers', 'HTTP header', (n) => n.toLowerCase());
  if (isProblem(headers)) return headers;
  const queryParams = namedMatches(m.queryParams, field, 'queryParams', 'query parameter', (n) => n);
  if (isProblem(queryParams)) return queryParams;
  ir.headers = headers;
  ir.queryParams = queryParams;
  if (m.method !== undefined) {
    if (!METHODS.has(m.method))
      return { reason: 'UnsupportedValue', message: `${field}.method: "${m.method}" is not an HTTP method` };
    ir.method = m.method;
  }
  return ir;
}
