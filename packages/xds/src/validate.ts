// An offline checker of Envoy's protoc-gen-validate rules (the `(validate.rules)` and
// `(validate.required)` annotations in Envoy's protos), applied to the JSON-shaped resources we
// emit, through every nested Any. No Envoy binary can run here; this catches the field-level
// mistakes Envoy would NACK (empty names, missing required messages, out-of-range numbers).
import protobuf from 'protobufjs';
import { envoyRoot, messageType } from './proto-root.js';

type Rules = Record<string, Record<string, unknown>>;

/**
 * Where the walk is: the name it was given, then a step per level (a field, `.name`, or `<Type>` into an
 * Any, or a list index), pushed on the way down and popped on the way up. It is written out only when
 * something there is wrong: a walk through every route of a cold start visits millions of fields, and
 * formatting (or even allocating) each one's path cost more than checking it.
 */
let root = '';
const path: (string | number)[] = [];

function at(): string {
  let out = root;
  for (const s of path) out += typeof s === 'number' ? `[${s}]` : s;
  return out;
}

function fieldRules(field: protobuf.Field): { rules?: Rules; required?: boolean } {
  const out: { rules?: Rules; required?: boolean } = {};
  for (const o of (field.parsedOptions ?? []) as Record<string, unknown>[]) {
    if (o['(validate.rules)']) out.rules = o['(validate.rules)'] as Rules;
  }
  return out;
}

function oneofRequired(o: protobuf.OneOf): boolean {
  return ((o.parsedOptions ?? []) as Record<string, unknown>[]).some((x) => x['(validate.required)'] === true);
}

const WRAPPERS = new Set([
  'google.protobuf.UInt32Value',
  'google.protobuf.UInt64Value',
  'google.protobuf.Int32Value',
  'google.protobuf.Int64Value',
  'google.protobuf.DoubleValue',
  'google.protobuf.FloatValue',
  'google.protobuf.BoolValue',
  'google.protobuf.StringValue',
]);

function durationNanos(d: unknown): number | undefined {
  if (typeof d !== 'object' || d === null) return undefined;
  const x = d as { seconds?: string | number; nanos?: number };
  return Number(x.seconds ?? 0) * 1e9 + Number(x.nanos ?? 0);
}

/** A bound of a numeric rule, as a number; undefined when the rule has none. */
function bound(r: Record<string, unknown>, k: string): number | undefined {
  return r[k] === undefined ? undefined : Number(r[k]);
}

function checkNumber(v: number, r: Record<string, unknown>, errors: string[]): void {
  const gt = bound(r, 'gt');
  const gte = bound(r, 'gte');
  const lt = bound(r, 'lt');
  const lte = bound(r, 'lte');
  const equal = bound(r, 'const');
  if (gt !== undefined && !(v > gt)) errors.push(`${at()}: must be > ${r.gt}, is ${v}`);
  if (gte !== undefined && !(v >= gte)) errors.push(`${at()}: must be >= ${r.gte}, is ${v}`);
  if (lt !== undefined && !(v < lt)) errors.push(`${at()}: must be < ${r.lt}, is ${v}`);
  if (lte !== undefined && !(v <= lte)) errors.push(`${at()}: must be <= ${r.lte}, is ${v}`);
  if (Array.isArray(r.in) && !r.in.map(Number).includes(v)) errors.push(`${at()}: must be one of ${r.in.join(', ')}`);
  if (equal !== undefined && v !== equal) errors.push(`${at()}: must be ${r.const}`);
}

/** Characters as PGV counts them (code points), without making an array of them. */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

// PGV's `pattern` is RE2; the few in Envoy's protos (RouteMatch.path_separated_prefix's among them) use
// only what RE2 and JavaScript read alike.
const patterns = new Map<string, RegExp>();
function patternOf(pattern: string): RegExp {
  let re = patterns.get(pattern);
  if (!re) patterns.set(pattern, (re = new RegExp(pattern, 'u')));
  return re;
}

const NUMERIC_RULES = ['uint32', 'uint64', 'int32', 'int64', 'double', 'float', 'sint32', 'fixed32'];

