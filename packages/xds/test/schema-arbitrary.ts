// Random values shaped by a CRD's OpenAPI schema: required fields always, optional ones sometimes
// (none below a depth), enums, numeric bounds and meaningful numbers, patterns (fast-check's stringMatching), and
// strings from a pool of the values that mean something to a gateway besides random text. Whether
// a value also passes the CEL rules is for the API server's check (validateManifest) to say.
import type { CrdSchema } from '@turnpike/engine';
import fc from 'fast-check';

const MEANINGFUL = [
  '',
  '/',
  '/a',
  '/a/',
  '/a/b',
  '/.*',
  '^/a(/.*)?$',
  '(',
  'a',
  'x-a',
  'X-A',
  '*',
  '*.example.com',
  'a.example.com',
  'example.com',
  'http',
  'https',
  'HTTP',
  'HTTPS',
  'TLS',
  'TCP',
  'UDP',
  'GET',
  '0s',
  '1ms',
  '10s',
  'Exact',
  'svc',
  'gw',
];

/** Ports and weights that mean something: well-known, shifted (80 → 10080), the proxy's admin port. */
const MEANINGFUL_NUMBERS = [0, 1, 53, 80, 443, 8080, 10080, 10443, 19000];

const DEEPEST = 7;

function numberArbitrary(schema: CrdSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? 0;
  const max = schema.maximum ?? Math.max(min, 100_000);
  const pool = MEANINGFUL_NUMBERS.filter((n) => n >= min && n <= max);
  return fc.oneof(
    ...(pool.length ? [fc.constantFrom(...pool)] : []),
    fc.integer({ min, max: Math.min(max, min + 10) }),
    fc.integer({ min, max }),
  );
}

function stringArbitrary(s: CrdSchema): fc.Arbitrary<string> {
  const fits = (v: string) =>
    (s.maxLength === undefined || v.length <= s.maxLength) &&
    (s.minLength === undefined || v.length >= s.minLength) &&
    (s.pattern === undefined || new RegExp(s.pattern, 'u').test(v));
  const pool = MEANINGFUL.filter(fits);
  const options: fc.Arbitrary<string>[] = [];
  if (pool.length) options.push(fc.constantFrom(...pool), fc.constantFrom(...pool));
  if (s.pattern) {
    try {
      options.push(fc.stringMatching(new RegExp(s.pattern)).filter(fits));
    } catch {
      // A pattern JavaScript cannot generate from: the pool (or short text) stands in.
    }
  }
  options.push(fc.string({ maxLength: Math.min(s.maxLength ?? 12, 12) }).filter(fits));
  return fc.oneof(...options);
}

/**
 * Listener ports that collide when shifted or with the proxy's own: drawn often, so that Gateways
 * with two of them are frequent.
 */
const PORTS = [80, 443, 8080, 10080, 10443, 19000, 53];
/** Listener protocols we serve: drawn often, so that listeners are programmed and get routes. */
const PROTOCOLS = ['HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP'];

/** An arbitrary for `schema`; `depth` counts the objects above; `name` is the property it is for. */
export function schemaArbitrary(schema: CrdSchema, depth = 0, name = ''): fc.Arbitrary<unknown> {
  if (name === 'port' && (schema.type === 'integer' || schema.type === 'number'))
    return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PORTS) }, numberArbitrary(schema));
  if (name === 'protocol' && schema.type === 'string')
    return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PROTOCOLS) }, stringArbitrary(schema));
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  if (schema['x-kubernetes-int-or-string']) return fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant('50%'));
  switch (schema.type) {
    case 'object': {
      const props = schema.properties ?? {};
      if (!Object.keys(props).length) return fc.constant({});
      const required = new Set(schema.required ?? []);
      const keys = Object.keys(props).filter((k) => required.has(k) || depth < DEEPEST);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const k of keys) model[k] = schemaArbitrary(props[k]!, depth + 1, k);
      return fc.record(model, { requiredKeys: keys.filter((k) => required.has(k)) });
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      const max = Math.max(min, Math.min(schema.maxItems ?? 3, 3));
      return fc.array(schemaArbitrary(schema.items ?? {}, depth + 1), { minLength: min, maxLength: max });
    }
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
    case 'number':
      return numberArbitrary(schema);
    case 'boolean':
      return fc.boolean();
    default:
      return fc.constant({});
  }
}
