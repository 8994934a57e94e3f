// The API server's OpenAPI checks of a custom resource, on create: nulls pruned, defaults applied, then
// every value checked against its schema (type, enum, lengths, pattern, bounds, list uniqueness,
// required and unknown fields), and the CEL rules of each node whose own checks passed.
import { isIPv4, isIPv6 } from 'node:net';
import type { CrdSchema } from './crd-schemas.js';
import { checkCelRules } from './cel-validation.js';
import { matchesPattern } from './patterns.js';

/** One problem, at a field path written as kubectl writes it (`spec.listeners[0].port`). */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * The value with absent fields that have a default filled in and nulls pruned, recursively (defaults
 * are complete as written). Copy on write: what needs no change is returned as it is, so the input is
 * never changed and a manifest with nothing to default costs no copy.
 */
export function withDefaults(value: unknown, schema: CrdSchema): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!items) return value;
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = withDefaults(item, items);
      if (next !== item) (out ??= [...value])[i] = next;
    });
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  const set = (name: string, next: unknown) => {
    out ??= { ...value };
    if (next === undefined) delete out[name];
    else out[name] = next;
  };
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const current = value[name];
    if (current === null && !child.nullable) set(name, child.default);
    else if (current === undefined && child.default !== undefined) set(name, child.default);
    const present = (out ?? value)[name];
    if (present === undefined) continue;
    const next = withDefaults(present, child);
    if (next !== present) set(name, next);
  }
  const extra = schema.additionalProperties;
  if (typeof extra === 'object') {
    for (const name of Object.keys(value)) {
      if (schema.properties?.[name]) continue;
      const next = withDefaults(value[name], extra);
      if (next !== value[name]) set(name, next);
    }
  }
  return out ?? value;
}

/** Checks a (defaulted) value against its schema; returns every problem found. */
export function validateValue(value: unknown, schema: CrdSchema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  walk(value, schema, path, errors, true);
  return errors;
}

/**
 * `structural` is false inside oneOf/anyOf/allOf/not: those branches only constrain values (as in a
 * structural schema), they do not declare fields, so a field they do not name is not unknown.
 */
function walk(value: unknown, schema: CrdSchema, path: string, errors: FieldError[], structural: boolean): void {
  const before = errors.length;
  const fail = (message: string) => errors.push({ path, message });
  if (value === null) {
    if (!schema.nullable) fail('must not be null');
    return;
  }
  if (!hasType(value, schema)) {
    fail(`must be ${article(schema.type!)}, not ${describe(value)}`);
    return;
  }
  if (schema.enum && !schema.enum.some((allowed) => allowed === value)) {
    fail(`${show(value)} is not one of ${schema.enum.map(show).join(', ')}`);
  }
  if (typeof value === 'string') checkString(value, schema, fail);
  else if (typeof value === 'number') checkNumber(value, schema, fail);
  else if (Array.isArray(value)) checkArray(value, schema, path, errors, structural);
  else if (isPlainObject(value)) checkObject(value, schema, path, errors, structural);
  const branch = (part: CrdSchema) => {
    const found: FieldError[] = [];
    walk(value, { ...part, type: part.type ?? schema.type }, path, found, false);
    return found;
  };
  if (schema.oneOf) errors.push(...oneOfErrors(schema.oneOf.map(branch), path));
  if (schema.anyOf) errors.push(...anyOfErrors(schema.anyOf.map(branch)));
  for (const part of schema.allOf ?? []) errors.push(...branch(part));
  if (schema.not && branch(schema.not).length === 0) fail('is in a form that is not allowed');
  // CEL rules see only values whose own schema holds, as the API server's rules can assume.
  if (errors.length === before && schema['x-kubernetes-validations']) {
    errors.push(...checkCelRules(value, schema, path));
  }
}

/** None of the forms holds: say why the nearest one does not; more than one: say so. */
function oneOfErrors(results: FieldError[][], path: string): FieldError[] {
  const holding = results.filter((r) => r.length === 0).length;
  if (holding === 1) return [];
  if (holding > 1) return [{ path, message: 'matches more than one of the forms allowed here' }];
  return results.reduce((nearest, r) => (r.length < nearest.length ? r : nearest));
}

