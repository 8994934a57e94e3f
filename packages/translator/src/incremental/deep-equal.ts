// Structural equality of JSON-like values (undefined members are absent), used to keep the identity
// of an unchanged object or result so the stages after it see no change.
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const k in ra) {
    if (ra[k] === undefined) continue;
    count++;
    if (!deepEqual(ra[k], rb[k])) return false;
  }
  for (const k in rb) if (rb[k] !== undefined) count--;
  return count === 0;
}
