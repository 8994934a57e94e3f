// Label selectors (metav1.LabelSelector): validated as the API server validates them, then evaluated.
import type { LabelSelector } from '@turnpike/api';

export function matchesSelector(
  selector: LabelSelector | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const val = l[e.key];
    switch (e.operator) {
      case 'In':
        if (!has || !(e.values ?? []).includes(val as string)) return false;
        break;
      case 'NotIn':
        if (has && (e.values ?? []).includes(val as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

// A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters.
const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const [prefix, name] = slash >= 0 ? [key.slice(0, slash), key.slice(slash + 1)] : [undefined, key];
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))
    return `"${key}": the prefix must be a DNS subdomain`;
  if (!LABEL_NAME.test(name))
    return (
      `"${key}" is not a valid label key (at most 63 alphanumerics, '-', '_' or '.', starting and ending ` +
      `alphanumeric)`
    );
  return undefined;
}

function labelValueProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value))
    return `${JSON.stringify(value)} is not a valid label value`;
  return undefined;
}

/**
 * Why a selector is invalid, naming the field under `field` (as the API server would reject it):
 * bad keys or values, an unknown operator, In/NotIn without values, Exists/DoesNotExist with values.
 */
export function selectorProblem(selector: LabelSelector, field: string): string | undefined {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    const p = labelKeyProblem(k) ?? labelValueProblem(v);
    if (p) return `${field}.matchLabels: ${p}`;
  }
  for (const [i, e] of (selector.matchExpressions ?? []).entries()) {
    const f = `${field}.matchExpressions[${i}]`;
    const key = labelKeyProblem(String(e.key ?? ''));
    if (key) return `${f}.key: ${key}`;
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) return `${f}.values must not be empty with operator ${e.operator}`;
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) return `${f}.values must be empty with operator ${e.operator}`;
        break;
      default:
        return `${f}.operator: "${String(e.operator)}" is not one of In, NotIn, Exists, DoesNotExist`;
    }
    for (const v of values) {
      const p = labelValueProblem(v);
      if (p) return `${f}.values: ${p}`;
    }
  }
  return undefined;
}
