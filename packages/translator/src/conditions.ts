// Condition builders. Positive-polarity conditions (Accepted, ResolvedRefs, Programmed) are always
// written; negative ones (Conflicted, PartiallyInvalid, OverlappingTLSConfig) only when True.
// lastTransitionTime is not set here: the translator has no clock, the status writer adds it.
import type { Condition } from '@turnpike/api';
import type { Reason } from './reasons.js';

export type Status = Condition['status'];

export function condition(
  type: string,
  status: Status | boolean,
  reason: Reason,
  message: string,
  generation: number | undefined,
): Condition {
  const s: Status = typeof status === 'boolean' ? (status ? 'True' : 'False') : status;
  const c: Condition = { type, status: s, reason, message };
  if (generation !== undefined) c.observedGeneration = generation;
  return c;
}

/** Sorts by type so output does not depend on the order rules were evaluated in. */
export function sortConditions(conditions: Condition[]): Condition[] {
  return conditions.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

/** First problem wins: a list of [ok, reason, message] checks folded into one condition. */
export interface Problem {
  reason: Reason;
  message: string;
}
