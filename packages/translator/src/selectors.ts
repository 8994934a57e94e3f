// Label selector evaluation (metav1.LabelSelector semantics).
import type { LabelSelector } from '@turnpike/api';

export function matchesSelector(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const val = l[e.key];
    switch (e.operator) {
      case 'In': if (!has || !(e.values ?? []).includes(val as string)) return false; break;
      case 'NotIn': if (has && (e.values ?? []).includes(val as string)) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: return false;
    }
  }
  return true;
}
