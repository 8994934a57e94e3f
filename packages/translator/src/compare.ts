// Ordering helpers for the Gateway API's default conflict rule: oldest creationTimestamp wins,
// then namespace/name alphabetically.
import type { KubeObject } from '@turnpike/api';

export function compareAge(a: KubeObject, b: KubeObject): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) {
    // An object without a timestamp (not yet stored by an API server) counts as newest.
    if (!ta) return 1;
    if (!tb) return -1;
    const da = Date.parse(ta),
      db = Date.parse(tb);
    if (da !== db && !Number.isNaN(da) && !Number.isNaN(db)) return da - db;
  }
  return compareNames(a, b);
}

export function compareNames(a: KubeObject, b: KubeObject): number {
  const na = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
  const nb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Up to this length a list is sorted by insertion, without the copy V8's sort makes. */
const INSERTION_SORT_MAX = 16;

/**
 * The list sorted in place (stably, as Array.prototype.sort), left as it is when it is in order
 * already: V8's sort copies the list first, and most lists the translator sorts (a host's routes, a
 * status's conditions) arrive sorted or are short.
 */
export function sortInPlace<T>(list: T[], compare: (a: T, b: T) => number): T[] {
  for (let i = 1; i < list.length; i++) {
    if (compare(list[i - 1]!, list[i]!) <= 0) continue;
    if (list.length > INSERTION_SORT_MAX) return list.sort(compare);
    // list[0..i) is in order: insert each later element after the last one not greater than it.
    for (let j = i; j < list.length; j++) {
      const item = list[j]!;
      let k = j;
      while (k > 0 && compare(list[k - 1]!, item) > 0) {
        list[k] = list[k - 1]!;
        k--;
      }
      list[k] = item;
    }
    return list;
  }
  return list;
}
