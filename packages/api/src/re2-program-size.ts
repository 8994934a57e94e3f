// The size of the program RE2 compiles a regular expression into: what `RE2::ProgramSize()` returns,
// and what Envoy compares with the runtime key `re2.max_program_size.error_level` (default 100) before it
// accepts a RegexMatcher. Envoy refuses a larger one, and with it the whole resource that holds it (a
// RouteConfiguration: every route of the port). Envoy's docs (RegexMatcher.GoogleRE2, "Envoy supports
// program size checking via runtime ... re2.max_program_size.error_level defaults to 100") and
// source/common/common/regex.cc.
//
// RE2's number depends on every step between the pattern and the program: the parser (which merges
// literals, factors common prefixes out of alternations and merges single characters into classes), the
// simplifier (counted repetitions written out, adjacent repetitions coalesced), the compiler (classes as
// UTF-8 byte-range automata with shared suffixes, a `.*?` loop before an unanchored pattern, a literal
// `^prefix` taken out), the optimizer and the flattening that counts. This module follows each of those
// steps as RE2 (the release Envoy builds with, 2024-07-02) takes them, for UTF-8 patterns and the options
// Envoy gives RE2 (RE2::Quiet: Perl syntax, case-sensitive, 8 MiB of memory), so that the number is RE2's
// own; test/re2-program-size.test.ts compares it with RE2's on a corpus. Where it cannot be sure it says
// why instead of giving a number, and the caller refuses the pattern: Unicode classes (`\pL`, `\p{Greek}`)
// and case folding of letters beyond ASCII depend on Unicode tables that are not here.

/**
 * Envoy's default `re2.max_program_size.error_level`: a larger program makes Envoy refuse the resource.
 * Turnpike keeps the default rather than raising it in the bootstrap's runtime: the limit is read from the
 * runtime a proxy started with, so proxies started from an older bootstrap (a rollout in progress, a
 * `turnpike bootstrap` file written before) would still refuse larger programs, whole route configurations
 * with them; and on a Gateway that tenants share, it bounds what one tenant's regex costs every request.
 */
export const ENVOY_RE2_MAX_PROGRAM_SIZE = 100;

/** RE2's program size, or why it is not known here (the pattern is then to be refused). */
export type Re2ProgramSize = { size: number; why?: undefined } | { size?: undefined; why: string };

class Unknown extends Error {}
class Refused extends Error {}

// ---- Parse flags (regexp.h): only their equality and these bits matter here.
const FOLD_CASE = 1 << 0;
const CLASS_NL = 1 << 2;
const DOT_NL = 1 << 3;
const ONE_LINE = 1 << 4;
const NON_GREEDY = 1 << 6;
const PERL_CLASSES = 1 << 7;
const PERL_B = 1 << 8;
const PERL_X = 1 << 9;
const UNICODE_GROUPS = 1 << 10;
const WAS_DOLLAR = 1 << 13;
/** RE2::Options::ParseFlags() for RE2::Quiet: UTF-8, Perl-like, case-sensitive. */
const RE2_OPTIONS_FLAGS = CLASS_NL | ONE_LINE | PERL_CLASSES | PERL_B | PERL_X | UNICODE_GROUPS;

// ---- Regexp ops (the parse tree), with the parser's two stack markers after them.
const NO_MATCH = 1;
const EMPTY_MATCH = 2;
const LITERAL = 3;
const LITERAL_STRING = 4;
const CONCAT = 5;
const ALTERNATE = 6;
const STAR = 7;
const PLUS = 8;
const QUEST = 9;
const REPEAT = 10;
const CAPTURE = 11;
const ANY_CHAR = 12;
const ANY_BYTE = 13;
const BEGIN_LINE = 14;
const END_LINE = 15;
const WORD_BOUNDARY = 16;
const NO_WORD_BOUNDARY = 17;
const BEGIN_TEXT = 18;
const END_TEXT = 19;
const CHAR_CLASS = 20;
const LEFT_PAREN = 22;
const VERTICAL_BAR = 23;

const RUNE_MAX = 0x10ffff;
const MAX_REPEAT = 1000;
const MAX_NSUB = 0xffff;
/** Deeper trees than this are refused rather than walked (RE2 itself has no limit; nothing real nests so). */
const MAX_DEPTH = 2500;

// ---- Character classes: sorted, disjoint, non-adjacent ranges [lo0, hi0, lo1, hi1, …].

class Ranges {
  r: number[] = [];

  get nrunes(): number {
    let n = 0;
    for (let i = 0; i < this.r.length; i += 2) n += this.r[i + 1]! - this.r[i]! + 1;
    return n;
  }

  contains(c: number): boolean {
    for (let i = 0; i < this.r.length; i += 2) if (this.r[i]! <= c && c <= this.r[i + 1]!) return true;
    return false;
  }

  /** Adds lo-hi; false when one range already held all of it (RE2's CharClassBuilder::AddRange). */
  add(lo: number, hi: number): boolean {
    if (hi < lo) return false;
    const r = this.r;
    for (let i = 0; i < r.length; i += 2) if (r[i]! <= lo && hi <= r[i + 1]!) return false;
    const out: number[] = [];
    let i = 0;
    for (; i < r.length && r[i + 1]! < lo - 1; i += 2) out.push(r[i]!, r[i + 1]!);
    let nlo = lo;
    let nhi = hi;
    while (i < r.length && r[i]! <= hi + 1) {
      nlo = Math.min(nlo, r[i]!);
      nhi = Math.max(nhi, r[i + 1]!);
      i += 2;
    }
    out.push(nlo, nhi);
    for (; i < r.length; i += 2) out.push(r[i]!, r[i + 1]!);
    this.r = out;
    return true;
  }

  addAll(other: Ranges): void {
    for (let i = 0; i < other.r.length; i += 2) this.add(other.r[i]!, other.r[i + 1]!);
  }

  negate(): void {
    const out: number[] = [];
    let next = 0;
    for (let i = 0; i < this.r.length; i += 2) {
      if (this.r[i]! > next) out.push(next, this.r[i]! - 1);
      next = this.r[i + 1]! + 1;
    }
    if (next <= RUNE_MAX) out.push(next, RUNE_MAX);
    this.r = out;
  }

  equals(o: Ranges): boolean {
    return this.r.length === o.r.length && this.r.every((x, i) => x === o.r[i]);
  }

  /** Every ASCII letter is in the class with its other case, or neither is (CharClass::FoldsASCII). */
  foldsAscii(): boolean {
    for (let c = 0x41; c <= 0x5a; c++) if (this.contains(c) !== this.contains(c + 0x20)) return false;
    return true;
  }
}

// ---- Case folding. RE2 folds with the simple case foldings of Unicode's CaseFolding.txt: ASCII letters
// pair with their other case, and two of them with a third rune (k, K, U+212A KELVIN SIGN; s, S, U+017F
// LONG S). Beyond ASCII the orbits need tables; a rune there is known not to fold only when it has no
// case at all (its lower and upper case are itself, by the JavaScript engine's Unicode data, which is at
// least as new as RE2's: case pairs never change once encoded).

const ORBITS: number[][] = [
  [0x4b, 0x6b, 0x212a],
  [0x53, 0x73, 0x17f],
];
const JS_UNICODE_OK = (() => {
  const [major = 0, minor = 0] = (process.versions.unicode ?? '0').split('.').map(Number);
  return major > 15 || (major === 15 && minor >= 1);
})();

let cased: number[] | undefined;
/**
 * Ranges of the runes beyond ASCII that have a case (lo0, hi0, lo1, …), found once. Nothing above the
 * Supplementary Multilingual Plane has a case in any Unicode version (planes 2 and 3 are ideographs).
 */
function casedRanges(): number[] {
  if (cased) return cased;
  if (!JS_UNICODE_OK) return (cased = [0x80, RUNE_MAX]);
  const out: number[] = [];
  for (let c = 0x80; c <= 0x1ffff; c++) {
    if (c === 0xd800) c = 0xe000;
    const s = String.fromCodePoint(c);
    if (s.toLowerCase() === s && s.toUpperCase() === s) continue;
    if (out.length && out[out.length - 1] === c - 1) out[out.length - 1] = c;
    else out.push(c, c);
  }
  return (cased = out);
}

/** The first rune of lo-hi beyond ASCII that has a case, other than U+017F and U+212A. */
function firstCased(lo: number, hi: number): number | undefined {
  const r = casedRanges();
  for (let i = 0; i < r.length; i += 2) {
    if (r[i + 1]! < lo) continue;
    if (r[i]! > hi) return undefined;
    for (let c = Math.max(lo, r[i]!); c <= Math.min(hi, r[i + 1]!); c++) if (c !== 0x17f && c !== 0x212a) return c;
  }
  return undefined;
}

function unknownCase(c: number): never {
  throw new Unknown(`it matches ${JSON.stringify(String.fromCodePoint(c))} regardless of case`);
}

/** The runes RE2 treats as `c` under (?i), itself included (a cycle of CycleFoldRune). */
function orbit(c: number): number[] {
  for (const o of ORBITS) if (o.includes(c)) return o;
  if (c >= 0x41 && c <= 0x5a) return [c, c + 0x20];
  if (c >= 0x61 && c <= 0x7a) return [c - 0x20, c];
  if (c >= 0x80 && firstCased(c, c) !== undefined) unknownCase(c);
  return [c];
}

