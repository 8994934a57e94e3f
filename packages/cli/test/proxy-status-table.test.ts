// `turnpike proxy-status --controller`: a debug read (`turnpike proxy-config`) listed by /debug/proxies
// is shown as such, with its peer, and never as a proxy behind or in sync.
import { describe, expect, it } from '@jest/globals';
import { TYPE, type ProxyStream } from '@turnpike/xds';
import { proxyStatusTable } from '../src/commands/proxy-status.js';

const stream = (over: Partial<ProxyStream>): ProxyStream => ({
  node: 'a/gw',
  id: 'envoy',
  protocol: 'sotw',
  peer: '10.0.0.7:41234',
  connectedAt: '2026-12-06T04:00:00.000Z',
  acked: { [TYPE.listener]: 'abcdef0123456789' },
  pending: {},
  ...over,
});

describe('proxy-status table', () => {
  it('security: names a debug read and its peer', () => {
    const table = proxyStatusTable([
      stream({}),
      stream({ id: 'proxy-config', peer: '10.0.0.9:5555', acked: {}, debug: true }),
    ]);
    const [, proxy, debug] = table.trimEnd().split('\n');
    expect(proxy).toContain('in sync');
    expect(debug).toContain('proxy-config');
    expect(debug).toContain('debug read from 10.0.0.9:5555');
  });
});
