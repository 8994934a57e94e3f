// Stage 1: GatewayClasses of our controller, their parameters and status. Publishes
// `@class:<name>` when a class's verdict changes, which re-derives that class's Gateways.
import { objectKey, type GatewayClass } from '@turnpike/api';
import { processClass, type ClassResult } from '../gateways/gateway-classes.js';
import { getObject } from '../snapshot.js';
import { deepEqual } from '../incremental/deep-equal.js';
import type { TranslationRun } from '../incremental/run.js';
import { gatewayClassStatus } from '../status/status-gateways.js';

const PIECE = 'class:';
export const classFact = (name: string): string => `@class:${name}`;

export class ClassStage {
  private readonly classes = new Map<string, ClassResult>();

  get(name: string): ClassResult | undefined {
    return this.classes.get(name);
  }

  update(run: TranslationRun): void {
    const dirty = run.dirtyPieces(PIECE);
    for (const c of run.changedObjects('GatewayClass')) dirty.add(c.name);
    for (const name of [...dirty].sort()) {
      const gc = getObject<GatewayClass>(run.inputs.snapshot, 'GatewayClass', undefined, name);
      const before = this.classes.get(name);
      const key = objectKey('GatewayClass', undefined, name);
      if (!gc || gc.spec?.controllerName !== run.controllerName) {
        run.forget(PIECE, name);
        if (before) {
          this.classes.delete(name);
          run.facts.add(classFact(name));
        }
        run.out.statuses.delete(key);
        continue;
      }
      const next = run.compute(PIECE, name, () => processClass(run.inputs, gc));
      if (before && sameClass(before, next)) continue;
      this.classes.set(name, next);
      run.facts.add(classFact(name));
      run.out.statuses.set(key, gatewayClassStatus(next));
    }
  }
}

function sameClass(a: ClassResult, b: ClassResult): boolean {
  return (
    a.model.object === b.model.object &&
    a.model.accepted === b.model.accepted &&
    a.model.proxyConfig === b.model.proxyConfig &&
    a.supportedFeatures === b.supportedFeatures &&
    deepEqual(a.problem, b.problem)
  );
}
