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
  return [Buffer.from([...varint((fieldNumber << 3) | 2), ...varint(bytes.length)]), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)];
}

export class RouteConfigurationEncoder {
  private readonly routes = new WeakMap<Route, Buffer>();

  private route(r: Route): Buffer {
    let b = this.routes.get(r);
    if (!b) this.routes.set(r, (b = encodeMessage('envoy.config.route.v3.Route', r)));
    return b;
  }

  private virtualHost(vh: VirtualHost): Buffer {
    const { routes, ...head } = vh;
    return Buffer.concat([encodeMessage('envoy.config.route.v3.VirtualHost', head), ...(routes ?? []).flatMap((r) => field(VIRTUAL_HOST_ROUTES, this.route(r)))]);
  }

  encode(rc: RouteConfiguration): Buffer {
    const { virtual_hosts: hosts, ...head } = rc;
    return Buffer.concat([encodeMessage('envoy.config.route.v3.RouteConfiguration', head), ...(hosts ?? []).flatMap((vh) => field(ROUTE_CONFIGURATION_VIRTUAL_HOSTS, this.virtualHost(vh)))]);
  }
}