function checkScalar(value: unknown, rules: Rules, errors: string[]): void {
  if (rules.string && typeof value === 'string') {
    const r = rules.string;
    if (r.min_len !== undefined && codePoints(value) < Number(r.min_len))
      errors.push(`${at()}: must have at least ${r.min_len} character(s)`);
    if (r.max_len !== undefined && codePoints(value) > Number(r.max_len))
      errors.push(`${at()}: must have at most ${r.max_len} character(s)`);
    if (r.min_bytes !== undefined && Buffer.byteLength(value) < Number(r.min_bytes))
      errors.push(`${at()}: must have at least ${r.min_bytes} byte(s)`);
    if (r.max_bytes !== undefined && Buffer.byteLength(value) > Number(r.max_bytes))
      errors.push(`${at()}: must have at most ${r.max_bytes} byte(s)`);
    if (typeof r.prefix === 'string' && !value.startsWith(r.prefix))
      errors.push(`${at()}: must start with ${r.prefix}`);
    if (typeof r.pattern === 'string' && !patternOf(r.pattern).test(value))
      errors.push(`${at()}: "${value}" does not match ${r.pattern}`);
    if (r.well_known_regex === 'HTTP_HEADER_NAME' && !/^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/.test(value))
      errors.push(`${at()}: "${value}" is not a valid HTTP header name`);
    if (r.well_known_regex === 'HTTP_HEADER_VALUE' && /[\0\r\n]/.test(value))
      errors.push(`${at()}: header value must not contain NUL, CR or LF`);
    if (Array.isArray(r.in) && !r.in.includes(value)) errors.push(`${at()}: must be one of ${r.in.join(', ')}`);
  }
  if (typeof value !== 'number' && typeof value !== 'string') return;
  for (const t of NUMERIC_RULES) if (rules[t]) checkNumber(Number(value), rules[t]!, errors);
}

export function validateMessage(typeName: string, value: unknown, where = typeName): string[] {
  const errors: string[] = [];
  root = where;
  path.length = 0;
  walk(messageType(typeName), value, errors);
  return errors;
}

/** An Any's message type by URL, looked up once; undefined when Envoy's protos have none. */
const anyTypes = new Map<string, { type: protobuf.Type; step: string } | undefined>();
function anyType(url: string): { type: protobuf.Type; step: string } | undefined {
  if (anyTypes.has(url)) return anyTypes.get(url);
  const found = envoyRoot().lookup(url.slice(url.lastIndexOf('/') + 1));
  const known = found instanceof protobuf.Type ? { type: found, step: `<${found.name}>` } : undefined;
  anyTypes.set(url, known);
  return known;
}

/** `inAny`: the value is an Any's JSON form, whose `@type` names its type and is no field of it. */
function walk(type: protobuf.Type, value: unknown, errors: string[], inAny = false): void {
  if (typeof value !== 'object' || value === null) {
    errors.push(`${at()}: expected a ${type.fullName.slice(1)} message`);
    return;
  }
  const obj = value as Record<string, unknown>;
  const plan = planOf(type);
  if (plan.any) {
    const url = obj['@type'];
    if (typeof url !== 'string') {
      if (typeof obj.type_url !== 'string') errors.push(`${at()}: Any without @type`);
      return;
    }
    const inner = anyType(url);
    if (!inner) {
      errors.push(`${at()}: unknown Any type ${url}`);
      return;
    }
    path.push(inner.step);
    walk(inner.type, obj, errors, true);
    path.pop();
    return;
  }
  for (const k in obj) {
    const fp = plan.fields.get(k);
    if (!fp) {
      if (inAny && k === '@type') continue;
      if (!type.oneofs?.[k]) errors.push(`${at()}.${k}: no such field in ${type.name}`);
      continue;
    }
    const v = obj[k];
    if (v === undefined || v === null) continue;
    path.push(fp.step);
    checkField(fp, v, errors);
    path.pop();
  }
  for (const a of plan.whenAbsent) {
    const v = obj[a.name];
    if (v === undefined || v === null) errors.push(`${at()}.${a.name}: ${a.message}`);
  }
  for (const o of plan.oneofs) {
    let count = 0;
    for (const name of o.names) if (obj[name] !== undefined && obj[name] !== null) count++;
    if (count === 1 || (count === 0 && !o.required)) continue;
    const set = o.names.filter((name) => obj[name] !== undefined && obj[name] !== null);
    // A oneof holds one field on the wire: the JSON we build could name two, and the encoder would keep the last.
    if (count > 1) errors.push(`${at()}: only one of ${set.join(', ')} may be set`);
    else errors.push(`${at()}: one of ${o.names.join(', ')} is required`);
  }
}

/** Validates every resource of a set, naming each by its type and name. */
export function validateResources(resources: {
  listeners: object[];
  routes: object[];
  clusters: object[];
  endpoints: object[];
  secrets: object[];
}): string[] {
  const errors: string[] = [];
  const check = (type: string, list: object[], nameOf: (o: Record<string, unknown>) => unknown) => {
    for (const r of list)
      errors.push(
        ...validateMessage(
          type,
          r,
          `${type.slice(type.lastIndexOf('.') + 1)} ${String(nameOf(r as Record<string, unknown>))}`,
        ),
      );
  };
  check('envoy.config.listener.v3.Listener', resources.listeners, (o) => o.name);
  check('envoy.config.route.v3.RouteConfiguration', resources.routes, (o) => o.name);
  check('envoy.config.cluster.v3.Cluster', resources.clusters, (o) => o.name);
  check('envoy.config.endpoint.v3.ClusterLoadAssignment', resources.endpoints, (o) => o.cluster_name);
  check('envoy.extensions.transport_sockets.tls.v3.Secret', resources.secrets, (o) => o.name);
  return errors;
}

