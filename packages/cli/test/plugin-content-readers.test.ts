// Who may read a plugin's content from the controller over TLS: the Gateways whose configuration runs it,
// on a route or before routing (a GEP-5224 ExtensionRef listener filter).
import { describe, expect, it } from '@jest/globals';
import type { GatewayIR } from '@turnpike/api';
import { contentReaders } from '../src/plugin-serving.js';

const SHA = 'f'.repeat(64);
const plugin = { name: 'infra/big', type: 'wasm' as const, sha256: SHA, url: 'https://ctl:18002/plugins/t.wasm' };

function gatewayIR(name: string, preRouting: GatewayIR['ports'][number]['listeners'][number]['preRouting']): GatewayIR {
  return {
    name,
    namespace: 'infra',
    ports: [
      {
        name: 'tcp-80',
        port: 80,
        listenPort: 10080,
        transport: 'tcp',
        listeners: [
          {
            name: `Gateway/infra/${name}/l`,
            protocol: 'HTTP',
            virtualHosts: [],
            ...(preRouting ? { preRouting } : {}),
          },
        ],
      },
    ],
    clusters: [],
    secrets: [],
  };
}

describe('plugin content readers', () => {
  it('a Gateway whose listener runs the plugin before routing may read it; another may not', () => {
    const readers = contentReaders([
      ['infra/guarded', gatewayIR('guarded', [{ type: 'ExtensionRef', plugin }])],
      ['infra/open', gatewayIR('open', undefined)],
    ]);
    expect([...(readers.get(SHA) ?? [])]).toEqual(['infra/guarded']);
  });
});
