// KubeConfig from the bundle the build makes of @kubernetes/client-node (scripts/bundle-client-node.mjs:
// the same code in one module, a start 0.46 s faster), or from the package itself where there is no
// bundle (the tests run from source).
import { existsSync } from 'node:fs';
import type { KubeConfig as KubeConfigClass } from '@kubernetes/client-node';

type ClientNode = { KubeConfig: typeof KubeConfigClass };

const bundle = new URL('./vendor/client-node.js', import.meta.url);
const clientNode: ClientNode = existsSync(bundle)
  ? ((await import(bundle.href)) as ClientNode)
  : await import('@kubernetes/client-node');

export const KubeConfig = clientNode.KubeConfig;
export type KubeConfig = KubeConfigClass;
