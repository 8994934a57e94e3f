// What of a value the CEL rules of a schema node read, found from their syntax trees. The API
// server's verdict on a node is a function of what its rules read, so values that agree on that part
// share one verdict: a route's list of rules holds its backends' names and header values, which no
// rule of that node reads, and its verdict can be remembered by the types, presence and counts the
// rules do read (cel-validation.ts). 10k routes: ~60k evaluations of the costliest nodes each saw a
// value of their own; the parts they read repeat.
//
// The analysis is conservative: a value the expression uses for anything but selecting a field,
// testing its presence, indexing a list, counting a list or iterating over a list's items is needed
// whole, as is anything it cannot follow. Lists made by `filter` and `map` are followed to their size.
import type * as CelLibrary from '@bufbuild/cel';
import type { CrdSchema } from './crd-schemas.js';

type Expr = ReturnType<typeof CelLibrary.parse>['expr'] & object;

/** What the rules read of a value: all of it, or some fields (by name) and, of a list, its items. */
export class ReadNeed {
  whole = false;
  readonly fields = new Map<string, ReadNeed>();
  items: ReadNeed | undefined;

  constructor(readonly schema: CrdSchema | undefined) {}

  field(name: string): ReadNeed {
    let f = this.fields.get(name);
    if (!f) {
      const s = this.schema;
      const extra = typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined;
      this.fields.set(name, (f = new ReadNeed(s?.properties?.[name] ?? extra)));
    }
    return f;
  }

  item(): ReadNeed {
    return (this.items ??= new ReadNeed(this.schema?.items));
  }
}

/**
 * An expression's abstract value: the value at a place in `self` (path), an accumulator of a
 * comprehension (which may gather items of `self`), a list gathered so (only its size read so far),
 * or undefined for anything computed.
 */
type Abstract =
  | { kind: 'path'; need: ReadNeed }
  | { kind: 'accumulator'; gathered: ReadNeed[]; used: boolean }
  | { kind: 'list'; of: ReadNeed[] }
  | undefined;

const path = (need: ReadNeed): Abstract => ({ kind: 'path', need });

/** The value is used as it is: everything of it is read. */
function use(v: Abstract): void {
  if (!v) return;
  if (v.kind === 'path') v.need.whole = true;
  else if (v.kind === 'list') for (const n of v.of) n.whole = true;
  else v.used = true;
}

function constantString(e: Expr): string | undefined {
  const k = e.exprKind;
  return k.case === 'constExpr' && k.value.constantKind.case === 'stringValue' ? k.value.constantKind.value : undefined;
}

function evaluate(e: Expr | undefined, env: ReadonlyMap<string, Abstract>): Abstract {
  if (!e) return undefined;
  const k = e.exprKind;
  switch (k.case) {
    case 'constExpr':
      return undefined;
    case 'identExpr':
      return env.get(k.value.name);
    case 'selectExpr': {
      const operand = evaluate(k.value.operand, env);
      if (operand?.kind !== 'path') {
        use(operand);
        return undefined;
      }
      const field = operand.need.field(k.value.field);
      // has(): only presence is read; the field's entry keeps it.
      return k.value.testOnly ? undefined : path(field);
    }
    case 'callExpr':
      return call(k.value.function, k.value.target, k.value.args, env);
    case 'comprehensionExpr':
      return comprehension(k.value, env);
    case 'listExpr':
      for (const element of k.value.elements) use(evaluate(element, env));
      return undefined;
    case 'structExpr':
      for (const entry of k.value.entries) {
        if (entry.keyKind.case === 'mapKey') use(evaluate(entry.keyKind.value, env));
        use(evaluate(entry.value, env));
      }
      return undefined;
    default:
      return undefined;
  }
}