interface FieldPlan {
  field: protobuf.Field;
  rules: Rules | undefined;
  /** `.name`: this field's step in a path. */
  step: string;
  /** The message's full name without the leading dot, when the field holds a message. */
  message?: string;
}

interface TypePlan {
  /** google.protobuf.Any: checked as the message its @type names. */
  any: boolean;
  fields: Map<string, FieldPlan>;
  oneofs: { names: string[]; required: boolean }[];
  /** What must be said of a field that is absent (required, or a minimum count or length). */
  whenAbsent: { name: string; message: string }[];
}

/** Per message type, its fields' rules read once (walking reads only the fields a value sets). */
const plans = new WeakMap<protobuf.Type, TypePlan>();

function planOf(type: protobuf.Type): TypePlan {
  const known = plans.get(type);
  if (known) return known;
  const plan: TypePlan = {
    any: type.fullName === '.google.protobuf.Any',
    fields: new Map(),
    oneofs: type.oneofsArray.map((o) => ({ names: o.fieldsArray.map((x) => x.name), required: oneofRequired(o) })),
    whenAbsent: [],
  };
  for (const field of type.fieldsArray) {
    field.resolve();
    const { rules } = fieldRules(field);
    const message = field.resolvedType instanceof protobuf.Type ? field.resolvedType.fullName.slice(1) : undefined;
    plan.fields.set(field.name, { field, rules, step: `.${field.name}`, ...(message ? { message } : {}) });
    // Rules on a oneof member apply only when that member is the one set.
    if (field.partOf) continue;
    const required = (r: unknown) => !!r && (r as { required?: boolean }).required === true;
    if (required(rules?.message) || required(rules?.duration) || required(rules?.any))
      plan.whenAbsent.push({ name: field.name, message: 'is required' });
    else if (rules?.repeated && Number((rules.repeated as { min_items?: number }).min_items ?? 0) > 0)
      plan.whenAbsent.push({
        name: field.name,
        message: `must have at least ${(rules.repeated as { min_items: number }).min_items} item(s)`,
      });
    else if (rules?.string && Number((rules.string as { min_len?: number }).min_len ?? 0) > 0)
      plan.whenAbsent.push({
        name: field.name,
        message: `must have at least ${(rules.string as { min_len: number }).min_len} character(s)`,
      });
  }
  plans.set(type, plan);
  return plan;
}

/** The rules of one field that is set. */
/** Checks a field's value; `path` ends with the field's step. */
function checkField({ field, rules, message }: FieldPlan, v: unknown, errors: string[]): void {
  if (field.repeated) {
    const list = v as unknown[];
    if (!Array.isArray(list)) {
      errors.push(`${at()}: must be a list`);
      return;
    }
    const rr = rules?.repeated as { min_items?: number; max_items?: number; items?: Rules } | undefined;
    if (rr?.min_items !== undefined && list.length < Number(rr.min_items))
      errors.push(`${at()}: must have at least ${rr.min_items} item(s)`);
    if (rr?.max_items !== undefined && list.length > Number(rr.max_items))
      errors.push(`${at()}: must have at most ${rr.max_items} item(s)`);
    const itemType = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (!itemType && !rr?.items) return;
    for (let i = 0; i < list.length; i++) {
      path.push(i);
      if (itemType) walk(itemType, list[i], errors);
      else checkScalar(list[i], rr!.items!, errors);
      path.pop();
    }
    return;
  }
  if (field.map) return;
  if (field.resolvedType instanceof protobuf.Type) {
    const full = message!;
    if (full === 'google.protobuf.Duration' && rules?.duration) {
      const n = durationNanos(v);
      const r = rules.duration as Record<string, unknown>;
      if (n !== undefined && r.gt !== undefined && !(n > (durationNanos(r.gt) ?? 0)))
        errors.push(`${at()}: must be a positive duration`);
      if (n !== undefined && r.gte !== undefined && !(n >= (durationNanos(r.gte) ?? 0)))
        errors.push(`${at()}: must be at least ${JSON.stringify(r.gte)}`);
      return;
    }
    if (WRAPPERS.has(full) && rules) {
      path.push('.value');
      checkScalar((v as { value?: unknown }).value, rules, errors);
      path.pop();
      return;
    }
    walk(field.resolvedType, v, errors);
  } else if (field.resolvedType instanceof protobuf.Enum) {
    const e = field.resolvedType;
    const defined = typeof v === 'string' ? v in e.values : Object.values(e.values).includes(Number(v));
    if (rules?.enum && (rules.enum as { defined_only?: boolean }).defined_only && !defined)
      errors.push(`${at()}: ${String(v)} is not a ${e.name} value`);
    if (!defined && typeof v === 'string') errors.push(`${at()}: ${v} is not a ${e.name} value`);
  } else if (rules) {
    checkScalar(v, rules, errors);
  }
}
