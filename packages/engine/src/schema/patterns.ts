// OpenAPI `pattern`s run as the API server runs them: with Go's regexp, which is RE2 — linear in the
// length of the value, and unanchored unless the pattern anchors itself. A backtracking engine (a
// JavaScript RegExp) takes exponential time on patterns such as the Gateway API's header value
// `^[!-~]+([\t ]?[!-~]+)*$`: one 41-character value ending in a space hung `analyze -f`. So every
// pattern runs on RE2JS, the port of RE2 the translator and the CEL library already use.
import { RE2JS } from '@bufbuild/re2';
import type { CrdSchema } from './crd-schemas.js';

const compiled = new Map<string, RE2JS>();

/** The pattern compiled once; throws, naming the pattern and RE2's reason, when RE2 cannot compile it. */
export function compilePattern(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (!re) {
    try {
      re = RE2JS.compile(pattern);
    } catch (e) {
      const why = (e as Error).message.replace(/^error parsing regexp: /, '');
      throw new Error(`RE2 cannot compile the pattern ${JSON.stringify(pattern)}: ${why}`);
    }
    compiled.set(pattern, re);
  }
  return re;
}

/** Whether the pattern matches somewhere in the value, as Go's regexp.MatchString answers. */
export function matchesPattern(pattern: string, value: string): boolean {
  return compilePattern(pattern).test(value);
}

/** A schema node with a `pattern`, at a path written with `[*]` for list items and `.*` for map values. */
export interface PatternField {
  path: string;
  schema: CrdSchema & { pattern: string };
}

/**
 * Every node with a `pattern` in a schema, wherever values are checked: properties, map values, list
 * items and the oneOf/anyOf/allOf/not forms (which constrain the same value, so keep its path).
 */
export function patternFields(schema: CrdSchema): PatternField[] {
  const out: PatternField[] = [];
  const visit = (node: CrdSchema, at: string) => {
    if (node.pattern !== undefined) out.push({ path: at, schema: node as PatternField['schema'] });
    for (const [name, child] of Object.entries(node.properties ?? {})) visit(child, at ? `${at}.${name}` : name);
    if (typeof node.additionalProperties === 'object') visit(node.additionalProperties, `${at}.*`);
    if (node.items) visit(node.items, `${at}[*]`);
    for (const form of [...(node.oneOf ?? []), ...(node.anyOf ?? []), ...(node.allOf ?? [])]) visit(form, at);
    if (node.not) visit(node.not, at);
  };
  visit(schema, '');
  return out;
}