/** AddFoldedRange: lo-hi and every rune case folding relates to one of them. */
function addFolded(cc: Ranges, lo: number, hi: number): void {
  cc.add(lo, hi);
  const beyond = firstCased(Math.max(lo, 0x80), hi);
  if (beyond !== undefined) unknownCase(beyond);
  for (let c = lo; c <= Math.min(hi, 0x7f); c++) for (const o of orbit(c)) cc.add(o, o);
  for (const c of [0x17f, 0x212a]) if (lo <= c && c <= hi) for (const o of orbit(c)) cc.add(o, o);
}

function addRangeFlags(cc: Ranges, lo: number, hi: number, flags: number): void {
  // CLASS_NL is always set here (RE2::Options), so newlines are never cut from classes.
  if (flags & FOLD_CASE) addFolded(cc, lo, hi);
  else cc.add(lo, hi);
}

// Perl and POSIX classes (perl_groups.cc): [ranges, sign].
const PERL_GROUPS: Record<string, [number[], number]> = {
  '\\d': [[0x30, 0x39], 1],
  '\\D': [[0x30, 0x39], -1],
  '\\s': [[0x9, 0xa, 0xc, 0xd, 0x20, 0x20], 1],
  '\\S': [[0x9, 0xa, 0xc, 0xd, 0x20, 0x20], -1],
  '\\w': [[0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a], 1],
  '\\W': [[0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a], -1],
};
const POSIX: Record<string, number[]> = {
  alnum: [0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a],
  alpha: [0x41, 0x5a, 0x61, 0x7a],
  ascii: [0x0, 0x7f],
  blank: [0x9, 0x9, 0x20, 0x20],
  cntrl: [0x0, 0x1f, 0x7f, 0x7f],
  digit: [0x30, 0x39],
  graph: [0x21, 0x7e],
  lower: [0x61, 0x7a],
  print: [0x20, 0x7e],
  punct: [0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e],
  space: [0x9, 0xd, 0x20, 0x20],
  upper: [0x41, 0x5a],
  word: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a],
  xdigit: [0x30, 0x39, 0x41, 0x46, 0x61, 0x66],
};

/** AddUGroup: a group's ranges, or their complement. */
function addGroup(cc: Ranges, ranges: readonly number[], sign: number, flags: number): void {
  if (sign > 0) {
    for (let i = 0; i < ranges.length; i += 2) addRangeFlags(cc, ranges[i]!, ranges[i + 1]!, flags);
    return;
  }
  if (flags & FOLD_CASE) {
    const folded = new Ranges();
    addGroup(folded, ranges, 1, flags);
    folded.negate();
    cc.addAll(folded);
    return;
  }
  let next = 0;
  for (let i = 0; i < ranges.length; i += 2) {
    if (next < ranges[i]!) addRangeFlags(cc, next, ranges[i]! - 1, flags);
    next = ranges[i + 1]! + 1;
  }
  if (next <= RUNE_MAX) addRangeFlags(cc, next, RUNE_MAX, flags);
}

// ---- The parse tree.

interface Re {
  op: number;
  flags: number;
  subs: Re[];
  rune: number;
  runes: number[];
  min: number;
  max: number;
  cap: number;
  name: string | undefined;
  cc: Ranges | undefined;
  /** A class the parser is building (RE2's ccb_): pushing it may turn it into a literal; merged ones never. */
  building: boolean;
  /** The parser's stack link. */
  down: Re | undefined;
}

function node(op: number, flags: number, subs: Re[] = []): Re {
  return {
    op,
    flags,
    subs,
    rune: 0,
    runes: [],
    min: 0,
    max: 0,
    cap: 0,
    name: undefined,
    cc: undefined,
    building: false,
    down: undefined,
  };
}

function literalNode(rune: number, flags: number): Re {
  const re = node(LITERAL, flags);
  re.rune = rune;
  return re;
}

function classNode(cc: Ranges, flags: number, building = false): Re {
  const re = node(CHAR_CLASS, flags);
  re.cc = cc;
  re.building = building;
  return re;
}

function literalString(runes: readonly number[], flags: number): Re {
  if (runes.length === 0) return node(EMPTY_MATCH, flags);
  if (runes.length === 1) return literalNode(runes[0]!, flags);
  const re = node(LITERAL_STRING, flags);
  re.runes = [...runes];
  return re;
}

function concatOrAlternate(op: number, subs: Re[], flags: number, canFactor: boolean): Re {
  if (subs.length === 1) return subs[0]!;
  if (subs.length === 0) return node(op === ALTERNATE ? NO_MATCH : EMPTY_MATCH, flags);
  if (op === ALTERNATE && canFactor) {
    subs = factorAlternation([...subs], flags);
    if (subs.length === 1) return subs[0]!;
  }
  if (subs.length > MAX_NSUB) {
    const big: Re[] = [];
    for (let i = 0; i < subs.length; i += MAX_NSUB)
      big.push(concatOrAlternate(op, subs.slice(i, i + MAX_NSUB), flags, false));
    return node(op, flags, big);
  }
  return node(op, flags, [...subs]);
}

const concat = (subs: Re[], flags: number) => concatOrAlternate(CONCAT, subs, flags, false);
const alternateNoFactor = (subs: Re[], flags: number) => concatOrAlternate(ALTERNATE, subs, flags, false);

/** Regexp::Star, Plus and Quest: x** is x*, and x+? or x?+ (same flags) is x*. */
function starPlusOrQuest(op: number, sub: Re, flags: number): Re {
  if (op === sub.op && flags === sub.flags) return sub;
  if ((sub.op === STAR || sub.op === PLUS || sub.op === QUEST) && flags === sub.flags)
    return sub.op === STAR ? sub : node(STAR, flags, [sub.subs[0]!]);
  return node(op, flags, [sub]);
}

function topEqual(a: Re, b: Re): boolean {
  if (a.op !== b.op) return false;
  switch (a.op) {
    case END_TEXT:
      return ((a.flags ^ b.flags) & WAS_DOLLAR) === 0;
    case LITERAL:
      return a.rune === b.rune && ((a.flags ^ b.flags) & FOLD_CASE) === 0;
    case LITERAL_STRING:
      return (
        ((a.flags ^ b.flags) & FOLD_CASE) === 0 &&
        a.runes.length === b.runes.length &&
        a.runes.every((r, i) => r === b.runes[i])
      );
    case ALTERNATE:
    case CONCAT:
      return a.subs.length === b.subs.length;
    case STAR:
    case PLUS:
    case QUEST:
      return ((a.flags ^ b.flags) & NON_GREEDY) === 0;
    case REPEAT:
      return ((a.flags ^ b.flags) & NON_GREEDY) === 0 && a.min === b.min && a.max === b.max;
    case CAPTURE:
      return a.cap === b.cap && a.name === b.name;
    case CHAR_CLASS:
      return a.cc!.equals(b.cc!);
    default:
      return true;
  }
}

function equal(a: Re, b: Re): boolean {
  if (!topEqual(a, b)) return false;
  for (let i = 0; i < a.subs.length; i++) if (!equal(a.subs[i]!, b.subs[i]!)) return false;
  return true;
}

// ---- Factoring alternations (parse.cc FactorAlternation), done as RE2 does it, round by round.

function leadingString(re: Re): { runes: number[]; flags: number } {
  while (re.op === CONCAT && re.subs.length > 0) re = re.subs[0]!;
  const flags = re.flags & FOLD_CASE;
  if (re.op === LITERAL) return { runes: [re.rune], flags };
  if (re.op === LITERAL_STRING) return { runes: re.runes, flags };
  return { runes: [], flags };
}

/** Replaces re's fields with other's (Regexp::Swap: re is the parent's pointer, other is dropped). */
function become(re: Re, other: Re): void {
  Object.assign(re, other);
}

function removeLeadingString(re: Re, n: number): void {
  const stack: Re[] = [];
  while (re.op === CONCAT) {
    if (stack.length < 4) stack.push(re);
    re = re.subs[0]!;
  }
  if (re.op === LITERAL) {
    re.rune = 0;
    re.op = EMPTY_MATCH;
  } else if (re.op === LITERAL_STRING) {
    if (n >= re.runes.length) {
      re.runes = [];
      re.op = EMPTY_MATCH;
    } else if (n === re.runes.length - 1) {
      re.rune = re.runes[re.runes.length - 1]!;
      re.runes = [];
      re.op = LITERAL;
    } else re.runes = re.runes.slice(n);
  }
  while (stack.length) {
    const c = stack.pop()!;
    if (c.subs[0]!.op !== EMPTY_MATCH) continue;
    if (c.subs.length <= 1) {
      c.subs = [];
      c.op = EMPTY_MATCH;
    } else if (c.subs.length === 2) become(c, c.subs[1]!);
    else c.subs = c.subs.slice(1);
  }
}

function leadingRegexp(re: Re): Re | undefined {
  if (re.op === EMPTY_MATCH) return undefined;
  if (re.op === CONCAT && re.subs.length >= 2) return re.subs[0]!.op === EMPTY_MATCH ? undefined : re.subs[0];
  return re;
}

