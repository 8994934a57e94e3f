// An offline checker of Envoy's protoc-gen-validate rules (the `(validate.rules)` and
// `(validate.required)` annotations in Envoy's protos), applied to the JSON-shaped resources we
// emit, through every nested Any. No Envoy binary can run here; this catches the field-level
// mistakes Envoy would NACK (empty names, missing required messages, out-of-range numbers).
import protobuf from 'protobufjs';
import { envoyRoot, messageType } from './proto-root.js';

type Rules = Record<string, Record<string, unknown>>;

/**
 * Where a value is, written out only when something there is wrong: a walk through every route of a
 * cold start visits millions of fields, and formatting each one's path cost more than checking it.
 */
type Where = string | { readonly up: Where; readonly step: string | number };

function at(where: Where): string {
  if (typeof where === 'string') return where;
  const steps: string[] = [];
  let w: Where = where;
  while (typeof w !== 'string') {
    steps.push(typeof w.step === 'number' ? `[${w.step}]` : w.step);
    w = w.up;
  }
  return w + steps.reverse().join('');
}

/** One step down: a field (`.name`, or `<Type>` into an Any) or a list index. */
const step = (up: Where, s: string | number): Where => ({ up, step: s });

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

function checkNumber(v: number, r: Record<string, unknown>, place: Where, errors: string[]): void {
  const where = () => at(place);
  const n = (k: string) => (r[k] === undefined ? undefined : Number(r[k]));
  if (n('gt') !== undefined && !(v > n('gt')!)) errors.push(`${where()}: must be > ${r.gt}, is ${v}`);
  if (n('gte') !== undefined && !(v >= n('gte')!)) errors.push(`${where()}: must be >= ${r.gte}, is ${v}`);
  if (n('lt') !== undefined && !(v < n('lt')!)) errors.push(`${where()}: must be < ${r.lt}, is ${v}`);
  if (n('lte') !== undefined && !(v <= n('lte')!)) errors.push(`${where()}: must be <= ${r.lte}, is ${v}`);
  if (Array.isArray(r.in) && !r.in.map(Number).includes(v))
    errors.push(`${where()}: must be one of ${r.in.join(', ')}`);
  if (n('const') !== undefined && v !== n('const')) errors.push(`${where()}: must be ${r.const}`);
}

function checkScalar(value: unknown, rules: Rules, place: Where, errors: string[]): void {
  const where = () => at(place);
  if (rules.string && typeof value === 'string') {
    const r = rules.string;
    if (r.min_len !== undefined && [...value].length < Number(r.min_len))
      errors.push(`${where()}: must have at least ${r.min_len} character(s)`);
    if (r.max_len !== undefined && [...value].length > Number(r.max_len))
      errors.push(`${where()}: must have at most ${r.max_len} character(s)`);
    if (r.min_bytes !== undefined && Buffer.byteLength(value) < Number(r.min_bytes))
      errors.push(`${where()}: must have at least ${r.min_bytes} byte(s)`);
    if (r.max_bytes !== undefined && Buffer.byteLength(value) > Number(r.max_bytes))
      errors.push(`${where()}: must have at most ${r.max_bytes} byte(s)`);
    if (typeof r.prefix === 'string' && !value.startsWith(r.prefix))
      errors.push(`${where()}: must start with ${r.prefix}`);
    if (r.well_known_regex === 'HTTP_HEADER_NAME' && !/^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/.test(value))
      errors.push(`${where()}: "${value}" is not a valid HTTP header name`);
    if (r.well_known_regex === 'HTTP_HEADER_VALUE' && /[\0\r\n]/.test(value))
      errors.push(`${where()}: header value must not contain NUL, CR or LF`);
    if (Array.isArray(r.in) && !r.in.includes(value)) errors.push(`${where()}: must be one of ${r.in.join(', ')}`);
  }
  for (const t of ['uint32', 'uint64', 'int32', 'int64', 'double', 'float', 'sint32', 'fixed32']) {
    if (rules[t] && (typeof value === 'number' || typeof value === 'string'))
      checkNumber(Number(value), rules[t]!, place, errors);
  }
}

