// Marble tests of the holdoff: one emission per burst, a bounded delay under a never-ending
// trickle, and nothing before the sources are synced.
import { describe, expect, it } from '@jest/globals';
import { TestScheduler } from 'rxjs/testing';
import { holdoff } from '../src/holdoff.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('holdoff', () => {
  it('a burst gives one emission, quietMs after its last change', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const src = hot('a 9ms b 9ms c 9ms d');
      // d at 30ms; quiet 100ms → one emission at 130ms, carrying the latest value.
      expectObservable(src.pipe(holdoff({ quietMs: 100, maxDelayMs: 500 }))).toBe('130ms d', { d: 'd' });
    });
  });
  it('completion flushes a pending change at once', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a 9ms b|').pipe(holdoff({ quietMs: 100, maxDelayMs: 500 }))).toBe('11ms (b|)', { b: 'b' });
    });
  });
  it('a never-ending trickle still gives one emission every maxDelayMs', () => {
    scheduler().run(({ hot, expectObservable }) => {
      // A change every 40ms for 1.2s: the quiet period never elapses, the max delay does: at
      // 500ms (first change at 0) and at 1020ms (first change after that flush at 520).
      const marbles = Array.from({ length: 30 }, () => 'x 39ms').join(' ');
      const src = hot(marbles);
      expectObservable(src.pipe(holdoff({ quietMs: 100, maxDelayMs: 500 })), '^ 1199ms !').toBe('500ms x 519ms x', {
        x: 'x',
      });
    });
  });
  it('emits nothing before the gate opens, then flushes what is pending at once', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const src = hot('a 99ms b 299ms c');
      const ready = hot('700ms r');
      expectObservable(src.pipe(holdoff({ quietMs: 100, maxDelayMs: 500, ready }))).toBe('700ms c', { c: 'c' });
    });
  });
  it('changes after the gate opened follow the normal timing', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const src = hot('a 199ms b');
      const ready = hot('50ms r');
      expectObservable(src.pipe(holdoff({ quietMs: 100, maxDelayMs: 500, ready }))).toBe('50ms a 249ms b', {
        a: 'a',
        b: 'b',
      });
    });
  });
});
