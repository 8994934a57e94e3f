// The one-pass encoder writes the bytes protobufjs writes from the same JSON-shaped object (fromObject,
// then encode), on every scalar kind, enums by name and number, packed and unpacked lists, maps, nested
// Any, and lengths that take more than one byte; and refuses what protobufjs refuses, with its words.
import { describe, expect, it } from '@jest/globals';
import protobuf from 'protobufjs';
import { encodeJsonMessage } from '../src/message-encoder.js';
import { messageType } from '../src/proto-root.js';

const root = new protobuf.Root();
protobuf.parse(
  `syntax = "proto3"; package google.protobuf;
   message Any { string type_url = 1; bytes value = 2; }`,
  root,
  { keepCase: true },
);
protobuf.parse(
  `syntax = "proto3"; package test;
   enum Color { RED = 0; GREEN = 1; BLUE = 2; }
   message Inner { string name = 1; repeated Inner children = 2; google.protobuf.Any extra = 3; }
   message All {
     double d = 1; float f = 2; int32 i32 = 3; uint32 u32 = 4; sint32 s32 = 5; fixed32 f32 = 6;
     sfixed32 sf32 = 7; int64 i64 = 8; uint64 u64 = 9; sint64 s64 = 10; fixed64 f64 = 11; sfixed64 sf64 = 12;
     bool b = 13; string s = 14; bytes by = 15; Color color = 16; Inner inner = 17;
     repeated int32 packed_ints = 18; repeated string names = 19; repeated Color colors = 20;
     repeated Inner inners = 21; map<string, Inner> by_name = 22; map<int32, string> by_number = 23;
     map<string, Color> color_of = 24; repeated bytes blobs = 25; google.protobuf.Any any = 26;
     oneof choice { string one = 27; Inner other = 28; }
     repeated sint64 packed_sint64 = 29; repeated double packed_doubles = 1000;
   }`,
  root,
  { keepCase: true },
);
root.resolveAll();
const All = root.lookupType('test.All');

function protobufjsBytes(type: protobuf.Type, value: object): Buffer {
  return Buffer.from(type.encode(type.fromObject(value)).finish());
}

const long = (n: number) => 'x'.repeat(n);

const CASES: Record<string, object> = {
  empty: {},
  'zeros are written when present': { d: 0, i32: 0, s: '', b: false, color: 'RED', i64: '0' },
  'numbers at their edges': {
    d: -1.5e300,
    f: 3.25,
    i32: -7,
    u32: 4294967295,
    s32: -2147483648,
    f32: 123456789,
    sf32: -5,
    i64: '-9007199254740993',
    u64: '18446744073709551615',
    s64: '-4611686018427387904',
    f64: '1234567890123',
    sf64: '-2',
  },
  'numbers given as other types': { i32: '42', u32: -1, d: '2.5', i64: 17, u64: 3.9, s64: -3.9, b: 'yes' },
  'strings: unicode, and long enough for a two- and a three-byte length': {
    s: 'héllo wörld ✓ 🚀',
    names: ['', 'a', long(127), long(128), long(20_000), 'ünïcode'.repeat(40)],
  },
  'bytes from base64, arrays and buffers': { by: 'aGVsbG8=', blobs: ['AA==', [1, 2, 300], Buffer.from('zz')] },
  'enums by name and by number, unknown names dropped': { color: 'BLUE', colors: ['GREEN', 2, 'PURPLE', 7] },
  'an unknown enum name leaves the field out': { color: 'PURPLE', s: 'kept' },
  'packed numbers': { packed_ints: [1, -1, 300, 0], packed_sint64: ['-1', '5'], packed_doubles: [0.5, -0] },
  'nested messages, deep and long': {
    inner: { name: 'a', children: [{ name: long(200), children: [{ name: 'c', children: [{ name: long(5000) }] }] }] },
    inners: [{}, { name: 'b' }],
  },
  'maps with message, number and enum values': {
    by_name: { b: { name: 'second' }, a: { name: 'first' }, '': {} },
    by_number: { 5: 'five', '-1': 'minus one' },
    color_of: { sky: 'BLUE', grass: 1, sun: 'YELLOW' },
  },
  'Any by @type, nested in Any': {
    any: {
      '@type': 'type.googleapis.com/test.Inner',
      name: 'outer',
      extra: { '@type': 'test.Inner', name: 'inner' },
    },
    inner: { extra: { type_url: 'raw', value: 'AQI=' } },
  },
  'Any with an unknown @type is read as its own fields': { any: { '@type': 'nowhere/no.Such', type_url: 'u' } },
  'oneof members': { other: { name: 'o' } },
  'null and undefined leave a field out': { s: null, inner: undefined, names: null, by_name: null, d: 1 },
  'keys in any order are written in field order': { s: 'last', d: 1, color: 2, b: true, i32: 3 },
  'keys that are no field are ignored': { nothing: 1, s: 'x' },
};

