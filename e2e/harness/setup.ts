// The usual frame of a suite: a cluster and one controller, started before and stopped after.
import { afterAll, beforeAll } from '@jest/globals';
import { Cluster, type ClusterOptions } from './cluster.js';
import { Controller } from './controller.js';

export interface Env {
  cluster: Cluster;
  controller: Controller;
}

/**
 * Starts a cluster and a ready controller for the suite; `prepare` runs before the controller, `flags` go to it,
 * `cluster` to Cluster.start.
 */
export function clusterWithController(
  prepare?: (c: Cluster) => Promise<void>,
  flags: string[] = [],
  cluster: ClusterOptions = {},
): Env {
  const env = {} as Env;
  beforeAll(async () => {
    env.cluster = await Cluster.start(cluster);
    await prepare?.(env.cluster);
    env.controller = new Controller(env.cluster.controllerKubeconfig, flags);
    await env.controller.start();
    await env.controller.ready();
  }, 600_000);
  afterAll(async () => {
    await env.controller?.stop();
    await env.cluster?.stop();
  }, 30_000);
  return env;
}
