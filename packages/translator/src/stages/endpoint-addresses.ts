// Endpoint addresses a proxy must never be sent to. Whoever may write an EndpointSlice for a Service a
// route sends to chooses where the Gateway's proxy connects: listing 127.0.0.1:19000 would hand the
// requests of that route to the proxy's own admin (/config_dump, /quitquitquit), 127.0.0.1:19003 to its
// drain helper, which trusts loopback; 169.254.169.254 is a cloud's metadata service. Such addresses are
// the proxy's own or its node's, never a backend's, and are left out with a warning naming the slice.
import { isIPv4, isIPv6 } from 'node:net';

/** Why the proxy must not connect to `address`; undefined for an address a backend can have. */
export function unroutableAddress(address: string): string | undefined {
  if (typeof address !== 'string') return 'not an IP address';
  if (isIPv4(address)) return ipv4Reason(address.split('.').map(Number));
  // Zones (fe80::1%eth0), hostnames ("localhost") and anything else an IP parser refuses: EDS takes IPs only.
  if (!isIPv6(address) || address.includes('%')) return 'not an IP address';
  const words = ipv6Words(address);
  if (words.slice(0, 5).every((w) => w === 0)) {
    // ::ffff:a.b.c.d (IPv4-mapped) is the IPv4 address itself; ::a.b.c.d (IPv4-compatible, deprecated),
    // :: and ::1 are never a backend's.
    if (words[5] === 0xffff) return ipv4Reason([words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff]);
    if (words[5] === 0) {
      if (words[6] === 0 && words[7] === 0) return 'unspecified';
      if (words[6] === 0 && words[7] === 1) return 'loopback';
      return 'IPv4-compatible (deprecated)';
    }
  }
  if ((words[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((words[0]! & 0xff00) === 0xff00) return 'multicast';
  return undefined;
}

function ipv4Reason([a, b]: number[]): string | undefined {
  if (a === 0) return 'unspecified ("this network", 0.0.0.0/8)';
  if (a === 127) return 'loopback';
  if (a === 169 && b === 254) return 'link-local';
  if (a! >= 224 && a! <= 239) return 'multicast';
  if (a! >= 240) return 'reserved or broadcast';
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (one isIPv6 accepts). */
function ipv6Words(address: string): number[] {
  let text = address;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [, a, b, c, d] = v4.map(Number);
    text = `${text.slice(0, v4.index)}${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (s: string) => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const hi = parse(head);
  const lo = tail === undefined ? [] : parse(tail);
  return [...hi, ...new Array<number>(8 - hi.length - lo.length).fill(0), ...lo];
}
