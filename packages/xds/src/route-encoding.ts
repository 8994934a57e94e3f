// Encoding a RouteConfiguration from pieces. It holds every route of a port, so one changed route
// would re-encode hundreds; instead each Route is encoded once (memoised by the built object, which
// is memoised by its IR) and the virtual hosts and the configuration are framed around those bytes.
// Protobuf allows this: a message field is its tag, a length and the bytes of the message, and the
// elements of a repeated field may stand anywhere in the message, in order.
import { encodeMessage } from './proto-root.js';
import type { Route, RouteConfiguration, VirtualHost } from './envoy-types.js';

const ROUTE_CONFIGURATION_VIRTUAL_HOSTS = 2;
const VIRTUAL_HOST_ROUTES = 3;

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** A length-delimited field: tag (field number, wire type 2), length, bytes. */
function field(fieldNumber: number, bytes: Uint8Array): Buffer[] {
  return [
    Buffer.from([...varint((fieldNumber << 3) | 2), ...varint(bytes.length)]),
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  ];
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
    bytes ??= Buffer.concat([
      encodeMessage('envoy.config.route.v3.VirtualHost', head),
      ...encoded.flatMap((e) => field(VIRTUAL_HOST_ROUTES, e.bytes)),
    ]);
    next.set(key, bytes);
    return bytes;
  }

  encode(rc: RouteConfiguration): Buffer {
    const { virtual_hosts: vhs, ...head } = rc;
    const previous = this.hosts.get(rc.name ?? '');
    const next = new Map<string, Buffer>();
    const bytes = Buffer.concat([
      encodeMessage('envoy.config.route.v3.RouteConfiguration', head),
      ...(vhs ?? []).flatMap((vh) => field(ROUTE_CONFIGURATION_VIRTUAL_HOSTS, this.virtualHost(vh, previous, next))),
    ]);
    this.hosts.set(rc.name ?? '', next);
    return bytes;
  }
}