function removeLeadingRegexp(re: Re): Re {
  if (re.op === EMPTY_MATCH) return re;
  if (re.op === CONCAT && re.subs.length >= 2) {
    if (re.subs[0]!.op === EMPTY_MATCH) return re;
    if (re.subs.length === 2) return re.subs[1]!;
    re.subs = re.subs.slice(1);
    return re;
  }
  return node(EMPTY_MATCH, re.flags);
}

interface Splice {
  prefix: Re;
  start: number;
  n: number;
}

function round1(sub: Re[]): Splice[] {
  const splices: Splice[] = [];
  let start = 0;
  let runes: number[] = [];
  let nrune = 0;
  let runeflags = 0;
  for (let i = 0; i <= sub.length; i++) {
    let runesI: number[] = [];
    let flagsI = 0;
    if (i < sub.length) {
      ({ runes: runesI, flags: flagsI } = leadingString(sub[i]!));
      if (flagsI === runeflags) {
        let same = 0;
        while (same < nrune && same < runesI.length && runes[same] === runesI[same]) same++;
        if (same > 0) {
          nrune = same;
          continue;
        }
      }
    }
    if (i - start >= 2) {
      const prefix = literalString(runes.slice(0, nrune), runeflags);
      for (let j = start; j < i; j++) removeLeadingString(sub[j]!, nrune);
      splices.push({ prefix, start, n: i - start });
    }
    if (i < sub.length) {
      start = i;
      runes = runesI;
      nrune = runesI.length;
      runeflags = flagsI;
    }
  }
  return splices;
}

function round2(sub: Re[]): Splice[] {
  const splices: Splice[] = [];
  let start = 0;
  let first: Re | undefined;
  for (let i = 0; i <= sub.length; i++) {
    let firstI: Re | undefined;
    if (i < sub.length) {
      firstI = leadingRegexp(sub[i]!);
      if (
        first !== undefined &&
        firstI !== undefined &&
        (first.op === BEGIN_LINE ||
          first.op === END_LINE ||
          first.op === WORD_BOUNDARY ||
          first.op === NO_WORD_BOUNDARY ||
          first.op === BEGIN_TEXT ||
          first.op === END_TEXT ||
          first.op === CHAR_CLASS ||
          first.op === ANY_CHAR ||
          first.op === ANY_BYTE ||
          (first.op === REPEAT &&
            first.min === first.max &&
            [LITERAL, CHAR_CLASS, ANY_CHAR, ANY_BYTE].includes(first.subs[0]!.op))) &&
        equal(first, firstI)
      )
        continue;
    }
    if (i - start >= 2) {
      const prefix = first!;
      for (let j = start; j < i; j++) sub[j] = removeLeadingRegexp(sub[j]!);
      splices.push({ prefix, start, n: i - start });
    }
    if (i < sub.length) {
      start = i;
      first = firstI;
    }
  }
  return splices;
}

function round3(sub: Re[], flags: number): Splice[] {
  const splices: Splice[] = [];
  let start = 0;
  let first: Re | undefined;
  const single = (re: Re) => re.op === LITERAL || re.op === CHAR_CLASS;
  for (let i = 0; i <= sub.length; i++) {
    let firstI: Re | undefined;
    if (i < sub.length) {
      firstI = sub[i]!;
      if (first !== undefined && single(first) && single(firstI)) continue;
    }
    if (i - start >= 2) {
      const cc = new Ranges();
      for (let j = start; j < i; j++) {
        const re = sub[j]!;
        if (re.op === CHAR_CLASS) {
          for (let k = 0; k < re.cc!.r.length; k += 2) addRangeFlags(cc, re.cc!.r[k]!, re.cc!.r[k + 1]!, re.flags);
        } else if (re.flags & FOLD_CASE) {
          const tmp = new Ranges();
          addRangeFlags(tmp, re.rune, re.rune, re.flags);
          cc.addAll(tmp);
        } else addRangeFlags(cc, re.rune, re.rune, re.flags);
      }
      splices.push({ prefix: classNode(cc, flags & ~FOLD_CASE), start, n: i - start });
    }
    if (i < sub.length) {
      start = i;
      first = firstI;
    }
  }
  return splices;
}

function factorAlternation(sub: Re[], flags: number): Re[] {
  for (let round = 1; round <= 3; round++) {
    const splices = round === 1 ? round1(sub) : round === 2 ? round2(sub) : round3(sub, flags);
    if (splices.length === 0) continue;
    const out: Re[] = [];
    let i = 0;
    for (const s of splices) {
      while (i < s.start) out.push(sub[i++]!);
      if (round === 3) out.push(s.prefix);
      else {
        const suffixes = factorAlternation(sub.slice(s.start, s.start + s.n), flags);
        out.push(concat([s.prefix, alternateNoFactor(suffixes, flags)], flags));
      }
      i += s.n;
    }
    while (i < sub.length) out.push(sub[i++]!);
    sub = out;
  }
  return sub;
}

// ---- The parser (parse.cc), over the pattern's UTF-8 bytes as RE2 reads them.

function decode(b: Uint8Array, p: number): [rune: number, len: number] {
  const c = b[p]!;
  if (c < 0x80) return [c, 1];
  const n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
  let r = c & (0x7f >> n);
  for (let i = 1; i < n; i++) r = (r << 6) | (b[p + i]! & 0x3f);
  return [r, n];
}

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const unhex = (c: number) => (isDigit(c) ? c - 0x30 : (c | 0x20) - 0x61 + 10);
const isAlnum = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const ch = (s: string) => s.charCodeAt(0);

function depthOf(re: Re, depth = 0): number {
  if (depth > MAX_DEPTH) throw new Unknown(`it nests more than ${MAX_DEPTH} deep`);
  let d = depth;
  for (const s of re.subs) d = Math.max(d, depthOf(s, depth + 1));
  return d;
}

/** RepetitionWalker: nested counted repetitions whose counts multiply past 1000 are refused. */
function repetitionBudget(re: Re, budget: number): number {
  let arg = budget;
  if (re.op === REPEAT) {
    const m = re.max < 0 ? re.min : re.max;
    if (m > 0) arg = Math.trunc(arg / m);
  }
  let out = arg;
  for (const s of re.subs) out = Math.min(out, repetitionBudget(s, arg));
  return out;
}

class Parser {
  private flags = RE2_OPTIONS_FLAGS;
  private top: Re | undefined;
  private ncap = 0;
  private p = 0;

  constructor(private readonly b: Uint8Array) {}

  private static marker(op: number): boolean {
    return op >= LEFT_PAREN;
  }

  parse(): Re {
    const b = this.b;
    let lastUnary = false;
    while (this.p < b.length) {
      let unary = false;
      const c = b[this.p]!;
      if (c === ch('(')) {
        if (b[this.p + 1] === ch('?')) this.perlFlags();
        else {
          this.leftParen(++this.ncap, undefined);
          this.p++;
        }
      } else if (c === ch('|')) {
        this.verticalBar();
        this.p++;
      } else if (c === ch(')')) {
        this.rightParen();
        this.p++;
      } else if (c === ch('^')) {
        this.pushSimple(this.flags & ONE_LINE ? BEGIN_TEXT : BEGIN_LINE);
        this.p++;
      } else if (c === ch('$')) {
        if (this.flags & ONE_LINE) this.push(node(END_TEXT, this.flags | WAS_DOLLAR));
        else this.pushSimple(END_LINE);
        this.p++;
      } else if (c === ch('.')) {
        if (this.flags & DOT_NL) this.pushSimple(ANY_CHAR);
        else {
          const cc = new Ranges();
          cc.add(0, 9);
          cc.add(11, RUNE_MAX);
          this.push(classNode(cc, this.flags & ~FOLD_CASE, true));
        }
        this.p++;
      } else if (c === ch('[')) {
        this.push(this.charClass());
      } else if (c === ch('*') || c === ch('+') || c === ch('?')) {
        this.p++;
        const nongreedy = b[this.p] === ch('?');
        if (nongreedy) this.p++;
        if (lastUnary) throw new Refused('bad repetition operator');
        this.repeatOp(c === ch('*') ? STAR : c === ch('+') ? PLUS : QUEST, nongreedy);
        unary = true;
      } else if (c === ch('{')) {
        const rep = this.countedRepetition();
        if (!rep) {
          this.pushLiteral(ch('{'));
          this.p++;
        } else {
          const nongreedy = b[this.p] === ch('?');
          if (nongreedy) this.p++;
          if (lastUnary) throw new Refused('bad repetition operator');
          this.repetition(rep[0], rep[1], nongreedy);
          unary = true;
        }
      } else if (c === ch('\\')) {
        this.backslash();
      } else {
        const [r, n] = decode(b, this.p);
        this.p += n;
        this.pushLiteral(r);
      }
      lastUnary = unary;
    }
    this.alternation();
    const re = this.top;
    if (!re || re.down) throw new Refused('missing )');
    re.down = undefined;
    return re;
  }

