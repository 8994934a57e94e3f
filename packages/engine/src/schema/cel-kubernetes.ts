// The parts of the API server's CEL environment that CRD rules use beyond standard CEL and cel-es's string
// extension, ported from k8s.io/apiserver/pkg/cel/library (v0.37): `isIP`, the format library
// (`format.dns1123Subdomain().validate(s)` and the other named formats) and cel-go's optional values
// (`optional.of/none/ofNonZeroValue`, `hasValue`, `value`, `or`, `orValue`, `optMap`, `optFlatMap`,
// `first`, `last`, `optional.unwrap`). The optional syntax (`a.?b`, `a[?k]`, `[?x]`, `{?k: v}`) does not
// parse in cel-es: a rule using it is reported as one that cannot be checked.
import { isIP } from 'node:net';
import type * as CelLibrary from '@bufbuild/cel';

type Lib = typeof CelLibrary;
type CelValue = CelLibrary.CelValue;
type CelFunc = CelLibrary.CelFunc;
type Expr = ReturnType<typeof CelLibrary.parse>['expr'] & object;

// cel-es refuses values it does not know and has no opaque types; an object carrying its type marker
// passes as a CEL value (of type `type`), and the functions here tell optionals and formats apart by class.
const CEL_TYPE = Symbol.for('@bufbuild/cel/type');

abstract class Opaque {
  readonly [CEL_TYPE] = {};
  readonly kind = 'object';
  abstract readonly name: string;
  toString(): string {
    return this.name;
  }
}

/** cel-go's optional_type: a value, or none. */
class Optional extends Opaque {
  readonly name = 'optional_type';
  constructor(readonly value: CelValue | undefined) {
    super();
  }
}

const NONE = new Optional(undefined);

class NamedFormat extends Opaque {
  readonly name = 'kubernetes.NamedFormat';
  constructor(readonly check: (s: string) => string[]) {
    super();
  }
}

const cel = (v: Opaque) => v as unknown as CelValue;
const optionalOf = (v: CelValue | undefined) => cel(v === undefined ? NONE : new Optional(v));
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

// k8s.io/apimachinery/pkg/util/validation (the name formats) and .../api/validate/content (qualified
// names, label values): the same checks with slightly different length messages.
const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1035_LABEL = '[a-z]([-a-z0-9]*[a-z0-9])?';
const LABEL_KEY = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${LABEL_KEY})?`;
const whole = (re: string) => new RegExp(`^${re}$`);
const dns1123Label = whole(DNS1123_LABEL);
const dns1123Subdomain = whole(DNS1123_SUBDOMAIN);
const dns1035Label = whole(DNS1035_LABEL);
const labelKey = whole(LABEL_KEY);
const labelValue = whole(LABEL_VALUE);

const maxLen = (n: number) => `must be no more than ${n} characters`;
const maxBytes = (n: number) => `must be no more than ${n} bytes`;

function regexError(message: string, re: string, ...examples: string[]): string {
  if (!examples.length) return `${message} (regex used for validation is '${re}')`;
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${re}')`;
}

const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'," +
  ' and must start and end with an alphanumeric character';
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'," +
  ' and must start and end with an alphanumeric character';
const DNS1035_MESSAGE =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-'" +
  ', start with an alphabetic character, and end with an alphanumeric character';
const LABEL_KEY_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'," +
  ' and must start and end with an alphanumeric character';

function isDns1123Label(s: string): string[] {
  const errors = bytes(s) > 63 ? [maxLen(63)] : [];
  if (!dns1123Label.test(s))
    errors.push(
      dns1123Subdomain.test(s)
        ? 'must not contain dots'
        : regexError(LABEL_MESSAGE, DNS1123_LABEL, 'my-name', '123-abc'),
    );
  return errors;
}

function isDns1123Subdomain(s: string, tooLong = maxLen(253)): string[] {
  const errors = bytes(s) > 253 ? [tooLong] : [];
  if (!dns1123Subdomain.test(s)) errors.push(regexError(SUBDOMAIN_MESSAGE, DNS1123_SUBDOMAIN, 'example.com'));
  return errors;
}

function isDns1035Label(s: string): string[] {
  const errors = bytes(s) > 63 ? [maxLen(63)] : [];
  if (!dns1035Label.test(s)) errors.push(regexError(DNS1035_MESSAGE, DNS1035_LABEL, 'my-name', 'abc-123'));
  return errors;
}

