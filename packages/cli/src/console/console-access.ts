// Who may read the console. It shows every status and the xDS of every Gateway, so:
// - only requests whose Host is a loopback name, or the address it listens on, are answered: a
//   web page of another origin that rebinds its DNS name to 127.0.0.1 sends its own name as Host
//   and gets nothing (DNS rebinding);
// - listening beyond loopback, it asks for a token: given once in the URL it prints
//   (`/?token=…`), kept in an HttpOnly, SameSite=Strict cookie for the page's API calls, Secure when
//   the request came over TLS (a proxy in front that terminated it says so). In a cluster the token is
//   the operator's (--console-token-file) and never printed: the controller's log is not a secret.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isLoopbackHost } from '../flags.js';

export const CONSOLE_COOKIE = 'turnpike_console';

export interface ConsoleAccess {
  /** Set when the console listens beyond loopback. */
  token?: string;
  /** The host names a request may carry besides loopback ones (the listen address). */
  hosts: Set<string>;
}

/** `token`: the one to ask for beyond loopback (default: a random one). */
export function consoleAccess(listenHost: string, token?: string): ConsoleAccess {
  const wildcard = listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '';
  return {
    ...(isLoopbackHost(listenHost) ? {} : { token: token ?? randomBytes(18).toString('base64url') }),
    hosts: new Set(wildcard || isLoopbackHost(listenHost) ? [] : [listenHost.toLowerCase()]),
  };
}

function hostOf(header: string | undefined): string {
  if (!header) return '';
  const m = /^(\[[^\]]*\]|[^:]*)(?::\d+)?$/.exec(header.trim());
  return (m?.[1] ?? '').replace(/^\[|\]$/g, '').toLowerCase();
}

function sameToken(given: string | undefined | null, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given),
    b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieToken(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, v] = part.trim().split('=');
    if (k === CONSOLE_COOKIE) return v;
  }
  return undefined;
}

/** The request came over TLS: to us, or to a proxy in front that says so (X-Forwarded-Proto, Forwarded). */
function overTls(req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https' || /(^|[;,\s])proto="?https"?/i.test(String(req.headers.forwarded ?? ''));
}

export type AccessVerdict = { ok: true; setCookie?: string } | { ok: false; status: number; message: string };

/** Whether to answer a request, and the cookie to set when it brought the token in its URL. */
export function checkAccess(access: ConsoleAccess, req: IncomingMessage, url: URL): AccessVerdict {
  const host = hostOf(req.headers.host);
  // With a token, any name that reaches the listen address may be used (a load balancer's, a
  // node's); the token is what the request must bring.
  if (!access.token && !isLoopbackHost(host) && !access.hosts.has(host))
    return { ok: false, status: 403, message: `Host ${host || '(none)'} is not served: use a loopback address\n` };
  if (!access.token) return { ok: true };
  if (sameToken(cookieToken(req), access.token)) return { ok: true };
  if (sameToken(url.searchParams.get('token'), access.token))
    return {
      ok: true,
      setCookie:
        `${CONSOLE_COOKIE}=${access.token}; HttpOnly; SameSite=Strict; Path=/` + (overTls(req) ? '; Secure' : ''),
    };
  return { ok: false, status: 401, message: 'the console needs the token it printed at start (?token=…)\n' };
}
