// The Kubernetes CEL library functions the CRD rules may use (k8s.io/apiserver/pkg/cel/library): the
// format library with upstream's messages, optional values as cel-go has them, and a rule calling a
// function we lack reported as one that cannot be checked, never passed.
import { describe, expect, it } from '@jest/globals';
import { checkCelRules, evaluateExpression } from '../src/schema/cel-validation.js';
import { allCrdSchemas, type CrdSchema } from '../src/schema/crd-schemas.js';

const run = (expression: string, self: unknown = null) => evaluateExpression(expression, self);
const errorsOf = (format: string, value: string) =>
  run(`format.${format}().validate(self).orValue([]).join('\\n')`, value);

describe('format library', () => {
  it('dns1123Subdomain: none for a subdomain, the upstream messages otherwise', () => {
    expect(run("format.dns1123Subdomain().validate('gateway.example.com').hasValue()")).toBe(false);
    expect(errorsOf('dns1123Subdomain', 'Bad_Domain')).toBe(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must " +
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
    expect(errorsOf('dns1123Subdomain', `${'a'.repeat(254)}`)).toBe('must be no more than 253 characters');
  });

  it('labels: dots are named as such in a DNS-1123 label; a DNS-1035 label starts with a letter', () => {
    expect(errorsOf('dns1123Label', 'a.b')).toBe('must not contain dots');
    expect(errorsOf('dns1123Label', 'web-1')).toBe('');
    expect(errorsOf('dns1035Label', '1web')).toMatch(/^a DNS-1035 label must consist of /);
    expect(errorsOf('labelValue', '')).toBe('');
    expect(errorsOf('labelValue', 'a'.repeat(64))).toBe('must be no more than 63 bytes');
  });

  it('prefixes may end with a dash (the name is generated after it)', () => {
    expect(errorsOf('dns1123LabelPrefix', 'web-')).toBe('');
    expect(errorsOf('dns1123Label', 'web-')).not.toBe('');
    expect(errorsOf('dns1123SubdomainPrefix', 'apps.web-')).toBe('');
    expect(errorsOf('dns1035LabelPrefix', 'web-')).toBe('');
  });

  it('qualifiedName: an optional subdomain prefix and a name, each checked', () => {
    expect(errorsOf('qualifiedName', 'example.com/MyName')).toBe('');
    expect(errorsOf('qualifiedName', 'my.name')).toBe('');
    expect(errorsOf('qualifiedName', '/name')).toBe('prefix part must be non-empty');
    expect(errorsOf('qualifiedName', 'Example.com/x')).toMatch(/^prefix part a lowercase RFC 1123 subdomain /);
    expect(errorsOf('qualifiedName', 'example.com/')).toMatch(/^name part must be non-empty\nname part must /);
    expect(errorsOf('qualifiedName', 'a/b/c')).toMatch(
      /^a valid label key must consist of .* \(e\.g\. 'example\.com\/MyName'\)$/,
    );
  });

  it('uri, uuid, byte, date and datetime', () => {
    expect(errorsOf('uri', 'https://user:pa%20ss@example.com:8443/a%2Fb?q#f')).toBe('');
    expect(errorsOf('uri', 'example.com')).toBe('parse "example.com": invalid URI for request');
    expect(errorsOf('uri', 'http://exa mple.com/')).toBe(
      'parse "http://exa mple.com/": invalid character " " in host name',
    );
    expect(errorsOf('uri', 'http://[::1]:80/')).toBe('');
    expect(errorsOf('uri', 'http://example.com:8x/')).toBe(
      'parse "http://example.com:8x/": invalid port ":8x" after host',
    );
    expect(errorsOf('uri', '/a%zz')).toBe('parse "/a%zz": invalid URL escape "%zz"');
    expect(errorsOf('uuid', '123e4567-e89b-12d3-a456-426614174000')).toBe('');
    expect(errorsOf('uuid', '123e4567')).toBe('does not match the UUID format');
    expect(errorsOf('byte', 'aGVsbG8=')).toBe('');
    expect(errorsOf('byte', 'ZWxpemFiZXRocG9zZXk')).toBe('invalid base64');
    expect(errorsOf('date', '2024-02-29')).toBe('');
    expect(errorsOf('date', '2023-02-29')).toBe('invalid date');
    expect(errorsOf('datetime', '2021-01-01T23:59:59.5+01:00')).toBe('');
    expect(errorsOf('datetime', '2021-01-01T24:00:00Z')).toBe('invalid datetime');
  });

  it('format.named: a format by name, or none', () => {
    expect(run("format.named('uuid').hasValue() && format.named('nope') == optional.none()")).toBe(true);
    expect(run("format.named('dns1123Label').value().validate('a.b').value()[0]")).toBe('must not contain dots');
  });
});

describe('optional values', () => {
  it('of, none, hasValue and value', () => {
    expect(run('optional.of(1).hasValue() && optional.of(1).value() == 1 && !optional.none().hasValue()')).toBe(true);
    expect(() => run('optional.none().value()')).toThrow('optional.none() dereference');
    expect(() => run("'x'.hasValue()")).toThrow(/no matching overload/);
  });

  it('compare by value, in lists and maps too', () => {
    expect(run('optional.of(1) == optional.of(1) && optional.none() == optional.none()')).toBe(true);
    expect(run('optional.of(1) != optional.of(2) && optional.of(1) != optional.none()')).toBe(true);
    expect(run('[optional.of(1)] == [optional.of(2)] || {"a": optional.none()} == {"a": optional.of(0)}')).toBe(false);
    expect(run('optional.of(2) in [optional.of(1), optional.of(2)] && !(optional.none() in [optional.of(1)])')).toBe(
      true,
    );
  });

  it('or and orValue do not evaluate their argument when there is a value', () => {
    expect(run('optional.of(1).orValue(1 / 0) == 1 && optional.none().orValue(2) == 2')).toBe(true);
    expect(run('optional.of(1).or(optional.of(1 / 0)) == optional.of(1)')).toBe(true);
    expect(run('optional.none().or(optional.of(3)).value()')).toBe(3n);
    expect(() => run('optional.none().orValue(1 / 0)')).toThrow(/divi/);
  });

  it('optMap and optFlatMap bind the value', () => {
    expect(run('optional.of(2).optMap(x, x * 3) == optional.of(6)')).toBe(true);
    expect(run('optional.none().optMap(x, x * 3) == optional.none()')).toBe(true);
    expect(run("optional.of('a').optFlatMap(s, s == 'a' ? optional.none() : optional.of(s)).hasValue()")).toBe(false);
    expect(() => run("self.name.optMap(n, n + '!')", { name: 'x' })).toThrow(/no matching overload for 'hasValue'/);
  });

  it('ofNonZeroValue, first, last and unwrap', () => {
    expect(run("optional.ofNonZeroValue('') == optional.none() && optional.ofNonZeroValue([1]).hasValue()")).toBe(true);
    expect(run('optional.ofNonZeroValue(0) == optional.none() && optional.ofNonZeroValue({}) == optional.none()')).toBe(
      true,
    );
    expect(run('[1, 2, 3].first() == optional.of(1) && [1, 2, 3].last() == optional.of(3)')).toBe(true);
    expect(run('[].first() == optional.none()')).toBe(true);
    expect(run('[optional.of(1), optional.none(), optional.of(3)].unwrapOpt() == [1, 3]')).toBe(true);
    expect(run('optional.unwrap([optional.none()]) == []')).toBe(true);
  });
});

describe('rules the engine cannot check', () => {
  const schema = (rule: string): CrdSchema => ({
    type: 'object',
    'x-kubernetes-validations': [{ rule, message: 'm' }],
  });

  it('a function we lack is reported as such, never passed', () => {
    expect(checkCelRules({ a: [1] }, schema('self.a.sum() > 0 && quantity(self.b).isInteger()'), 'spec')).toEqual([
      {
        path: 'spec',
        message:
          'cannot check the rule "self.a.sum() > 0 && quantity(self.b).isInteger()": no support here for .sum(), quantity(), .isInteger()',
      },
    ]);
    expect(checkCelRules({}, schema('format.nope().validate("x").hasValue()'), 'spec')[0]?.message).toMatch(
      /^cannot check the rule .*: no support here for format\.nope\(\)$/,
    );
  });

  it('the optional syntax (a.?b) does not parse here, and says so', () => {
    expect(checkCelRules({}, schema('self.?a.hasValue()'), 'spec')[0]?.message).toMatch(/^cannot check the rule /);
  });

  it('every rule of every schema we carry can be checked (none calls a function we lack)', () => {
    const rules: string[] = [];
    const collect = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach(collect);
      for (const [key, value] of Object.entries(node)) {
        if (key === 'x-kubernetes-validations') rules.push(...(value as { rule: string }[]).map((r) => r.rule));
        else if (key !== 'default' && key !== 'enum') collect(value);
      }
    };
    allCrdSchemas().forEach(collect);
    expect(rules.some((r) => r.includes('format.dns1123Subdomain()'))).toBe(true);
    const unchecked = rules.filter((rule) =>
      checkCelRules(null, { 'x-kubernetes-validations': [{ rule }] }, '').some((e) => e.message.startsWith('cannot')),
    );
    expect(unchecked).toEqual([]);
  });
});
