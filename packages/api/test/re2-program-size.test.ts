// RE2's program size as Envoy reads it (RE2::ProgramSize, compared with re2.max_program_size.error_level),
// against the numbers RE2 itself gives: fixtures/re2-program-sizes.json was written by RE2 2024-07-02, the
// release Envoy builds with (fixtures/re2-program-sizes.mjs says how).
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENVOY_RE2_MAX_PROGRAM_SIZE, re2ProgramSize } from '../src/re2-program-size.js';

const corpus = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures/re2-program-sizes.json'), 'utf8'),
) as [string, number | null][];

describe('RE2 program size', () => {
  it('is RE2 own number for every pattern of the corpus, or none where RE2 refuses the pattern', () => {
    const wrong: string[] = [];
    let exact = 0;
    for (const [pattern, size] of corpus) {
      const got = re2ProgramSize(pattern);
      if (size === null) {
        if (got.size !== undefined) wrong.push(`${JSON.stringify(pattern)}: RE2 refuses it, computed ${got.size}`);
      } else if (got.size === size) exact++;
      else if (got.size !== undefined || !/not known here/.test(got.why))
        wrong.push(`${JSON.stringify(pattern)}: RE2 says ${size}, computed ${got.size ?? got.why}`);
    }
    expect(wrong).toEqual([]);
    // What is not known here (case folding beyond ASCII, Unicode classes) is a small part of the corpus.
    expect(exact).toBeGreaterThan(corpus.filter(([, s]) => s !== null).length * 0.9);
  });

  it('figures of patterns routes use', () => {
    const figures = Object.fromEntries(
      [
        '/api/v[0-9]+/users/[a-z0-9-]+',
        '.*',
        '^/foo/bar/baz.*',
        '[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}',
        '/static/[a-zA-Z0-9._-]{0,200}/.*',
        '/[^/]+/' + 'x'.repeat(100),
        'a{1000}',
      ].map((p) => [p, re2ProgramSize(p).size]),
    );
    expect(figures).toEqual({
      '/api/v[0-9]+/users/[a-z0-9-]+': 23,
      '.*': 12,
      '^/foo/bar/baz.*': 12,
      '[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}': 72,
      '/static/[a-zA-Z0-9._-]{0,200}/.*': 1021,
      ['/[^/]+/' + 'x'.repeat(100)]: 115,
      'a{1000}': 1004,
    });
    expect(ENVOY_RE2_MAX_PROGRAM_SIZE).toBe(100);
  });

  it('says why where it gives no size: what RE2 refuses, and what needs Unicode tables', () => {
    expect(re2ProgramSize('a(?=b)').why).toBe('RE2 refuses it: invalid perl operator');
    expect(re2ProgramSize('(a{10}){101}').why).toBe('RE2 refuses it: invalid repetition size');
    expect(re2ProgramSize('\\pL').why).toBe('its RE2 program size is not known here: \\p{L} needs Unicode tables');
    expect(re2ProgramSize('(?i)café').why).toBe(
      'its RE2 program size is not known here: it matches "é" regardless of case',
    );
    // Caseless letters and the two non-ASCII runes ASCII letters fold to are known.
    expect(re2ProgramSize('(?i)中k').size).toBe(11);
  });
});
