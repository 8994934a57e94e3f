// Structural equality of JSON-like values (undefined members are absent), used to keep the identity
// of an unchanged object or result so the stages after it see no change.
export function deepEqual(a: unknown, b: unknown): boolean {
  return equalExcept(a, b, undefined);
}

/** The same, with members named `ignored` left out at any depth (status-merge.ts: lastTransitionTime). */
export function equalExcept(a: unknown, b: unknown, ignored: string | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equalExcept(a[i], b[i], ignored)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const k in ra) {
    if (ra[k] === undefined || k === ignored) continue;
    count++;
    if (!equalExcept(ra[k], rb[k], ignored)) return false;
  }
  for (const k in rb) if (rb[k] !== undefined && k !== ignored) count--;
  return count === 0;
}