  private backslash(): void {
    const b = this.b;
    const next = b[this.p + 1];
    if (next === ch('b') || next === ch('B')) {
      this.pushSimple(next === ch('b') ? WORD_BOUNDARY : NO_WORD_BOUNDARY);
      this.p += 2;
      return;
    }
    if (next === ch('A') || next === ch('z') || next === ch('C')) {
      this.pushSimple(next === ch('A') ? BEGIN_TEXT : next === ch('z') ? END_TEXT : ANY_BYTE);
      this.p += 2;
      return;
    }
    if (next === ch('Q')) {
      this.p += 2;
      while (this.p < b.length) {
        if (b[this.p] === ch('\\') && b[this.p + 1] === ch('E')) {
          this.p += 2;
          break;
        }
        const [r, n] = decode(b, this.p);
        this.p += n;
        this.pushLiteral(r);
      }
      return;
    }
    if (next === ch('p') || next === ch('P')) {
      const cc = new Ranges();
      this.unicodeGroup(cc);
      this.push(classNode(cc, this.flags & ~FOLD_CASE, true));
      return;
    }
    const group = this.perlGroup();
    if (group) {
      const cc = new Ranges();
      addGroup(cc, group[0], group[1], this.flags);
      this.push(classNode(cc, this.flags & ~FOLD_CASE, true));
      return;
    }
    this.pushLiteral(this.escape());
  }

  private perlGroup(): [number[], number] | undefined {
    if (this.b[this.p] !== ch('\\') || this.p + 1 >= this.b.length) return undefined;
    const g = PERL_GROUPS[String.fromCharCode(this.b[this.p]!, this.b[this.p + 1]!)];
    if (g) this.p += 2;
    return g;
  }

  /** \pN, \p{Name}, \PN, \P{^Name}: only Any is known here; the rest need Unicode's tables. */
  private unicodeGroup(cc: Ranges): void {
    const b = this.b;
    let sign = b[this.p + 1] === ch('P') ? -1 : 1;
    this.p += 2;
    if (this.p >= b.length) throw new Refused('invalid character class range');
    let name: string;
    if (b[this.p] !== ch('{')) {
      const [r, n] = decode(b, this.p);
      this.p += n;
      name = String.fromCodePoint(r);
    } else {
      const end = b.indexOf(ch('}'), this.p);
      if (end < 0) throw new Refused('invalid character class range');
      name = Buffer.from(b.subarray(this.p + 1, end)).toString('utf8');
      this.p = end + 1;
    }
    if (name.startsWith('^')) {
      sign = -sign;
      name = name.slice(1);
    }
    if (name !== 'Any') throw new Unknown(`\\p{${name}} needs Unicode tables`);
    addGroup(cc, [0, RUNE_MAX], sign, this.flags);
  }

  /** ParseEscape: one escaped rune. */
  private escape(): number {
    const b = this.b;
    this.p++;
    if (this.p >= b.length) throw new Refused('trailing \\');
    let [c, n] = decode(b, this.p);
    this.p += n;
    if (c >= ch('1') && c <= ch('7')) {
      // A lone digit would be a backreference; \1 to \7 followed by an octal digit is an octal escape.
      if (!(b[this.p]! >= ch('0') && b[this.p]! <= ch('7'))) throw new Refused('invalid escape sequence');
    }
    if (c >= ch('0') && c <= ch('7')) {
      let code = c - ch('0');
      for (let k = 0; k < 2 && b[this.p]! >= ch('0') && b[this.p]! <= ch('7'); k++) code = code * 8 + b[this.p++]! - 48;
      return code;
    }
    if (c === ch('x')) {
      if (this.p >= b.length) throw new Refused('invalid escape sequence');
      [c, n] = decode(b, this.p);
      this.p += n;
      if (c === ch('{')) {
        let nhex = 0;
        let code = 0;
        if (this.p >= b.length) throw new Refused('invalid escape sequence');
        [c, n] = decode(b, this.p);
        this.p += n;
        while (isHex(c)) {
          nhex++;
          code = code * 16 + unhex(c);
          if (code > RUNE_MAX || this.p >= b.length) throw new Refused('invalid escape sequence');
          [c, n] = decode(b, this.p);
          this.p += n;
        }
        if (c !== ch('}') || nhex === 0) throw new Refused('invalid escape sequence');
        return code;
      }
      if (this.p >= b.length) throw new Refused('invalid escape sequence');
      const [c1, n1] = decode(b, this.p);
      this.p += n1;
      if (!isHex(c) || !isHex(c1)) throw new Refused('invalid escape sequence');
      return unhex(c) * 16 + unhex(c1);
    }
    const simple: Record<number, number> = { 110: 10, 114: 13, 116: 9, 97: 7, 102: 12, 118: 11 };
    if (simple[c] !== undefined) return simple[c]!;
    if (c < 0x80 && !isAlnum(c)) return c;
    throw new Refused('invalid escape sequence');
  }

  private countedRepetition(): [number, number] | undefined {
    const b = this.b;
    let q = this.p + 1;
    const int = (): number | undefined => {
      if (!isDigit(b[q])) return undefined;
      if (b[q] === ch('0') && isDigit(b[q + 1])) return undefined;
      let v = 0;
      while (isDigit(b[q])) {
        if (v >= 100_000_000) return undefined;
        v = v * 10 + b[q++]! - 48;
      }
      return v;
    };
    const lo = int();
    if (lo === undefined || q >= b.length) return undefined;
    let hi = lo;
    if (b[q] === ch(',')) {
      q++;
      if (q >= b.length) return undefined;
      if (b[q] === ch('}')) hi = -1;
      else {
        const h = int();
        if (h === undefined) return undefined;
        hi = h;
      }
    }
    if (b[q] !== ch('}')) return undefined;
    this.p = q + 1;
    return [lo, hi];
  }

  private charClass(): Re {
    const b = this.b;
    this.p++;
    const cc = new Ranges();
    const re = classNode(cc, this.flags & ~FOLD_CASE, true);
    let negated = false;
    if (b[this.p] === ch('^')) {
      this.p++;
      negated = true;
    }
    let first = true;
    while (this.p < b.length && (b[this.p] !== ch(']') || first)) {
      first = false;
      if (b.length - this.p > 2 && b[this.p] === ch('[') && b[this.p + 1] === ch(':') && this.posixClass(cc)) continue;
      if (b.length - this.p > 2 && b[this.p] === ch('\\') && (b[this.p + 1] === ch('p') || b[this.p + 1] === ch('P'))) {
        this.unicodeGroup(cc);
        continue;
      }
      const group = this.perlGroup();
      if (group) {
        addGroup(cc, group[0], group[1], this.flags);
        continue;
      }
      const lo = this.classChar();
      let hi = lo;
      if (b.length - this.p >= 2 && b[this.p] === ch('-') && b[this.p + 1] !== ch(']')) {
        this.p++;
        hi = this.classChar();
        if (hi < lo) throw new Refused('invalid character class range');
      }
      addRangeFlags(cc, lo, hi, this.flags | CLASS_NL);
    }
    if (this.p >= b.length) throw new Refused('missing ]');
    this.p++;
    if (negated) cc.negate();
    return re;
  }

  private classChar(): number {
    if (this.p >= this.b.length) throw new Refused('missing ]');
    if (this.b[this.p] === ch('\\')) return this.escape();
    const [r, n] = decode(this.b, this.p);
    this.p += n;
    return r;
  }

  private posixClass(cc: Ranges): boolean {
    const b = this.b;
    let q = this.p + 2;
    while (q <= b.length - 2 && !(b[q] === ch(':') && b[q + 1] === ch(']'))) q++;
    if (q > b.length - 2) return false;
    const name = Buffer.from(b.subarray(this.p + 2, q)).toString('latin1');
    const negated = name.startsWith('^');
    const ranges = POSIX[negated ? name.slice(1) : name];
    if (!ranges) throw new Refused('invalid character class range');
    this.p = q + 2;
    addGroup(cc, ranges, negated ? -1 : 1, this.flags);
    return true;
  }

  private perlFlags(): void {
    const b = this.b;
    const at = (i: number) => b[this.p + i];
    const left = b.length - this.p;
    if (
      (left > 3 && (at(2) === ch('=') || at(2) === ch('!'))) ||
      (left > 4 && at(2) === ch('<') && (at(3) === ch('=') || at(3) === ch('!')))
    )
      throw new Refused('invalid perl operator');
    if ((left > 4 && at(2) === ch('P') && at(3) === ch('<')) || (left > 3 && at(2) === ch('<'))) {
      const begin = this.p + (at(2) === ch('P') ? 4 : 3);
      const end = b.indexOf(ch('>'), begin);
      if (end < 0) throw new Refused('invalid named capture group');
      const name = Buffer.from(b.subarray(begin, end)).toString('utf8');
      if (!/^[A-Za-z0-9_]+$/.test(name)) {
        if (/^[\x00-\x7f]*$/.test(name)) throw new Refused('invalid named capture group');
        throw new Unknown('a group name beyond ASCII needs Unicode tables');
      }
      this.leftParen(++this.ncap, name);
      this.p = end + 1;
      return;
    }
    let q = this.p + 2;
    let negated = false;
    let sawFlag = false;
    let flags = this.flags;
    for (;;) {
      if (q >= b.length) throw new Refused('invalid perl operator');
      const [c, n] = decode(b, q);
      q += n;
      if (c === ch('i')) {
        sawFlag = true;
        flags = negated ? flags & ~FOLD_CASE : flags | FOLD_CASE;
      } else if (c === ch('m')) {
        sawFlag = true;
        flags = negated ? flags | ONE_LINE : flags & ~ONE_LINE;
      } else if (c === ch('s')) {
        sawFlag = true;
        flags = negated ? flags & ~DOT_NL : flags | DOT_NL;
      } else if (c === ch('U')) {
        sawFlag = true;
        flags = negated ? flags & ~NON_GREEDY : flags | NON_GREEDY;
      } else if (c === ch('-')) {
        if (negated) throw new Refused('invalid perl operator');
        negated = true;
        sawFlag = false;
      } else if (c === ch(':')) {
        this.leftParen(-1, undefined);
        break;
      } else if (c === ch(')')) break;
      else throw new Refused('invalid perl operator');
    }
    if (negated && !sawFlag) throw new Refused('invalid perl operator');
    this.flags = flags;
    this.p = q;
  }

