// The composition root's gate: translations made before the completing sources (the plugin fetch
// worker) synced reach only the sinks that feed those sources; the others start at the first
// complete translation, told every key of it, and from then on only what changed.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '@turnpike/api';
import { synced, upsert, type EngineOutput, type SourceEvent } from '@turnpike/engine';
import { Subject } from 'rxjs';
import { startController, type Sink } from '../src/controller.js';

const GW = 'gateway.networking.k8s.io/v1';
const gatewayClass: KubeObject = {
  apiVersion: GW,
  kind: 'GatewayClass',
  metadata: { name: 'turnpike' },
  spec: { controllerName: 'turnpike.dev/gateway-controller' },
} as KubeObject;
const gateway = (name: string): KubeObject =>
  ({
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name, namespace: 'infra' },
    spec: { gatewayClassName: 'turnpike', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  }) as KubeObject;

function recordingSink(name: string, beforeComplete: boolean): Sink & { seen: EngineOutput[] } {
  const seen: EngineOutput[] = [];
  return { name, beforeComplete, seen, accept: (out) => void seen.push(out) };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 60));

describe('startController', () => {
  it('holds incomplete translations from the sinks that do not feed the completing sources', async () => {
    const files = new Subject<SourceEvent>();
    const plugins = new Subject<SourceEvent>();
    const worker = recordingSink('plugins', true);
    const proxies = recordingSink('xds', false);
    const controller = startController({
      sources: [files, plugins],
      sourceNames: ['dir'],
      completeAfter: ['plugins'],
      sinks: [worker, proxies],
      quietMs: 5,
      maxDelayMs: 20,
      onError: (where, e) => {
        throw new Error(`${where}: ${e.message}`);
      },
    });
    try {
      files.next(upsert('dir', gatewayClass));
      files.next(upsert('dir', gateway('a')));
      files.next(synced('dir'));
      await settle();
      expect(worker.seen.map((o) => o.complete)).toEqual([false]);
      expect(proxies.seen).toEqual([]);

      // Another change before the plugins synced: still only the worker hears of it.
      files.next(upsert('dir', gateway('b')));
      await settle();
      expect(worker.seen.map((o) => o.complete)).toEqual([false, false]);
      expect(worker.seen[1]!.changes.statuses).toEqual(['Gateway/infra/b']);
      expect(proxies.seen).toEqual([]);

      // Synced translates again; the held sink gets that output with every key, both Gateways.
      plugins.next(synced('plugins'));
      await settle();
      expect(proxies.seen.map((o) => o.complete)).toEqual([true]);
      expect(proxies.seen[0]!.changes.statuses).toEqual([
        'Gateway/infra/a',
        'Gateway/infra/b',
        'GatewayClass//turnpike',
      ]);
      expect(proxies.seen[0]!.changes.gateways).toEqual(['infra/a', 'infra/b']);

      // From then on both see the same changes.
      files.next(upsert('dir', { ...gateway('a'), metadata: { name: 'a', namespace: 'infra', generation: 2 } }));
      await settle();
      expect(proxies.seen).toHaveLength(2);
      expect(proxies.seen[1]!.changes.statuses).toEqual(['Gateway/infra/a']);
      expect(worker.seen.at(-1)).toBe(proxies.seen[1]);
    } finally {
      await controller.stop();
    }
  });
});
