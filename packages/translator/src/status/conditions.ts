// Condition builders. Positive-polarity conditions (Accepted, ResolvedRefs, Programmed) are always
// written; negative ones (Conflicted, PartiallyInvalid, OverlappingTLSConfig) only when True.
// lastTransitionTime is not set here: the translator has no clock, the status writer adds it.
import { sortInPlace } from '../compare.js';
import type { Condition } from '@turnpike/api';
import type { Reason } from './reasons.js';
import { flat } from '../compact-values.js';

export type Status = Condition['status'];

export function condition(
  type: string,
  status: Status | boolean,
  reason: Reason,
  message: string,
  generation: number | undefined,
): Condition {
  const s: Status = typeof status === 'boolean' ? (status ? 'True' : 'False') : status;
  const c: Condition = { type, status: s, reason, message: flat(message) };
  if (generation !== undefined) c.observedGeneration = generation;
  return c;
}

/** Sorts by type so output does not depend on the order rules were evaluated in. */
export function sortConditions(conditions: Condition[]): Condition[] {
  return sortInPlace(conditions, (a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

/** First problem wins: a list of [ok, reason, message] checks folded into one condition. */
export interface Problem {
  reason: Reason;
  message: string;
}

/** What a positive-polarity condition says when nothing is wrong: a reason and message, as a Problem has. */
export type Outcome = Problem;

/** A positive-polarity condition: False with the first problem found, True with `ok` when there is none. */
export function conditionOf(
  type: string,
  problem: Problem | undefined,
  ok: Outcome,
  generation: number | undefined,
): Condition {
  return problem
    ? condition(type, false, problem.reason, problem.message, generation)
    : condition(type, true, ok.reason, ok.message, generation);
}

export const REFS_RESOLVED: Outcome = { reason: 'ResolvedRefs', message: 'All references are resolved' };

/** ResolvedRefs: False with the first reference that does not resolve. */
export function resolvedRefsCondition(problem: Problem | undefined, generation: number | undefined): Condition {
  return conditionOf('ResolvedRefs', problem, REFS_RESOLVED, generation);
}