  // -- The stack (ParseState).

  private push(re: Re): void {
    this.maybeConcatString(-1, 0);
    if (re.op === CHAR_CLASS && re.building && re.cc) {
      const cc = re.cc;
      const n = cc.nrunes;
      const lo = cc.r[0]!;
      if (n === 1) re = literalNode(lo, this.flags);
      else if (n === 2 && lo >= 0x41 && lo <= 0x5a && cc.contains(lo + 0x20))
        re = literalNode(lo + 0x20, this.flags | FOLD_CASE);
    }
    re.down = this.top;
    this.top = re;
  }

  private pushSimple(op: number): void {
    this.push(node(op, this.flags));
  }

  private pushLiteral(r: number): void {
    if (this.flags & FOLD_CASE) {
      const o = orbit(r);
      if (o.length > 1) {
        const cc = new Ranges();
        for (const x of o) cc.add(x, x);
        this.push(classNode(cc, this.flags & ~FOLD_CASE, true));
        return;
      }
    }
    if (this.maybeConcatString(r, this.flags)) return;
    this.push(literalNode(r, this.flags));
  }

  /** Merges the two literals on top of the stack; with r >= 0 the top one becomes r (no new node). */
  private maybeConcatString(r: number, flags: number): boolean {
    const re1 = this.top;
    const re2 = re1?.down;
    if (!re1 || !re2) return false;
    if (re1.op !== LITERAL && re1.op !== LITERAL_STRING) return false;
    if (re2.op !== LITERAL && re2.op !== LITERAL_STRING) return false;
    if ((re1.flags & FOLD_CASE) !== (re2.flags & FOLD_CASE)) return false;
    if (re2.op === LITERAL) {
      re2.op = LITERAL_STRING;
      re2.runes = [re2.rune];
    }
    if (re1.op === LITERAL) re2.runes.push(re1.rune);
    else {
      re2.runes.push(...re1.runes);
      re1.runes = [];
    }
    if (r >= 0) {
      re1.op = LITERAL;
      re1.rune = r;
      re1.flags = flags;
      return true;
    }
    this.top = re2;
    return false;
  }

  private repeatOp(op: number, nongreedy: boolean): void {
    const top = this.top;
    if (!top || Parser.marker(top.op)) throw new Refused('missing argument to repetition operator');
    const fl = nongreedy ? this.flags ^ NON_GREEDY : this.flags;
    if (op === top.op && fl === top.flags) return;
    if ((top.op === STAR || top.op === PLUS || top.op === QUEST) && fl === top.flags) {
      top.op = STAR;
      return;
    }
    const re = node(op, fl, [top]);
    re.down = top.down;
    top.down = undefined;
    this.top = re;
  }

  private repetition(min: number, max: number, nongreedy: boolean): void {
    if ((max !== -1 && max < min) || min > MAX_REPEAT || max > MAX_REPEAT) throw new Refused('invalid repetition size');
    const top = this.top;
    if (!top || Parser.marker(top.op)) throw new Refused('missing argument to repetition operator');
    const re = node(REPEAT, nongreedy ? this.flags ^ NON_GREEDY : this.flags, [top]);
    re.min = min;
    re.max = max;
    re.down = top.down;
    top.down = undefined;
    this.top = re;
    if ((min >= 2 || max >= 2) && repetitionBudget(re, MAX_REPEAT) === 0) throw new Refused('invalid repetition size');
  }

  private leftParen(cap: number, name: string | undefined): void {
    const re = node(LEFT_PAREN, this.flags);
    re.cap = cap;
    re.name = name;
    this.push(re);
  }

  private verticalBar(): void {
    this.maybeConcatString(-1, 0);
    this.concatenation();
    const r1 = this.top;
    const r2 = r1?.down;
    if (r1 && r2 && r2.op === VERTICAL_BAR) {
      const r3 = r2.down;
      const swallows = (re: Re) => re.op === LITERAL || re.op === CHAR_CLASS || re.op === ANY_CHAR;
      if (r3 && r3.op === ANY_CHAR && swallows(r1)) {
        this.top = r2;
        return;
      }
      if (r3 && r1.op === ANY_CHAR && swallows(r3)) {
        r1.down = r3.down;
        r2.down = r1;
        this.top = r2;
        return;
      }
      r1.down = r2.down;
      r2.down = r1;
      this.top = r2;
      return;
    }
    this.pushSimple(VERTICAL_BAR);
  }

  private rightParen(): void {
    this.alternation();
    const r1 = this.top;
    const r2 = r1?.down;
    if (!r1 || !r2 || r2.op !== LEFT_PAREN) throw new Refused('unexpected )');
    this.top = r2.down;
    this.flags = r2.flags;
    r1.down = undefined;
    let re = r2;
    if (r2.cap > 0) {
      re.op = CAPTURE;
      re.subs = [r1];
    } else re = r1;
    this.push(re);
  }

  private collapse(op: number): void {
    const items: Re[] = [];
    let sub = this.top;
    while (sub && !Parser.marker(sub.op)) {
      items.push(sub);
      sub = sub.down;
    }
    if (items.length === 1) return;
    const subs: Re[] = [];
    for (let i = items.length - 1; i >= 0; i--) {
      const it = items[i]!;
      it.down = undefined;
      if (it.op === op) subs.push(...it.subs);
      else subs.push(it);
    }
    const re = concatOrAlternate(op, subs, this.flags, true);
    re.down = sub;
    this.top = re;
  }

  private concatenation(): void {
    if (!this.top || Parser.marker(this.top.op)) this.push(node(EMPTY_MATCH, this.flags));
    this.collapse(CONCAT);
  }

  private alternation(): void {
    this.verticalBar();
    this.top = this.top!.down;
    this.collapse(ALTERNATE);
  }
}

// ---- Simplification (simplify.cc): coalescing, then counted repetitions written out.

function canCoalesce(r1: Re, r2: Re): boolean {
  const rep = (re: Re) => re.op === STAR || re.op === PLUS || re.op === QUEST || re.op === REPEAT;
  if (!rep(r1)) return false;
  const s = r1.subs[0]!;
  if (![LITERAL, CHAR_CLASS, ANY_CHAR, ANY_BYTE].includes(s.op)) return false;
  if (rep(r2) && equal(s, r2.subs[0]!) && (r1.flags & NON_GREEDY) === (r2.flags & NON_GREEDY)) return true;
  if (equal(s, r2)) return true;
  return (
    s.op === LITERAL &&
    r2.op === LITERAL_STRING &&
    r2.runes[0] === s.rune &&
    (s.flags & FOLD_CASE) === (r2.flags & FOLD_CASE)
  );
}

function doCoalesce(args: Re[], i: number): void {
  const r1 = args[i]!;
  const r2 = args[i + 1]!;
  const nre = node(REPEAT, r1.flags, [r1.subs[0]!]);
  if (r1.op === STAR) [nre.min, nre.max] = [0, -1];
  else if (r1.op === PLUS) [nre.min, nre.max] = [1, -1];
  else if (r1.op === QUEST) [nre.min, nre.max] = [0, 1];
  else [nre.min, nre.max] = [r1.min, r1.max];
  const leaveEmpty = () => {
    args[i] = node(EMPTY_MATCH, 0);
    args[i + 1] = nre;
  };
  switch (r2.op) {
    case STAR:
      nre.max = -1;
      return leaveEmpty();
    case PLUS:
      nre.min++;
      nre.max = -1;
      return leaveEmpty();
    case QUEST:
      if (nre.max !== -1) nre.max++;
      return leaveEmpty();
    case REPEAT:
      nre.min += r2.min;
      if (r2.max === -1) nre.max = -1;
      else if (nre.max !== -1) nre.max += r2.max;
      return leaveEmpty();
    case LITERAL:
    case CHAR_CLASS:
    case ANY_CHAR:
    case ANY_BYTE:
      nre.min++;
      if (nre.max !== -1) nre.max++;
      return leaveEmpty();
    case LITERAL_STRING: {
      const r = r1.subs[0]!.rune;
      let n = 1;
      while (n < r2.runes.length && r2.runes[n] === r) n++;
      nre.min += n;
      if (nre.max !== -1) nre.max += n;
      if (n === r2.runes.length) return leaveEmpty();
      args[i] = nre;
      args[i + 1] = literalString(r2.runes.slice(n), r2.flags);
      return;
    }
  }
}

function copyWith(re: Re, subs: Re[]): Re {
  const n = node(re.op, re.flags, subs);
  n.min = re.min;
  n.max = re.max;
  n.cap = re.cap;
  n.name = re.name;
  return n;
}

