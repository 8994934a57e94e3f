// The CEL rules (`x-kubernetes-validations`) of a CRD node, evaluated as the API server does on create:
// `self` is the node's value, integers are CEL ints, and transition rules (those reading `oldSelf`)
// do not apply because there is no old object.
import { createRequire } from 'node:module';
import type * as CelLibrary from '@bufbuild/cel';
import { RE2JS } from '@bufbuild/re2';
import { expandOptionalCalls, kubernetesFunctions, unknownFunctions } from './cel-kubernetes.js';
import { addReads, projected, ReadNeed } from './cel-reads.js';
import type { CelRule, CrdSchema } from './crd-schemas.js';
import type { FieldError } from './openapi-validation.js';

type Program = (context: { self: unknown }) => CelLibrary.CelResult;

interface Cel {
  lib: typeof CelLibrary;
  environment: ReturnType<typeof CelLibrary.celEnv>;
}

let loaded: Cel | undefined;

/**
 * Buf's CEL evaluator, loaded on first use: only file input is checked here (a controller on a cluster
 * never is), and loading it is 0.2 s of every start. Its CommonJS build, which can be required lazily.
 */
function cel(): Cel {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const lib = require('@bufbuild/cel') as typeof CelLibrary;
  const { strings } = require('@bufbuild/cel/ext') as typeof import('@bufbuild/cel/ext');
  // `matches` compiles its pattern on every call unless given a compiler: the patterns are few, keep them.
  const patterns = new Map<string, RE2JS>();
  const re2 = { compile: (p: string) => patterns.get(p) ?? patterns.set(p, RE2JS.compile(p)).get(p)! };
  loaded = { lib, environment: lib.celEnv({ funcs: [...strings, ...kubernetesFunctions(lib)], re2 }) };
  return loaded;
}

const compiled = new Map<string, Program | Error>();

function compile(expression: string): Program | Error {
  let c = compiled.get(expression);
  if (!c) {
    const { lib, environment } = cel();
    try {
      const parsed = lib.parse(expression);
      expandOptionalCalls(parsed.expr!);
      // A function the API server has and we lack would otherwise fail only on the objects that reach it.
      const unknown = unknownFunctions(parsed.expr!, environment.funcs);
      if (unknown.length) throw new Error(`no support here for ${unknown.join(', ')}`);
      c = lib.plan(environment, parsed) as Program;
    } catch (e) {
      c = e as Error;
    }
    compiled.set(expression, c);
  }
  return c;
}

/** One expression's value for this `self` (plain JSON, integers as CEL ints); throws what it cannot evaluate. */
export function evaluateExpression(expression: string, self: unknown): unknown {
  const program = compile(expression);
  if (program instanceof Error) throw program;
  const result = program({ self: toCel(self, undefined) });
  if (cel().lib.isCelError(result)) throw new Error(result.message);
  return result;
}

/** Every distinct rule (and message expression) of these schemas. */
export function ruleExpressions(roots: Iterable<CrdSchema>): string[] {
  const expressions = new Set<string>();
  const collect = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(collect);
    for (const [key, value] of Object.entries(node)) {
      if (key === 'x-kubernetes-validations') {
        for (const rule of value as CelRule[]) {
          if (isTransitionRule(rule)) continue;
          expressions.add(rule.rule);
          if (rule.messageExpression) expressions.add(rule.messageExpression);
        }
      } else if (key !== 'default' && key !== 'enum') collect(value);
    }
  };
  for (const root of roots) collect(root);
  return [...expressions];
}

/** Compiles one expression ahead of its first use (kept, as a use would keep it). */
export function compileExpression(expression: string): void {
  compile(expression);
}

export function isTransitionRule(rule: CelRule): boolean {
  return /\boldSelf\b/.test(rule.rule);
}

// Manifests repeat themselves (the same match, filter or backend in many routes): a node's verdict
// is kept by schema node and the part of the value its rules read (cel-reads.ts), so a repeated value
// costs one JSON.stringify, not its rules. Where even that part does not repeat the key would cost more
// than the rules: a schema node whose values were seen again less than one time in eight stops being
// remembered.
const MAX_REMEMBERED = 10_000;
const remembered = new Map<string, { suffix: string; message: string }[]>();
interface SchemaNode {
  id: number;
  lookups: number;
  hits: number;
  /** What the node's rules read of its value. */
  reads: ReadNeed;
}
const schemaNodes = new WeakMap<CrdSchema, SchemaNode>();
let nextSchemaId = 0;
const TRIAL_LOOKUPS = 256;