/** content.IsLabelKey: an optional DNS subdomain prefix and '/', then a name. */
function isQualifiedName(s: string): string[] {
  const errors: string[] = [];
  const parts = s.split('/');
  if (parts.length > 2)
    return [
      `a valid label key ${regexError(LABEL_KEY_MESSAGE, LABEL_KEY, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  const name = parts.at(-1)!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (!prefix) errors.push('prefix part must be non-empty');
    else errors.push(...isDns1123Subdomain(prefix, maxBytes(253)).map((e) => `prefix part ${e}`));
  }
  if (!name) errors.push('name part must be non-empty');
  else if (bytes(name) > 63) errors.push(`name part ${maxBytes(63)}`);
  if (!labelKey.test(name))
    errors.push(`name part ${regexError(LABEL_KEY_MESSAGE, LABEL_KEY, 'MyName', 'my.name', '123-abc')}`);
  return errors;
}

function isLabelValue(s: string): string[] {
  const errors = bytes(s) > 63 ? [maxBytes(63)] : [];
  if (!labelValue.test(s)) errors.push(regexError(LABEL_VALUE_MESSAGE, LABEL_VALUE, 'MyValue', 'my_value', '12345'));
  return errors;
}

/** NameIsDNS*(s, prefix=true): a generated name's prefix, its trailing '-' (and, as upstream, one more byte) masked. */
function asPrefix(check: (s: string) => string[]): (s: string) => string[] {
  return (s) => {
    const b = Buffer.from(s, 'utf8');
    return check(b.length > 1 && s.endsWith('-') ? `${b.subarray(0, b.length - 2).toString('utf8')}a` : s);
  };
}

/** strconv.Quote for the strings Go's url errors quote. */
function goQuote(s: string): string {
  const escapes: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  const quoted = [...s].map((c) => {
    const code = c.codePointAt(0)!;
    if (escapes[c]) return escapes[c];
    return code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : c;
  });
  return `"${quoted.join('')}"`;
}

const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);
// Bytes a host may hold unescaped (net/url's shouldEscape for encodeHost), besides letters and digits.
const HOST_CHARS = new Set('-_.~!$&\'()*+,;=:[]<>"');

/** net/url's unescape check for a path or a host: every '%' starts an escape; a host escapes only non-ASCII. */
function escapeError(s: string, host: boolean): string | undefined {
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      if (!isHex(s[i + 1]) || !isHex(s[i + 2])) return `invalid URL escape ${goQuote(s.slice(i, i + 3))}`;
      if (host && parseInt(s[i + 1]!, 16) < 8 && s.slice(i, i + 3) !== '%25')
        return `invalid URL escape ${goQuote(s.slice(i, i + 3))}`;
      i += 2;
    } else if (host && c.charCodeAt(0) < 0x80 && !/[A-Za-z0-9]/.test(c) && !HOST_CHARS.has(c)) {
      return `invalid character ${goQuote(c)} in host name`;
    }
  }
  return undefined;
}

const validPort = (p: string) => /^(:[0-9]*)?$/.test(p);

function hostError(scheme: string, host: string): string | undefined {
  const open = host.lastIndexOf('[');
  if (open > 0) return 'invalid IP-literal';
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0) return "missing ']' in host";
    const port = host.slice(close + 1);
    if (!validPort(port)) return `invalid port ${goQuote(port)} after host`;
    const literal = host.slice(1, close);
    const zone = literal.indexOf('%25');
    const error = escapeError(zone < 0 ? literal : literal.slice(0, zone), true);
    if (error) return error;
    const address = decodeURIComponent(zone < 0 ? literal : literal.slice(0, zone));
    if (isIP(address) !== 6)
      return isIP(address) === 4 ? 'invalid IP-literal' : `invalid host: ParseAddr(${goQuote(address)})`;
    return undefined;
  }
  const colon = host.indexOf(':');
  if (colon >= 0) {
    // Colons beyond the port's are allowed except in http(s) URLs (database host lists).
    const at = scheme === 'http' || scheme === 'https' ? colon : host.lastIndexOf(':');
    const port = host.slice(at);
    if (!validPort(port)) return `invalid port ${goQuote(port)} after host`;
  }
  return escapeError(host, true);
}

/** url.ParseRequestURI's verdict (Go 1.26), as the `uri` format reports it. */
function requestUriError(raw: string): string | undefined {
  if (/[\x00-\x1f\x7f]/.test(raw)) return 'net/url: invalid control character in URL';
  if (raw === '') return 'empty url';
  if (raw === '*') return undefined;
  let scheme = '';
  let rest = raw;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*)?:/.exec(raw);
  if (m) {
    if (!m[1]) return 'missing protocol scheme';
    scheme = m[1].toLowerCase();
    rest = raw.slice(m[0].length);
  }
  rest = rest.endsWith('?') && rest.indexOf('?') === rest.length - 1 ? rest.slice(0, -1) : rest.split('?')[0]!;
  if (!rest.startsWith('/')) return scheme ? undefined : 'invalid URI for request';
  if (scheme && rest.startsWith('//')) {
    let authority = rest.slice(2);
    const slash = authority.indexOf('/');
    rest = slash < 0 ? '' : authority.slice(slash);
    if (slash >= 0) authority = authority.slice(0, slash);
    const at = authority.lastIndexOf('@');
    const error = hostError(scheme, authority.slice(at + 1));
    if (error) return error;
    if (at >= 0) {
      const user = authority.slice(0, at);
      if ([...user].some((c) => !/[A-Za-z0-9\-._:~!$&'()*+,;=%@]/.test(c))) return 'net/url: invalid userinfo';
      const colon = user.indexOf(':');
      for (const part of colon < 0 ? [user] : [user.slice(0, colon), user.slice(colon + 1)]) {
        const e = escapeError(part, false);
        if (e) return e;
      }
    }
  }
  return escapeError(rest, false);
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const TIME_OF_DAY = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;

/** time.Parse("2006-01-02", s) succeeds. */
function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** strfmt.IsDateTime: a date, 't', a time of day (what follows a further 't' is not looked at, as upstream). */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = TIME_OF_DAY.exec(parts[1]!);
  return !!m && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

const failing = (ok: (s: string) => boolean, message: string) => (s: string) => (ok(s) ? [] : [message]);

/** library.ConstantFormats: what `format.<name>()` and `format.named(name)` give. */
const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label: isDns1123Label,
  dns1123Subdomain: (s) => isDns1123Subdomain(s),
  dns1035Label: isDns1035Label,
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: asPrefix(isDns1123Label),
  dns1123SubdomainPrefix: asPrefix((s) => isDns1123Subdomain(s)),
  dns1035LabelPrefix: asPrefix(isDns1035Label),
  labelValue: isLabelValue,
  uri: (s) => {
    const error = requestUriError(s);
    return error ? [`parse ${goQuote(s)}: ${error}`] : [];
  },
  uuid: failing((s) => UUID.test(s), 'does not match the UUID format'),
  byte: failing((s) => BASE64.test(s), 'invalid base64'),
  date: failing(isDate, 'invalid date'),
  datetime: failing(isDateTime, 'invalid datetime'),
};

/** cel-go's Zeroer: what optional.ofNonZeroValue leaves out. */
function isZero(lib: Lib, v: CelValue): boolean {
  if (v === null || v === false || v === '' || v === 0 || v === 0n) return true;
  if (v instanceof Uint8Array) return v.length === 0;
  if (lib.isCelUint(v)) return v.value === 0n;
  if (lib.isCelList(v) || lib.isCelMap(v)) return v.size === 0;
  const message = v as { desc?: { typeName?: string }; message?: { seconds?: bigint; nanos?: number } };
  const { seconds, nanos } = message.message ?? {};
  // A zero Duration; a Timestamp at Go's zero time, 0001-01-01T00:00:00Z.
  if (message.desc?.typeName === 'google.protobuf.Duration') return seconds === 0n && !nanos;
  if (message.desc?.typeName === 'google.protobuf.Timestamp') return seconds === -62135596800n && !nanos;
  return false;
}

function noOverload(name: string): never {
  throw new Error(`found no matching overload for '${name}'`);
}

function optionalTarget(v: unknown, name: string): Optional {
  return v instanceof Optional ? v : noOverload(name);
}

function listOf(lib: Lib, v: unknown, name: string): CelLibrary.CelList {
  return lib.isCelList(v) ? v : noOverload(name);
}

/** The functions, and the standard ones overridden so that `==`, `!=` and `in` compare optionals by value. */
export function kubernetesFunctions(lib: Lib): CelFunc[] {
  const { celFunc, celMethod, CelScalar, listType } = lib;
  const { BOOL, DYN, STRING, TYPE } = CelScalar;
  const LIST = listType(DYN);
  // The standard `_==_(dyn, dyn)`, the only overload; scalars go straight to it.
  const standard = [...lib.celEnv().funcs.find('_==_')!][0]!;
  const standardEquals = (l: CelValue, r: CelValue) => l === r || standard.call(0, undefined, [l, r]) === true;
  const equals = (l: CelValue, r: CelValue): boolean => {
    if (typeof l !== 'object' || l === null || typeof r !== 'object' || r === null) return standardEquals(l, r);
    if (l instanceof Optional || r instanceof Optional) {
      if (!(l instanceof Optional && r instanceof Optional)) return false;
      return l.value === undefined || r.value === undefined ? l.value === r.value : equals(l.value, r.value);
    }
    if (lib.isCelList(l) && lib.isCelList(r)) {
      if (l.size !== r.size) return false;
      for (let i = 0; i < l.size; i++) if (!equals(l.get(i)!, r.get(i)!)) return false;
      return true;
    }
    if (lib.isCelMap(l) && lib.isCelMap(r)) {
      if (l.size !== r.size) return false;
      for (const [k, v] of l) {
        const other = r.get(k);
        if (other === undefined || !equals(v, other)) return false;
      }
      return true;
    }
    return standardEquals(l, r);
  };
  const formats = Object.entries(FORMATS).map(([name, check]) => {
    const format = new NamedFormat(check);
    return celFunc(`format.${name}`, [], TYPE, () => cel(format) as CelLibrary.CelType);
  });
  const validate = celMethod('validate', TYPE, [STRING], DYN, function (s) {
    if (!(this instanceof NamedFormat)) noOverload('validate');
    const errors = this.check(s);
    return optionalOf(errors.length ? lib.celList(errors) : undefined);
  });
  const named = celFunc('format.named', [STRING], DYN, (name) => {
    const check = Object.hasOwn(FORMATS, name) ? FORMATS[name] : undefined;
    return optionalOf(check && cel(new NamedFormat(check)));
  });
  const isIpAddress = celFunc('isIP', [STRING], BOOL, (s) => isIP(s) !== 0 && !s.includes('%'));
  const optional = [
    celFunc('optional.of', [DYN], DYN, (v) => cel(new Optional(v))),
    celFunc('optional.none', [], DYN, () => cel(NONE)),
    celFunc('optional.ofNonZeroValue', [DYN], DYN, (v) => optionalOf(isZero(lib, v) ? undefined : v)),
    celMethod('hasValue', TYPE, [], BOOL, function () {
      return optionalTarget(this, 'hasValue').value !== undefined;
    }),
    celMethod('value', TYPE, [], DYN, function () {
      const v = optionalTarget(this, 'value').value;
      if (v === undefined) throw new Error('optional.none() dereference');
      return v;
    }),
    celMethod('first', LIST, [], DYN, function () {
      return optionalOf(listOf(lib, this, 'first').get(0));
    }),
    celMethod('last', LIST, [], DYN, function () {
      const list = listOf(lib, this, 'last');
      return optionalOf(list.get(list.size - 1));
    }),
    ...['optional.unwrap', 'unwrapOpt'].map((name) => {
      const unwrap = (list: CelLibrary.CelList) =>
        lib.celList(
          [...list].flatMap((o) => {
            if (!(o instanceof Optional)) throw new Error(`value ${String(o)} is not optional`);
            return o.value === undefined ? [] : [o.value];
          }),
        );
      return name === 'unwrapOpt'
        ? celMethod(name, LIST, [], LIST, function () {
            return unwrap(listOf(lib, this, name));
          })
        : celFunc(name, [LIST], LIST, (list) => unwrap(list));
    }),
  ];
  const overridden = [
    celFunc('_==_', [DYN, DYN], BOOL, equals),
    celFunc('_!=_', [DYN, DYN], BOOL, (l, r) => !equals(l, r)),
    celFunc('@in', [DYN, LIST], BOOL, (v, list) => [...list].some((item) => equals(item, v))),
  ];
  return [isIpAddress, ...formats, validate, named, ...optional, ...overridden];
}

// `or`, `orValue`, `optMap` and `optFlatMap` are not functions in cel-go: `or` and `orValue` do not
// evaluate their argument when the optional has a value, and the two macros bind a variable. They are
// rewritten as cel-go expands them, into conditionals and a one-step comprehension.
const node = (id: bigint, exprKind: Record<string, unknown>): Expr =>
  ({ $typeName: 'cel.expr.Expr', id, exprKind }) as unknown as Expr;

/** Rewrites the optional library's short-circuiting calls and macros in place. */
export function expandOptionalCalls(root: Expr): void {
  let nextId = maxId(root) + 1n;
  const call = (fn: string, target: Expr | undefined, ...args: Expr[]) =>
    node(nextId++, {
      case: 'callExpr',
      value: { $typeName: 'cel.expr.Expr.Call', function: fn, target, args },
    });
  const visit = (e: Expr | undefined): void => {
    if (!e) return;
    const k = e.exprKind;
    switch (k.case) {
      case 'selectExpr':
        return visit(k.value.operand);
      case 'listExpr':
        return k.value.elements.forEach(visit);
      case 'structExpr':
        for (const entry of k.value.entries) {
          if (entry.keyKind.case === 'mapKey') visit(entry.keyKind.value);
          visit(entry.value);
        }
        return;
      case 'comprehensionExpr': {
        const c = k.value;
        return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].forEach(visit);
      }
      case 'callExpr':
        break;
      default:
        return;
    }
    const { function: fn, target, args } = k.value;
    visit(target);
    args.forEach(visit);
    if (!target) return;
    const hasValue = () => call('hasValue', target);
    if ((fn === 'or' || fn === 'orValue') && args.length === 1) {
      const chosen = fn === 'or' ? target : call('value', target);
      e.exprKind = call('_?_:_', undefined, hasValue(), chosen, args[0]!).exprKind;
    } else if (
      (fn === 'optMap' || fn === 'optFlatMap') &&
      args.length === 2 &&
      args[0]!.exprKind.case === 'identExpr'
    ) {
      const bound = node(nextId++, {
        case: 'comprehensionExpr',
        value: {
          $typeName: 'cel.expr.Expr.Comprehension',
          iterVar: '#unused',
          iterVar2: '',
          iterRange: node(nextId++, {
            case: 'listExpr',
            value: { $typeName: 'cel.expr.Expr.CreateList', elements: [], optionalIndices: [] },
          }),
          accuVar: args[0]!.exprKind.value.name,
          accuInit: call('value', target),
          loopCondition: node(nextId++, {
            case: 'constExpr',
            value: { $typeName: 'cel.expr.Constant', constantKind: { case: 'boolValue', value: false } },
          }),
          loopStep: args[0],
          result: args[1],
        },
      });
      const mapped = fn === 'optMap' ? call('optional.of', undefined, bound) : bound;
      e.exprKind = call('_?_:_', undefined, hasValue(), mapped, call('optional.none', undefined)).exprKind;
    }
  };
  visit(root);
}

function maxId(e: unknown): bigint {
  let max = 0n;
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach(walk);
    for (const [key, value] of Object.entries(v)) {
      if (key === 'id' && typeof value === 'bigint') max = value > max ? value : max;
      else walk(value);
    }
  };
  walk(e);
  return max;
}

// Calls the planner handles itself rather than through a function.
const PLANNED = new Set(['_[_]', '_?_:_', '_&&_', '_||_', '@not_strictly_false', '__not_strictly_false__']);

/**
 * The calls of an expression that name no function of the environment (as `name()` or `.name()`), so
 * that a rule using a library we lack is reported as one that cannot be checked rather than failing
 * on the objects that reach it.
 */
export function unknownFunctions(root: Expr, funcs: CelLibrary.CelEnv['funcs']): string[] {
  const unknown = new Set<string>();
  const visit = (e: Expr | undefined, bound: ReadonlySet<string>): void => {
    if (!e) return;
    const k = e.exprKind;
    switch (k.case) {
      case 'selectExpr':
        return visit(k.value.operand, bound);
      case 'listExpr':
        return k.value.elements.forEach((x) => visit(x, bound));
      case 'structExpr':
        for (const entry of k.value.entries) {
          if (entry.keyKind.case === 'mapKey') visit(entry.keyKind.value, bound);
          visit(entry.value, bound);
        }
        return;
      case 'comprehensionExpr': {
        const c = k.value;
        visit(c.iterRange, bound);
        visit(c.accuInit, bound);
        const inner = new Set([...bound, c.iterVar, c.iterVar2, c.accuVar]);
        for (const x of [c.loopCondition, c.loopStep, c.result]) visit(x, inner);
        return;
      }
      case 'callExpr': {
        const { function: fn, target, args } = k.value;
        visit(target, bound);
        args.forEach((x) => visit(x, bound));
        const qualifier = target && qualifiedName(target);
        const member = !qualifier || bound.has(qualifier.split('.')[0]!);
        const known =
          PLANNED.has(fn) || (!member && !!funcs.find(`${qualifier}.${fn}`)) || funcs.find(fn) !== undefined;
        if (!known) unknown.add(member ? `${target ? '.' : ''}${fn}()` : `${qualifier}.${fn}()`);
        return;
      }
      default:
        return;
    }
  };
  visit(root, new Set(['self', 'oldSelf']));
  return [...unknown];
}

/** `a.b.c` for a chain of field selections on an identifier; undefined for anything else. */
function qualifiedName(e: Expr): string | undefined {
  const k = e.exprKind;
  if (k.case === 'identExpr') return k.value.name;
  if (k.case === 'selectExpr' && !k.value.testOnly && k.value.operand) {
    const operand = qualifiedName(k.value.operand);
    return operand === undefined ? undefined : `${operand}.${k.value.field}`;
  }
  return undefined;
}
