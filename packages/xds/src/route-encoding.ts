// Encoding a RouteConfiguration from pieces. It holds every route of a port, so one changed route
// would re-encode hundreds; instead each Route is encoded once (memoised by the built object, which
// is memoised by its IR) and the virtual hosts and the configuration are framed around those bytes.
// Protobuf allows this: a message field is its tag, a length and the bytes of the message, and the
// elements of a repeated field may stand anywhere in the message, in order.
import { encodeMessage } from './proto-root.js';
import type { Route, RouteConfiguration, VirtualHost } from './envoy-types.js';

const ROUTE_CONFIGURATION_VIRTUAL_HOSTS = 2;
const VIRTUAL_HOST_ROUTES = 3;

function varintSize(n: number): number {
  let size = 1;
  while (n > 0x7f) {
    n >>>= 7;
    size++;
  }
  return size;
}

function writeVarint(buf: Buffer, pos: number, n: number): number {
  while (n > 0x7f) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[pos++] = n;
  return pos;
}

/**
 * `head`, then each part as a length-delimited field (tag, length, bytes), written into one buffer of
 * the exact size: a route configuration holds thousands of routes, and concatenating small buffers of
 * tags and lengths between them cost more than the copy.
 */
function framed(head: Uint8Array, fieldNumber: number, parts: readonly Uint8Array[]): Buffer {
  const tag = ((fieldNumber << 3) | 2) >>> 0;
  const tagSize = varintSize(tag);
  let size = head.length;
  for (const p of parts) size += tagSize + varintSize(p.length) + p.length;
  const out = Buffer.allocUnsafe(size);
  out.set(head, 0);
  let pos = head.length;
  for (const p of parts) {
    pos = writeVarint(out, pos, tag);
    pos = writeVarint(out, pos, p.length);
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}

export class RouteConfigurationEncoder {
  private readonly routes = new WeakMap<Route, { id: number; bytes: Buffer }>();
  private nextId = 0;
  /** Per RouteConfiguration name, its virtual hosts' bytes by what they hold (kept for the next encoding only). */
  private readonly hosts = new Map<string, Map<string, Buffer>>();

  private route(r: Route): { id: number; bytes: Buffer } {
    let e = this.routes.get(r);
    if (!e) this.routes.set(r, (e = { id: this.nextId++, bytes: encodeMessage('envoy.config.route.v3.Route', r) }));
    return e;
  }

  private virtualHost(vh: VirtualHost, previous: Map<string, Buffer> | undefined, next: Map<string, Buffer>): Buffer {
    const { routes, ...head } = vh;
    const encoded = (routes ?? []).map((r) => this.route(r));
    // A virtual host is its name, domains and routes (the only fields we set), the routes by identity.
    const key = `${JSON.stringify(head)}|${encoded.map((e) => e.id).join(',')}`;
    let bytes = previous?.get(key);
    bytes ??= framed(
      encodeMessage('envoy.config.route.v3.VirtualHost', head),
      VIRTUAL_HOST_ROUTES,
      encoded.map((e) => e.bytes),
    );
    next.set(key, bytes);
    return bytes;
  }

  encode(rc: RouteConfiguration): Buffer {
    const { virtual_hosts: vhs, ...head } = rc;
    const previous = this.hosts.get(rc.name ?? '');
    const next = new Map<string, Buffer>();
    const bytes = framed(
      encodeMessage('envoy.config.route.v3.RouteConfiguration', head),
      ROUTE_CONFIGURATION_VIRTUAL_HOSTS,
      (vhs ?? []).map((vh) => this.virtualHost(vh, previous, next)),
    );
    this.hosts.set(rc.name ?? '', next);
    return bytes;
  }
}