function coalesce(re: Re, memo: Map<Re, Re>, visits: { n: number }): Re {
  const known = memo.get(re);
  if (known) return known;
  if (--visits.n < 0) throw new Refused('pattern too large - compile failed');
  let out: Re;
  if (re.subs.length === 0) out = re;
  else {
    const args: Re[] = [];
    let changed = false;
    for (const s of re.subs) {
      args.push(coalesce(s, memo, visits));
      changed ||= args[args.length - 1] !== s;
    }
    let can = false;
    if (re.op === CONCAT) for (let i = 0; i + 1 < args.length && !can; i++) can = canCoalesce(args[i]!, args[i + 1]!);
    if (!can) out = changed ? copyWith(re, args) : re;
    else {
      for (let i = 0; i + 1 < args.length; i++) if (canCoalesce(args[i]!, args[i + 1]!)) doCoalesce(args, i);
      out = node(
        re.op,
        re.flags,
        args.filter((a) => a.op !== EMPTY_MATCH),
      );
    }
  }
  memo.set(re, out);
  return out;
}

const EMPTY_OPS = [BEGIN_LINE, END_LINE, WORD_BOUNDARY, NO_WORD_BOUNDARY, BEGIN_TEXT, END_TEXT];

function simplifyRepeat(re: Re, min: number, max: number, f: number): Re {
  const emptyOp = (r: Re) => EMPTY_OPS.includes(r.op);
  if (emptyOp(re) || ((re.op === CONCAT || re.op === ALTERNATE) && re.subs.every(emptyOp))) {
    min = Math.min(min, 1);
    max = Math.min(max, 1);
  }
  if (max === -1) {
    if (min === 0) return starPlusOrQuest(STAR, re, f);
    if (min === 1) return starPlusOrQuest(PLUS, re, f);
    const subs: Re[] = [];
    for (let i = 0; i < min - 1; i++) subs.push(re);
    subs.push(starPlusOrQuest(PLUS, re, f));
    return concat(subs, f);
  }
  if (min === 0 && max === 0) return node(EMPTY_MATCH, f);
  if (min === 1 && max === 1) return re;
  let nre: Re | undefined;
  if (min > 0) {
    const subs: Re[] = [];
    for (let i = 0; i < min; i++) subs.push(re);
    nre = concat(subs, f);
  }
  if (max > min) {
    let suf = starPlusOrQuest(QUEST, re, f);
    for (let i = min + 1; i < max; i++) suf = starPlusOrQuest(QUEST, node(CONCAT, f, [re, suf]), f);
    nre = nre === undefined ? suf : node(CONCAT, f, [nre, suf]);
  }
  return nre ?? node(NO_MATCH, f);
}

function simplify(re: Re, memo: Map<Re, Re>, visits: { n: number }): Re {
  const known = memo.get(re);
  if (known) return known;
  if (--visits.n < 0) throw new Refused('pattern too large - compile failed');
  let out: Re;
  switch (re.op) {
    case CONCAT:
    case ALTERNATE:
    case CAPTURE: {
      const args: Re[] = [];
      let changed = false;
      for (const s of re.subs) {
        args.push(simplify(s, memo, visits));
        changed ||= args[args.length - 1] !== s;
      }
      out = changed ? copyWith(re, args) : re;
      break;
    }
    case STAR:
    case PLUS:
    case QUEST: {
      const sub = simplify(re.subs[0]!, memo, visits);
      if (sub.op === EMPTY_MATCH) out = sub;
      else if (sub === re.subs[0]) out = re;
      else if (re.op === sub.op && re.flags === sub.flags) out = sub;
      else out = node(re.op, re.flags, [sub]);
      break;
    }
    case REPEAT: {
      const sub = simplify(re.subs[0]!, memo, visits);
      out = sub.op === EMPTY_MATCH ? sub : simplifyRepeat(sub, re.min, re.max, re.flags);
      break;
    }
    case CHAR_CLASS: {
      const n = re.cc!.nrunes;
      out = n === 0 ? node(NO_MATCH, re.flags) : n === RUNE_MAX + 1 ? node(ANY_CHAR, re.flags) : re;
      break;
    }
    default:
      out = re;
  }
  memo.set(re, out);
  return out;
}

/** IsAnchorStart / IsAnchorEnd: a leading `^` (trailing `$`) taken out, within four levels. */
function stripAnchor(re: Re, depth: number, start: boolean): Re | undefined {
  if (depth >= 4) return undefined;
  if (re.op === CONCAT && re.subs.length > 0) {
    const k = start ? 0 : re.subs.length - 1;
    const sub = stripAnchor(re.subs[k]!, depth + 1, start);
    if (!sub) return undefined;
    const subs = [...re.subs];
    subs[k] = sub;
    return concat(subs, re.flags);
  }
  if (re.op === CAPTURE) {
    const sub = stripAnchor(re.subs[0]!, depth + 1, start);
    return sub ? copyWith(re, [sub]) : undefined;
  }
  if (re.op === (start ? BEGIN_TEXT : END_TEXT)) return node(EMPTY_MATCH, re.flags);
  return undefined;
}

// ---- The compiler (compile.cc) and the program (prog.cc).

const I_ALT = 0;
const I_ALT_MATCH = 1;
const I_BYTE_RANGE = 2;
const I_CAPTURE = 3;
const I_EMPTY_WIDTH = 4;
const I_MATCH = 5;
const I_NOP = 6;
const I_FAIL = 7;

/** Instructions RE2 allows with Envoy's 8 MiB (two thirds to the forward program; 432 and 8 bytes a Prog, an Inst). */
const MAX_INST = Math.floor((Math.floor(((8 << 20) * 2) / 3) - 432) / 8);

interface Frag {
  begin: number;
  head: number;
  tail: number;
  nullable: boolean;
}
const NO_FRAG: Frag = { begin: 0, head: 0, tail: 0, nullable: false };

class Compiler {
  op = new Uint8Array(64);
  out = new Int32Array(64);
  out1 = new Int32Array(64);
  lo = new Uint8Array(64);
  hi = new Uint8Array(64);
  fold = new Uint8Array(64);
  ninst = 0;
  private cache = new Map<number, number>();
  private range: Frag = NO_FRAG;

  constructor() {
    this.op[this.alloc(1)] = I_FAIL;
  }

  alloc(n: number): number {
    if (this.ninst + n > MAX_INST) throw new Refused('pattern too large - compile failed');
    while (this.ninst + n > this.op.length) {
      const grow = <T extends Uint8Array | Int32Array>(a: T): T => {
        const b = new (a.constructor as new (n: number) => T)(a.length * 2);
        b.set(a);
        return b;
      };
      this.op = grow(this.op);
      this.out = grow(this.out);
      this.out1 = grow(this.out1);
      this.lo = grow(this.lo);
      this.hi = grow(this.hi);
      this.fold = grow(this.fold);
    }
    const id = this.ninst;
    this.ninst += n;
    for (let i = id; i < this.ninst; i++) this.op[i] = this.out[i] = this.out1[i] = 0;
    return id;
  }

  private patch(head: number, p: number): void {
    while (head !== 0) {
      const ip = head >> 1;
      if (head & 1) {
        head = this.out1[ip]!;
        this.out1[ip] = p;
      } else {
        head = this.out[ip]!;
        this.out[ip] = p;
      }
    }
  }

  private append(h1: number, t1: number, h2: number, t2: number): [number, number] {
    if (h1 === 0) return [h2, t2];
    if (h2 === 0) return [h1, t1];
    if (t1 & 1) this.out1[t1 >> 1] = h2;
    else this.out[t1 >> 1] = h2;
    return [h1, t2];
  }

  cat(a: Frag, b: Frag): Frag {
    if (a.begin === 0 || b.begin === 0) return NO_FRAG;
    if (this.op[a.begin] === I_NOP && a.head === a.begin << 1 && this.out[a.begin] === 0) {
      this.patch(a.head, b.begin);
      return b;
    }
    this.patch(a.head, b.begin);
    return { begin: a.begin, head: b.head, tail: b.tail, nullable: a.nullable && b.nullable };
  }

  alt(a: Frag, b: Frag): Frag {
    if (a.begin === 0) return b;
    if (b.begin === 0) return a;
    const id = this.alloc(1);
    this.op[id] = I_ALT;
    this.out[id] = a.begin;
    this.out1[id] = b.begin;
    const [head, tail] = this.append(a.head, a.tail, b.head, b.tail);
    return { begin: id, head, tail, nullable: a.nullable || b.nullable };
  }

  /** The loop instruction of x*, x+ and x?: its free exit is out1 when greedy, out when not. */
  private loop(a: Frag, nongreedy: boolean): [id: number, exit: number] {
    const id = this.alloc(1);
    this.op[id] = I_ALT;
    if (nongreedy) {
      this.out[id] = 0;
      this.out1[id] = a.begin;
      return [id, id << 1];
    }
    this.out[id] = a.begin;
    this.out1[id] = 0;
    return [id, (id << 1) | 1];
  }

  plus(a: Frag, nongreedy: boolean): Frag {
    const [id, exit] = this.loop(a, nongreedy);
    this.patch(a.head, id);
    return { begin: a.begin, head: exit, tail: exit, nullable: a.nullable };
  }

  star(a: Frag, nongreedy: boolean): Frag {
    if (a.nullable) return this.quest(this.plus(a, nongreedy), nongreedy);
    const [id, exit] = this.loop(a, nongreedy);
    this.patch(a.head, id);
    return { begin: id, head: exit, tail: exit, nullable: true };
  }

