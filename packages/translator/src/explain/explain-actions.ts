// What the proxy does with a request a route's match selects, one line per rule and match, for
// `explain`: the match, the filters in the order Envoy applies them, and the answer (a redirect, a
// fixed response, or backends by weight with the share that answers 500).
import type { HTTPFiltersIR, HTTPRouteIR, L4RouteIR, StringMatchIR } from '@turnpike/api';
import { sessionText } from './explain-backends.js';

function stringMatch(m: StringMatchIR & { name: string }): string {
  return `${m.name} ${m.type === 'RegularExpression' ? '~' : '='} ${m.value}`;
}

function matchText(r: HTTPRouteIR): string {
  const m = r.match;
  const parts = [m.grpc ? `gRPC ${m.grpc.service ?? '*'}/${m.grpc.method ?? '*'}` : `${m.method ?? 'any method'}`];
  if (!m.grpc) parts.push(`path ${m.path.type} ${m.path.value}`);
  if (m.headers.length) parts.push(`headers ${m.headers.map(stringMatch).join(', ')}`);
  if (m.queryParams.length) parts.push(`query ${m.queryParams.map(stringMatch).join(', ')}`);
  return parts.join(', ');
}

function filterTexts(f: HTTPFiltersIR | undefined): string[] {
  if (!f) return [];
  const out: string[] = [];
  const changes = (what: string, h: HTTPFiltersIR['requestHeaders']) => {
    if (!h) return;
    const list = [
      ...h.set.map((x) => `set ${x.name}`),
      ...h.add.map((x) => `add ${x.name}`),
      ...h.remove.map((n) => `remove ${n}`),
    ];
    if (list.length) out.push(`${what} headers: ${list.join(', ')}`);
  };
  changes('request', f.requestHeaders);
  if (f.rewrite?.hostname) out.push(`rewrites the host to ${f.rewrite.hostname}`);
  if (f.rewrite?.path)
    out.push(
      f.rewrite.path.type === 'ReplaceFullPath'
        ? `rewrites the path to ${f.rewrite.path.value}`
        : `replaces the matched prefix with ${f.rewrite.path.value}`,
    );
  for (const m of f.mirrors ?? []) out.push(`mirrors ${m.percent}% to ${m.cluster}`);
  if (f.cors) out.push(`CORS for ${f.cors.allowOrigins.join(', ') || 'no origin'}`);
  for (const p of f.plugins ?? []) out.push(`runs plugin ${p.name} (${p.type})`);
  changes('response', f.responseHeaders);
  return out;
}

function answerText(r: HTTPRouteIR): string {
  if (r.redirect) {
    const x = r.redirect;
    const to = [
      x.scheme && `scheme ${x.scheme}`,
      x.hostname && `host ${x.hostname}`,
      x.port !== undefined && `port ${x.port}`,
      x.path && `${x.path.type === 'ReplaceFullPath' ? 'path' : 'prefix'} ${x.path.value}`,
    ].filter(Boolean);
    return `redirects (${x.statusCode})${to.length ? ` to ${to.join(', ')}` : ''}`;
  }
  if (r.directResponse)
    return `answers ${r.directResponse.status}${r.directResponse.body ? `: ${r.directResponse.body}` : ''}`;
  return backendsText(r.backends ?? [], r.invalidWeight);
}

function backendsText(backends: readonly { cluster: string; weight: number }[], invalidWeight = 0): string {
  const total = backends.reduce((n, b) => n + b.weight, 0) + invalidWeight;
  if (total === 0) return 'answers 500: no backend can take the request';
  const share = (w: number) => `${Math.round((w / total) * 1000) / 10}%`;
  const parts = backends.map((b) => `${share(b.weight)} to ${b.cluster}`);
  if (invalidWeight) parts.push(`${share(invalidWeight)} answered 500 (backends that do not resolve)`);
  return `sends ${parts.join(', ')}`;
}

/** One line per HTTP rule and match: `match → filters → answer`. */
export function httpActionLines(routes: readonly HTTPRouteIR[]): string[] {
  return routes.map((r) => {
    const where = r.name.split('/').slice(3).join('/'); // `rule/R/match/M`
    const timeouts = r.timeouts?.request ? `; times out after ${r.timeouts.request}` : '';
    const retry = !r.retry
      ? ''
      : r.retry.attempts === 0
        ? '; never retried (attempts 0)'
        : `; retries ${r.retry.attempts} time(s) on ${[...r.retry.codes, 'connection failures'].join(', ')}`;
    const filters = filterTexts(r.filters);
    const session = r.sessionPersistence ? [sessionText(r.sessionPersistence)] : [];
    return `${where}: ${matchText(r)} → ${[...filters, answerText(r), ...session].join(' → ')}${timeouts}${retry}`;
  });
}

export function l4ActionLine(route: L4RouteIR): string {
  const hosts = route.hostnames?.length ? `server names ${route.hostnames.join(', ')}: ` : '';
  return `${hosts}${backendsText(route.backends, route.invalidWeight)}`;
}