/** None of the forms holds: each form's first reason, joined with "or". */
function anyOfErrors(results: FieldError[][]): FieldError[] {
  if (results.some((r) => r.length === 0)) return [];
  const first = results.map((r) => r[0]!);
  return [{ path: first[0]!.path, message: first.map((e) => e.message).join(' or ') }];
}

function checkString(value: string, schema: CrdSchema, fail: (message: string) => void): void {
  // The API server's order: maxLength, minLength, pattern, stopping at the first that fails; so a
  // pattern never sees a value longer than its field allows.
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    fail(`must be at most ${schema.maxLength} characters long (it is ${length})`);
  } else if (schema.minLength !== undefined && length < schema.minLength) {
    fail(schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters long`);
  } else if (schema.pattern !== undefined && !matchesPattern(schema.pattern, value)) {
    fail(`${show(value)} does not match ${schema.pattern}`);
  }
  if (schema.format === 'ipv4' && !isIPv4(value)) fail(`${show(value)} is not an IPv4 address`);
  if (schema.format === 'ipv6' && !isIPv6(value)) fail(`${show(value)} is not an IPv6 address`);
  if (schema.format === 'date-time' && Number.isNaN(Date.parse(value)))
    fail(`${show(value)} is not an RFC 3339 date-time`);
}

function checkNumber(value: number, schema: CrdSchema, fail: (message: string) => void): void {
  if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)) {
    fail(`${value} is below the minimum ${schema.exclusiveMinimum ? 'above ' : ''}${schema.minimum}`);
  }
  if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)) {
    fail(`${value} is above the maximum ${schema.exclusiveMaximum ? 'below ' : ''}${schema.maximum}`);
  }
}

function checkArray(
  value: unknown[],
  schema: CrdSchema,
  path: string,
  errors: FieldError[],
  structural: boolean,
): void {
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errors.push({ path, message: `must have at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'}` });
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errors.push({ path, message: `must have at most ${schema.maxItems} items (it has ${value.length})` });
  }
  if (schema.items) value.forEach((item, i) => walk(item, schema.items!, `${path}[${i}]`, errors, structural));
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set' || listType === 'map') {
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Map<string, number>();
    value.forEach((item, i) => {
      const identity =
        listType === 'set'
          ? JSON.stringify(item)
          : JSON.stringify(keys.map((k) => (item as Record<string, unknown>)?.[k]));
      const first = seen.get(identity);
      if (first === undefined) seen.set(identity, i);
      else {
        const what = listType === 'set' ? 'value' : keys.join(', ');
        errors.push({ path: `${path}[${i}]`, message: `duplicate ${what}: the same as ${path}[${first}]` });
      }
    });
  }
}

function checkObject(
  value: Record<string, unknown>,
  schema: CrdSchema,
  path: string,
  errors: FieldError[],
  structural: boolean,
): void {
  const at = (name: string) => (path ? `${path}.${name}` : name);
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) errors.push({ path: at(name), message: 'is required' });
  }
  const count = Object.keys(value).length;
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    errors.push({ path, message: `must have at least ${schema.minProperties} entries` });
  }
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    errors.push({ path, message: `must have at most ${schema.maxProperties} entries (it has ${count})` });
  }
  const extra = schema.additionalProperties;
  for (const [name, child] of Object.entries(value)) {
    if (child === undefined) continue;
    const known = schema.properties?.[name];
    if (known) walk(child, known, at(name), errors, structural);
    else if (typeof extra === 'object') walk(child, extra, at(name), errors, structural);
    else if (structural && !schema['x-kubernetes-preserve-unknown-fields'] && extra !== true && schema.properties) {
      errors.push({ path: at(name), message: 'unknown field' });
    }
  }
}

function hasType(value: unknown, schema: CrdSchema): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || Number.isInteger(value);
  switch (schema.type) {
    case undefined:
      return true;
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === schema.type;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isPlainObject(value)) return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? `the number ${value}` : `the fraction ${value}`;
  return `${typeof value === 'string' ? 'the string' : 'the'} ${show(value)}`;
}

function article(type: string): string {
  return type === 'integer' || type === 'object' || type === 'array'
    ? `an ${type === 'array' ? 'list' : type}`
    : `a ${type}`;
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}