  quest(a: Frag, nongreedy: boolean): Frag {
    if (a.begin === 0) return this.nop();
    const [id, exit] = this.loop(a, nongreedy);
    const [head, tail] = this.append(exit, exit, a.head, a.tail);
    return { begin: id, head, tail, nullable: true };
  }

  private single(op: number, nullable: boolean): Frag {
    const id = this.alloc(1);
    this.op[id] = op;
    return { begin: id, head: id << 1, tail: id << 1, nullable };
  }

  byteRange(lo: number, hi: number, fold: boolean): Frag {
    const f = this.single(I_BYTE_RANGE, false);
    this.lo[f.begin] = lo;
    this.hi[f.begin] = hi;
    this.fold[f.begin] = fold ? 1 : 0;
    return f;
  }

  nop(): Frag {
    return this.single(I_NOP, true);
  }

  emptyWidth(): Frag {
    return this.single(I_EMPTY_WIDTH, true);
  }

  match(): Frag {
    const id = this.alloc(1);
    this.op[id] = I_MATCH;
    return { begin: id, head: 0, tail: 0, nullable: false };
  }

  capture(a: Frag): Frag {
    if (a.begin === 0) return NO_FRAG;
    const id = this.alloc(2);
    this.op[id] = this.op[id + 1] = I_CAPTURE;
    this.out[id] = a.begin;
    this.patch(a.head, id + 1);
    const end = (id + 1) << 1;
    return { begin: id, head: end, tail: end, nullable: a.nullable };
  }

  // -- Character classes as UTF-8 byte ranges, suffixes shared through a cache.

  beginRange(): void {
    this.cache.clear();
    this.range = NO_FRAG;
  }

  private uncachedSuffix(lo: number, hi: number, fold: boolean, next: number): number {
    const f = this.byteRange(lo, hi, fold);
    if (next !== 0) this.patch(f.head, next);
    else {
      const [head, tail] = this.append(this.range.head, this.range.tail, f.head, f.tail);
      this.range = { ...this.range, head, tail };
    }
    return f.begin;
  }

  private static key(lo: number, hi: number, fold: boolean, next: number): number {
    return next * 131072 + lo * 512 + hi * 2 + (fold ? 1 : 0);
  }

  private cachedSuffix(lo: number, hi: number, fold: boolean, next: number): number {
    const key = Compiler.key(lo, hi, fold, next);
    const known = this.cache.get(key);
    if (known !== undefined) return known;
    const id = this.uncachedSuffix(lo, hi, fold, next);
    this.cache.set(key, id);
    return id;
  }

  private isCached(id: number): boolean {
    return this.cache.has(Compiler.key(this.lo[id]!, this.hi[id]!, this.fold[id] === 1, this.out[id]!));
  }

  private addSuffix(id: number): void {
    if (this.range.begin === 0) {
      this.range = { ...this.range, begin: id };
      return;
    }
    this.range = { ...this.range, begin: this.addSuffixRecursive(this.range.begin, id) };
  }

  private sameRange(a: number, b: number): boolean {
    return this.lo[a] === this.lo[b] && this.hi[a] === this.hi[b] && this.fold[a] === this.fold[b];
  }

  /** FindByteRange (forward): the alternative of root that starts with id's byte range. */
  private findByteRange(root: number, id: number): { at: number; head: number } | undefined {
    if (this.op[root] === I_BYTE_RANGE) return this.sameRange(root, id) ? { at: root, head: 0 } : undefined;
    if (this.op[root] === I_ALT && this.sameRange(this.out1[root]!, id)) return { at: root, head: (root << 1) | 1 };
    return undefined;
  }

  private addSuffixRecursive(root: number, id: number): number {
    const f = this.findByteRange(root, id);
    if (!f) {
      const alt = this.alloc(1);
      this.op[alt] = I_ALT;
      this.out[alt] = root;
      this.out1[alt] = id;
      return alt;
    }
    let br = f.head === 0 ? root : f.head & 1 ? this.out1[f.at]! : this.out[f.at]!;
    if (this.isCached(br)) {
      const copy = this.alloc(1);
      this.op[copy] = I_BYTE_RANGE;
      this.lo[copy] = this.lo[br]!;
      this.hi[copy] = this.hi[br]!;
      this.fold[copy] = this.fold[br]!;
      this.out[copy] = this.out[br]!;
      br = copy;
      if (f.head === 0) root = br;
      else if (f.head & 1) this.out1[f.at] = br;
      else this.out[f.at] = br;
    }
    let out = this.out[id]!;
    if (!this.isCached(id)) {
      this.op[id] = this.out[id] = this.out1[id] = 0;
      this.ninst--;
    }
    out = this.addSuffixRecursive(this.out[br]!, out);
    this.out[br] = out;
    return root;
  }

  private add80to10ffff(): void {
    const cont1 = this.uncachedSuffix(0x80, 0xbf, false, 0);
    this.addSuffix(this.uncachedSuffix(0xc2, 0xdf, false, cont1));
    const cont2 = this.uncachedSuffix(0x80, 0xbf, false, cont1);
    this.addSuffix(this.uncachedSuffix(0xe0, 0xef, false, cont2));
    const cont3 = this.uncachedSuffix(0x80, 0xbf, false, cont2);
    this.addSuffix(this.uncachedSuffix(0xf0, 0xf4, false, cont3));
  }

  addRuneRange(lo: number, hi: number, fold: boolean): void {
    if (lo > hi) return;
    if (lo === 0x80 && hi === 0x10ffff) return this.add80to10ffff();
    // Split at the boundaries of 1-, 2- and 3-byte encodings.
    for (const max of [0x7f, 0x7ff, 0xffff]) {
      if (lo <= max && max < hi) {
        this.addRuneRange(lo, max, fold);
        this.addRuneRange(max + 1, hi, fold);
        return;
      }
    }
    if (hi < 0x80) return this.addSuffix(this.uncachedSuffix(lo, hi, fold, 0));
    // Split until lo and hi differ only in whole trailing continuation bytes.
    for (let i = 1; i < 4; i++) {
      const m = (1 << (6 * i)) - 1;
      if ((lo & ~m) !== (hi & ~m)) {
        if ((lo & m) !== 0) {
          this.addRuneRange(lo, lo | m, fold);
          this.addRuneRange((lo | m) + 1, hi, fold);
          return;
        }
        if ((hi & m) !== m) {
          this.addRuneRange(lo, (hi & ~m) - 1, fold);
          this.addRuneRange(hi & ~m, hi, fold);
          return;
        }
      }
    }
    const ulo = utf8(lo);
    const uhi = utf8(hi);
    const n = ulo.length;
    let id = 0;
    for (let i = n - 1; i >= 0; i--) {
      if (i === n - 1 || (ulo[i]! < uhi[i]! && i !== 0)) id = this.cachedSuffix(ulo[i]!, uhi[i]!, false, id);
      else id = this.uncachedSuffix(ulo[i]!, uhi[i]!, false, id);
    }
    this.addSuffix(id);
  }

  endRange(): Frag {
    return this.range;
  }

  literal(r: number, fold: boolean): Frag {
    if (r < 0x80) return this.byteRange(r, r, fold);
    const bytes = utf8(r);
    let f = this.byteRange(bytes[0]!, bytes[0]!, false);
    for (let i = 1; i < bytes.length; i++) f = this.cat(f, this.byteRange(bytes[i]!, bytes[i]!, false));
    return f;
  }
}

function utf8(r: number): number[] {
  return [...Buffer.from(String.fromCodePoint(r), 'utf8')];
}

/** One node, its children compiled (RE2's Compiler::PostVisit). */
function compileNode(c: Compiler, re: Re, kids: Frag[]): Frag {
  const nongreedy = (re.flags & NON_GREEDY) !== 0;
  switch (re.op) {
    case NO_MATCH:
      return NO_FRAG;
    case EMPTY_MATCH:
      return c.nop();
    case CONCAT:
      return kids.slice(1).reduce((f, k) => c.cat(f, k), kids[0]!);
    case ALTERNATE:
      return kids.slice(1).reduce((f, k) => c.alt(f, k), kids[0]!);
    case STAR:
      return c.star(kids[0]!, nongreedy);
    case PLUS:
      return c.plus(kids[0]!, nongreedy);
    case QUEST:
      return c.quest(kids[0]!, nongreedy);
    case LITERAL:
      return c.literal(re.rune, (re.flags & FOLD_CASE) !== 0);
    case LITERAL_STRING: {
      let f = NO_FRAG;
      re.runes.forEach((r, i) => {
        const f1 = c.literal(r, (re.flags & FOLD_CASE) !== 0);
        f = i === 0 ? f1 : c.cat(f, f1);
      });
      return re.runes.length ? f : c.nop();
    }
    case ANY_CHAR:
      c.beginRange();
      c.addRuneRange(0, RUNE_MAX, false);
      return c.endRange();
    case ANY_BYTE:
      return c.byteRange(0, 0xff, false);
    case CHAR_CLASS: {
      const cc = re.cc!;
      if (cc.r.length === 0) throw new Refused('pattern too large - compile failed');
      const foldAscii = cc.foldsAscii();
      c.beginRange();
      for (let i = 0; i < cc.r.length; i += 2) {
        const lo = cc.r[i]!;
        const hi = cc.r[i + 1]!;
        if (foldAscii && lo >= 0x41 && hi <= 0x5a) continue;
        let fold = foldAscii;
        if ((lo <= 0x41 && hi >= 0x7a) || hi < 0x41 || lo > 0x7a || (lo > 0x5a && hi < 0x61)) fold = false;
        c.addRuneRange(lo, hi, fold);
      }
      return c.endRange();
    }
    case CAPTURE:
      return re.cap < 0 ? kids[0]! : c.capture(kids[0]!);
    case BEGIN_LINE:
    case END_LINE:
    case BEGIN_TEXT:
    case END_TEXT:
    case WORD_BOUNDARY:
    case NO_WORD_BOUNDARY:
      return c.emptyWidth();
  }
  throw new Refused('pattern too large - compile failed');
}