/** Evaluates the node's rules against its value; a rule that does not hold is an error at its fieldPath. */
export function checkCelRules(value: unknown, schema: CrdSchema, path: string): FieldError[] {
  let node = schemaNodes.get(schema);
  if (!node) schemaNodes.set(schema, (node = { id: nextSchemaId++, lookups: 0, hits: 0, reads: readsOf(schema) }));
  let found: { suffix: string; message: string }[] | undefined;
  if (node.lookups < TRIAL_LOOKUPS || node.hits * 8 >= node.lookups) {
    const key = `${node.id}\0${JSON.stringify(projected(value, node.reads))}`;
    node.lookups++;
    found = remembered.get(key);
    if (found) node.hits++;
    else {
      found = evaluateRules(value, schema);
      if (remembered.size >= MAX_REMEMBERED) remembered.clear();
      remembered.set(key, found);
    }
  } else found = evaluateRules(value, schema);
  return found.map((e) => ({ path: path + e.suffix, message: e.message }));
}

/** What the rules of a node (and their message expressions) read; all of the value if one does not parse. */
export function readsOf(schema: CrdSchema): ReadNeed {
  const need = new ReadNeed(schema);
  const { lib } = cel();
  for (const rule of schema['x-kubernetes-validations'] ?? []) {
    if (isTransitionRule(rule)) continue;
    for (const expression of [rule.rule, rule.messageExpression]) {
      if (expression === undefined) continue;
      try {
        addReads(lib.parse(expression).expr, need);
      } catch {
        need.whole = true;
      }
    }
  }
  return need;
}

/** The node's verdict, evaluated every time (checkCelRules remembers verdicts; tests compare them). */
export function evaluateRules(value: unknown, schema: CrdSchema): { suffix: string; message: string }[] {
  const errors: { suffix: string; message: string }[] = [];
  let self: unknown;
  for (const rule of schema['x-kubernetes-validations'] ?? []) {
    if (isTransitionRule(rule)) continue;
    const program = compile(rule.rule);
    const where = rule.fieldPath ?? '';
    if (program instanceof Error) {
      errors.push({
        suffix: where,
        message: `cannot check the rule ${JSON.stringify(rule.rule)}: ${firstLine(program)}`,
      });
      continue;
    }
    self ??= toCel(value, schema);
    const result = program({ self });
    if (cel().lib.isCelError(result)) {
      // The API server reports a rule it could not evaluate as a failed one.
      errors.push({
        suffix: where,
        message: `${ruleMessage(rule, self)} (the rule could not be evaluated: ${result.message})`,
      });
      continue;
    }
    if (result !== true) errors.push({ suffix: where, message: ruleMessage(rule, self) });
  }
  return errors;
}

function ruleMessage(rule: CelRule, self: unknown): string {
  if (rule.messageExpression) {
    const program = compile(rule.messageExpression);
    if (!(program instanceof Error)) {
      // A message expression that fails falls back to the static message, as the API server does.
      const message = program({ self });
      if (typeof message === 'string' && message) return message;
    }
  }
  return rule.message ?? `failed rule: ${rule.rule}`;
}

/** The value as CEL sees it: objects become maps, integers of `integer` fields CEL ints (bigint). */
function toCel(value: unknown, schema: CrdSchema | undefined): unknown {
  if (typeof value === 'number' && (schema?.type === 'integer' || schema?.['x-kubernetes-int-or-string'])) {
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((item) => toCel(item, schema?.items));
  if (typeof value === 'object' && value !== null) {
    const extra = typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    const out = new Map<string, unknown>();
    for (const [k, v] of Object.entries(value))
      if (v !== undefined) out.set(k, toCel(v, schema?.properties?.[k] ?? extra));
    return out;
  }
  return value;
}

function firstLine(e: Error): string {
  return e.message.split('\n')[0] ?? e.message;
}
