// A log written by a controller that placed every proxy in its own namespace replays the same: the
// header's proxyNamespace reaches the translator of replay --verify, bisect and the console.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { LOG_FORMAT, LOG_VERSION, outputHash, synced, upsert, type ParsedLog, type WatchEvent } from '@turnpike/engine';
import { generatedName, snapshotFromObjects, Translator } from '@turnpike/translator';
import { stateAt, verifyLog } from '../src/log-state.js';

const CLASS: KubeObject = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'GatewayClass',
  metadata: { name: 'tp' },
  spec: { controllerName: 'turnpike.dev/gateway-controller' },
};
const GATEWAY: KubeObject = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'web', namespace: 'edge' },
  spec: { gatewayClassName: 'tp', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
};
// The proxies' Service in the controller's namespace, with the address the Gateway reports.
const SERVICE: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: generatedName('edge', 'web', 'turnpike-system'), namespace: 'turnpike-system' },
  spec: { clusterIP: '10.96.0.7', ports: [] },
} as KubeObject;

function logOf(proxyNamespace: string | undefined): ParsedLog {
  const at = '2026-12-04T00:00:00.000Z';
  const events: WatchEvent[] = [CLASS, GATEWAY, SERVICE].map((object, i) => ({
    seq: i + 1,
    at,
    ...upsert('kube', object),
  }));
  events.push({ seq: 4, at, ...synced('kube') });
  // What the controller computed, with its placement.
  const written = new Translator({ proxyNamespace: 'turnpike-system' }).translate(
    snapshotFromObjects([CLASS, GATEWAY, SERVICE]),
  );
  return {
    header: {
      format: LOG_FORMAT,
      version: LOG_VERSION,
      createdAt: at,
      quietMs: 100,
      maxDelayMs: 500,
      ...(proxyNamespace !== undefined ? { proxyNamespace } : {}),
    },
    events,
    outputs: [{ type: 'output', seq: 4, hash: outputHash(written) }],
  };
}

describe('event log and proxy placement', () => {
  it("replay translates with the header's proxy namespace: verify passes, the state has the proxies there", () => {
    const log = logOf('turnpike-system');
    expect(verifyLog(log).divergence).toBeUndefined();
    const state = stateAt(log);
    expect(state.result.infraIR.gateways.get('edge/web')?.namespace).toBe('turnpike-system');
    expect((state.result.statuses.get('Gateway/edge/web') as { addresses?: unknown }).addresses).toEqual([
      { type: 'IPAddress', value: '10.96.0.7', routability: 'Cluster' },
    ]);
  });

  it('without it (proxies beside their Gateways) the same events give another output, which verify reports', () => {
    expect(verifyLog(logOf(undefined)).divergence).toBeDefined();
  });
});