/**
 * The whole tree, children first and left to right as RE2's walker visits them (instruction numbers, and so
 * the flattened program, depend on the order), without recursion: simplified trees nest thousands deep.
 */
function compileTree(c: Compiler, root: Re): Frag {
  // Regexp::Walker::WalkExponential with 2 * max_ninst_ visits: past that RE2 gives up compiling.
  let visits = 2 * MAX_INST - 1;
  const stack: { re: Re; kids: Frag[]; next: number }[] = [{ re: root, kids: [], next: 0 }];
  for (;;) {
    const top = stack[stack.length - 1]!;
    if (top.re.op !== REPEAT && top.next < top.re.subs.length) {
      if (--visits < 0) throw new Refused('pattern too large - compile failed');
      stack.push({ re: top.re.subs[top.next++]!, kids: [], next: 0 });
      continue;
    }
    stack.pop();
    const frag = compileNode(c, top.re, top.kids);
    if (stack.length === 0) return frag;
    stack[stack.length - 1]!.kids.push(frag);
  }
}

/** Prog::Optimize: Nops skipped; x|.* loops at a match marked AltMatch. Only what `start` reaches. */
function optimize(c: Compiler, start: number): void {
  const queue: number[] = [];
  const seen = new Set<number>();
  const add = (id: number) => {
    if (id === 0 || seen.has(id)) return;
    seen.add(id);
    queue.push(id);
  };
  const skipNops = (j: number) => {
    while (j !== 0 && c.op[j] === I_NOP) j = c.out[j]!;
    return j;
  };
  add(start);
  for (let k = 0; k < queue.length; k++) {
    const id = queue[k]!;
    c.out[id] = skipNops(c.out[id]!);
    add(c.out[id]!);
    if (c.op[id] === I_ALT) {
      c.out1[id] = skipNops(c.out1[id]!);
      add(c.out1[id]!);
    }
  }
  const isMatch = (id: number): boolean => {
    for (;;) {
      const op = c.op[id];
      if (op === I_CAPTURE || op === I_NOP) id = c.out[id]!;
      else return op === I_MATCH;
    }
  };
  const anyByteBack = (j: number, id: number) =>
    c.op[j] === I_BYTE_RANGE && c.out[j] === id && c.lo[j] === 0 && c.hi[j] === 0xff;
  queue.length = 0;
  seen.clear();
  add(start);
  for (let k = 0; k < queue.length; k++) {
    const id = queue[k]!;
    add(c.out[id]!);
    if (c.op[id] !== I_ALT) continue;
    add(c.out1[id]!);
    const j = c.out[id]!;
    const l = c.out1[id]!;
    if ((anyByteBack(j, id) && isMatch(l)) || (isMatch(j) && anyByteBack(l, id))) c.op[id] = I_ALT_MATCH;
  }
}

/** Prog::Flatten's instruction count: one list per root, Alts dissolved into the lists. */
function flattenedSize(c: Compiler, start: number, startUnanchored: number): number {
  const roots = new Set<number>([0, startUnanchored, start]);
  const preds = new Map<number, number[]>();
  const isAlt = (op: number) => op === I_ALT || op === I_ALT_MATCH;
  const consumes = (op: number) => op === I_BYTE_RANGE || op === I_CAPTURE || op === I_EMPTY_WIDTH;
  // MarkSuccessors: the targets of consuming instructions are roots; Alts' edges are remembered.
  {
    const reachable = new Set<number>();
    const stack = [startUnanchored];
    while (stack.length) {
      let id = stack.pop()!;
      while (!reachable.has(id)) {
        reachable.add(id);
        const op = c.op[id]!;
        if (isAlt(op)) {
          for (const o of [c.out[id]!, c.out1[id]!]) {
            let list = preds.get(o);
            if (!list) preds.set(o, (list = []));
            list.push(id);
          }
          stack.push(c.out1[id]!);
          id = c.out[id]!;
        } else if (consumes(op)) {
          roots.add(c.out[id]!);
          id = c.out[id]!;
        } else if (op === I_NOP) id = c.out[id]!;
        else break;
      }
    }
  }
  // MarkDominator, from the highest root down: what a root reaches through Alts but is also reached
  // from outside it becomes a root of its own.
  const sorted = [...roots].sort((a, b) => a - b);
  for (let i = sorted.length - 1; i > 0; i--) {
    const root = sorted[i]!;
    if (root === startUnanchored || root === start) continue;
    const reachable = new Set<number>();
    const stack = [root];
    while (stack.length) {
      let id = stack.pop()!;
      while (!reachable.has(id)) {
        reachable.add(id);
        if (id !== root && roots.has(id)) break;
        const op = c.op[id]!;
        if (isAlt(op)) {
          stack.push(c.out1[id]!);
          id = c.out[id]!;
        } else if (op === I_NOP) id = c.out[id]!;
        else break;
      }
    }
    for (const id of reachable) for (const p of preds.get(id) ?? []) if (!reachable.has(p)) roots.add(id);
  }
  // EmitList: each root's list holds every instruction its Alts lead to, other roots as one Nop each.
  let size = 0;
  for (const root of roots) {
    const reachable = new Set<number>();
    const stack = [root];
    while (stack.length) {
      let id = stack.pop()!;
      while (!reachable.has(id)) {
        reachable.add(id);
        if (id !== root && roots.has(id)) {
          size++;
          break;
        }
        const op = c.op[id]!;
        if (isAlt(op)) {
          if (op === I_ALT_MATCH) size++;
          stack.push(c.out1[id]!);
          id = c.out[id]!;
        } else if (op === I_NOP) id = c.out[id]!;
        else {
          size++;
          break;
        }
      }
    }
  }
  return size;
}

/** RE2::Init then Compiler::Compile: the forward program's size. */
function programSize(pattern: string): number {
  const bytes = new Uint8Array(Buffer.from(pattern, 'utf8'));
  let re = new Parser(bytes).parse();
  depthOf(re);
  // RequiredPrefix: `^literal…` is matched as a string before the program runs; the rest is compiled.
  if (re.op === CONCAT) {
    let i = 0;
    while (i < re.subs.length && re.subs[i]!.op === BEGIN_TEXT) i++;
    if (i > 0 && i < re.subs.length && (re.subs[i]!.op === LITERAL || re.subs[i]!.op === LITERAL_STRING)) {
      re = i + 1 < re.subs.length ? concat(re.subs.slice(i + 1), re.flags) : node(EMPTY_MATCH, re.flags);
    }
  }
  const visits = { n: 1_000_000 };
  const coalesced = coalesce(re, new Map(), visits);
  visits.n = 1_000_000;
  let sre = simplify(coalesced, new Map(), visits);
  const anchoredStart = stripAnchor(sre, 0, true);
  if (anchoredStart) sre = anchoredStart;
  const anchoredEnd = stripAnchor(sre, 0, false);
  if (anchoredEnd) sre = anchoredEnd;
  const c = new Compiler();
  let all = compileTree(c, sre);
  all = c.cat(all, c.match());
  const start = all.begin;
  if (!anchoredStart) {
    const any = c.byteRange(0, 0xff, false);
    all = c.cat(c.star(any, true), all);
  }
  const startUnanchored = all.begin;
  if (start === 0 && startUnanchored === 0) return 1;
  optimize(c, start);
  return flattenedSize(c, start, startUnanchored);
}

const sizes = new Map<string, Re2ProgramSize>();

/**
 * RE2's program size for `pattern` (what Envoy compares with re2.max_program_size.error_level), or why it is
 * not known here: RE2 would refuse the pattern, or its size depends on Unicode tables this module does not
 * have. Either way a pattern without a size is one to refuse. Results are cached.
 */
export function re2ProgramSize(pattern: string): Re2ProgramSize {
  let known = sizes.get(pattern);
  if (known) return known;
  try {
    if (/\p{Surrogate}/u.test(pattern)) throw new Refused('invalid UTF-8');
    known = { size: programSize(pattern) };
  } catch (e) {
    if (e instanceof Refused) known = { why: `RE2 refuses it: ${e.message}` };
    else if (e instanceof Unknown) known = { why: `its RE2 program size is not known here: ${e.message}` };
    else if (e instanceof RangeError) known = { why: 'its RE2 program size is not known here: it nests too deep' };
    else throw e;
  }
  sizes.set(pattern, known);
  if (sizes.size > 10_000) sizes.delete(sizes.keys().next().value!);
  return known;
}