describe('encodeJsonMessage', () => {
  for (const [name, value] of Object.entries(CASES)) {
    it(`writes what protobufjs writes: ${name}`, () => {
      const expected = protobufjsBytes(All, value);
      expect(encodeJsonMessage(All, value).toString('hex')).toBe(expected.toString('hex'));
    });
  }

  it('writes Envoy resources as protobufjs does, through the Any of a typed config', () => {
    const route = {
      name: 'httproute/apps/web/rule/0/match/0',
      match: { prefix: '/api', headers: [{ name: 'x-env', string_match: { exact: 'prod', ignore_case: true } }] },
      route: {
        weighted_clusters: {
          clusters: [
            { name: 'a', weight: { value: 3 } },
            { name: 'b', weight: { value: 1 } },
          ],
        },
        timeout: { seconds: '15', nanos: 500_000_000 },
        regex_rewrite: { pattern: { regex: '^/api(/.*)$' }, substitution: '\\1' },
      },
      request_headers_to_add: [{ header: { key: 'x-a', value: 'b' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }],
      typed_per_filter_config: {
        'envoy.filters.http.cors': {
          '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy',
          allow_origin_string_match: [{ exact: 'https://example.com' }],
          max_age: '600',
        },
      },
      metadata: { filter_metadata: { turnpike: { fields: { n: { number_value: 2 }, ok: { bool_value: true } } } } },
    };
    const type = messageType('envoy.config.route.v3.Route');
    const bytes = encodeJsonMessage(type, route);
    expect(bytes.toString('hex')).toBe(protobufjsBytes(type, route).toString('hex'));
    // And it reads back as what was written.
    const back = type.toObject(type.decode(bytes), { longs: String, enums: String }) as Record<string, unknown>;
    expect((back.route as { timeout: unknown }).timeout).toEqual({ seconds: '15', nanos: 500_000_000 });
  });

  it.each([
    ['a message field that is not an object', { inner: 'text' }],
    ['a list that is not one', { names: 'a' }],
    ['a list of messages holding a non-object', { inners: [{}, 3] }],
    ['a map that is not an object', { by_name: 'x' }],
  ])('refuses %s with the error protobufjs gives', (_what, value) => {
    let expected: unknown;
    try {
      protobufjsBytes(All, value);
    } catch (e) {
      expected = e;
    }
    expect(expected).toBeInstanceOf(TypeError);
    expect(() => encodeJsonMessage(All, value)).toThrow((expected as Error).message);
  });

  it('encodes again after a refusal (nothing half written is kept)', () => {
    expect(() => encodeJsonMessage(All, { s: 'before', inner: 1 })).toThrow(TypeError);
    expect(encodeJsonMessage(All, { s: 'after' }).toString('hex')).toBe(
      protobufjsBytes(All, { s: 'after' }).toString('hex'),
    );
  });
});