export function validateMessage(typeName: string, value: unknown, where = typeName): string[] {
  const errors: string[] = [];
  walk(messageType(typeName), value, where, errors);
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
function walk(type: protobuf.Type, value: unknown, where: Where, errors: string[], inAny = false): void {
  if (typeof value !== 'object' || value === null) {
    errors.push(`${at(where)}: expected a ${type.fullName.slice(1)} message`);
    return;
  }
  const obj = value as Record<string, unknown>;
  const plan = planOf(type);
  if (plan.any) {
    const url = obj['@type'];
    if (typeof url !== 'string') {
      if (typeof obj.type_url !== 'string') errors.push(`${at(where)}: Any without @type`);
      return;
    }
    const inner = anyType(url);
    if (!inner) {
      errors.push(`${at(where)}: unknown Any type ${url}`);
      return;
    }
    walk(inner.type, obj, step(where, inner.step), errors, true);
    return;
  }
  for (const k in obj) {
    const fp = plan.fields.get(k);
    if (!fp) {
      if (inAny && k === '@type') continue;
      if (!type.oneofs?.[k]) errors.push(`${at(where)}.${k}: no such field in ${type.name}`);
      continue;
    }
    const v = obj[k];
    if (v !== undefined && v !== null) checkField(fp, v, step(where, fp.step), errors);
  }
  for (const a of plan.whenAbsent) {
    const v = obj[a.name];
    if (v === undefined || v === null) errors.push(`${at(where)}.${a.name}: ${a.message}`);
  }
  for (const o of plan.oneofs) {
    let count = 0;
    for (const name of o.names) if (obj[name] !== undefined && obj[name] !== null) count++;
    if (count === 1 || (count === 0 && !o.required)) continue;
    const set = o.names.filter((name) => obj[name] !== undefined && obj[name] !== null);
    // A oneof holds one field on the wire: the JSON we build could name two, and the encoder would keep the last.
    if (count > 1) errors.push(`${at(where)}: only one of ${set.join(', ')} may be set`);
    else errors.push(`${at(where)}: one of ${o.names.join(', ')} is required`);
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
function checkField({ field, rules, message }: FieldPlan, v: unknown, f: Where, errors: string[]): void {
  if (field.repeated) {
    const list = v as unknown[];
    if (!Array.isArray(list)) {
      errors.push(`${at(f)}: must be a list`);
      return;
    }
    const rr = rules?.repeated as { min_items?: number; max_items?: number; items?: Rules } | undefined;
    if (rr?.min_items !== undefined && list.length < Number(rr.min_items))
      errors.push(`${at(f)}: must have at least ${rr.min_items} item(s)`);
    if (rr?.max_items !== undefined && list.length > Number(rr.max_items))
      errors.push(`${at(f)}: must have at most ${rr.max_items} item(s)`);
    list.forEach((item, i) => {
      if (field.resolvedType instanceof protobuf.Type) walk(field.resolvedType, item, step(f, i), errors);
      else if (rr?.items) checkScalar(item, rr.items, step(f, i), errors);
    });
    return;
  }
  if (field.map) return;
  if (field.resolvedType instanceof protobuf.Type) {
    const full = message!;
    if (full === 'google.protobuf.Duration' && rules?.duration) {
      const n = durationNanos(v);
      const r = rules.duration as Record<string, unknown>;
      if (n !== undefined && r.gt !== undefined && !(n > (durationNanos(r.gt) ?? 0)))
        errors.push(`${at(f)}: must be a positive duration`);
      if (n !== undefined && r.gte !== undefined && !(n >= (durationNanos(r.gte) ?? 0)))
        errors.push(`${at(f)}: must be at least ${JSON.stringify(r.gte)}`);
      return;
    }
    if (WRAPPERS.has(full) && rules) {
      checkScalar((v as { value?: unknown }).value, rules, step(f, '.value'), errors);
      return;
    }
    walk(field.resolvedType, v, f, errors);
  } else if (field.resolvedType instanceof protobuf.Enum) {
    const e = field.resolvedType;
    const defined = typeof v === 'string' ? v in e.values : Object.values(e.values).includes(Number(v));
    if (rules?.enum && (rules.enum as { defined_only?: boolean }).defined_only && !defined)
      errors.push(`${at(f)}: ${String(v)} is not a ${e.name} value`);
    if (!defined && typeof v === 'string') errors.push(`${at(f)}: ${v} is not a ${e.name} value`);
  } else if (rules) {
    checkScalar(v, rules, f, errors);
  }
}