function call(fn: string, target: Expr | undefined, args: Expr[], env: ReadonlyMap<string, Abstract>): Abstract {
  if (fn === '_[_]' && args.length === 2) {
    const list = evaluate(args[0], env);
    const key = constantString(args[1]!);
    if (list?.kind === 'path' && key !== undefined) return path(list.need.field(key));
    use(evaluate(args[1], env));
    if (list?.kind === 'path' && list.need.schema?.type === 'array') return path(list.need.item());
    use(list);
    return undefined;
  }
  if (fn === 'size' && (target ? args.length === 0 : args.length === 1)) {
    const v = evaluate(target ?? args[0], env);
    // A list's size: its items are kept (projected), so their count is; of a string or map, all of it.
    if (v?.kind === 'path' && v.need.schema?.type === 'array') v.need.item();
    else if (v?.kind !== 'list') use(v);
    return undefined;
  }
  if (fn === '_+_' && args.length === 2) {
    // `@result + [x]`, the step of filter() and map(): the accumulator gathers x.
    const left = evaluate(args[0], env);
    const right = args[1]!;
    if (left?.kind === 'accumulator' && right.exprKind.case === 'listExpr') {
      for (const element of right.exprKind.value.elements) {
        const v = evaluate(element, env);
        if (v?.kind === 'path') left.gathered.push(v.need);
        else use(v);
      }
      return left;
    }
    use(left);
    use(evaluate(right, env));
    return undefined;
  }
  if (fn === '_?_:_' && args.length === 3) {
    use(evaluate(args[0], env));
    const yes = evaluate(args[1], env);
    const no = evaluate(args[2], env);
    if (yes?.kind === 'accumulator' && yes === no) return yes;
    use(yes);
    use(no);
    return undefined;
  }
  use(evaluate(target, env));
  for (const a of args) use(evaluate(a, env));
  return undefined;
}

function comprehension(
  c: Extract<Expr['exprKind'], { case: 'comprehensionExpr' }>['value'],
  env: ReadonlyMap<string, Abstract>,
): Abstract {
  const range = evaluate(c.iterRange, env);
  const inner = new Map(env);
  let element: Abstract;
  if (range?.kind === 'path' && range.need.schema?.type === 'array') element = path(range.need.item());
  else use(range); // a map's keys, a list made here, or anything else: all of it
  if (c.iterVar2) {
    inner.set(c.iterVar, undefined);
    inner.set(c.iterVar2, element);
  } else inner.set(c.iterVar, element);
  use(evaluate(c.accuInit, env));
  const accumulator: Abstract = { kind: 'accumulator', gathered: [], used: false };
  inner.set(c.accuVar, accumulator);
  const condition = evaluate(c.loopCondition, inner);
  if (condition !== accumulator) use(condition);
  const step = evaluate(c.loopStep, inner);
  if (step !== accumulator) use(step);
  const result = evaluate(c.result, inner);
  if (accumulator.used) for (const n of accumulator.gathered) n.whole = true;
  if (result === accumulator) return { kind: 'list', of: accumulator.gathered };
  return result;
}

/** Adds to `need` what the expression reads of `self`; an expression that cannot be followed reads all. */
export function addReads(expression: Expr | undefined, need: ReadNeed): void {
  if (!expression) {
    need.whole = true;
    return;
  }
  use(evaluate(expression, new Map([['self', path(need)]])));
}

/** Presence alone (`has()`, or an item counted): any value stands for it. */
const PRESENT = 1;

/** The part of `value` that `need` says is read; values with the same part get the same verdict. */
export function projected(value: unknown, need: ReadNeed): unknown {
  if (need.whole) return value;
  if (Array.isArray(value)) {
    if (need.fields.size) return value;
    return value.map((item) => (need.items ? projected(item, need.items) : PRESENT));
  }
  if (typeof value === 'object' && value !== null) {
    if (need.items) return value;
    const out: Record<string, unknown> = {};
    for (const [name, field] of need.fields) {
      const v = (value as Record<string, unknown>)[name];
      if (v !== undefined) out[name] = projected(v, field);
    }
    return out;
  }
  // A scalar read only for its presence; one navigated into is an error whatever it holds, but kept.
  return need.fields.size || need.items ? value : PRESENT;
}
