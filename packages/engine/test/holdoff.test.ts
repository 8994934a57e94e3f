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
  it('arms no timer for the changes behind a closed gate (an initial listing of 50 000 objects)', () => {
    const ts = scheduler();
    let scheduled = 0;
    const counting = {
      now: () => ts.now(),
      schedule: ((...args: Parameters<typeof ts.schedule>) => {
        scheduled++;
        return ts.schedule(...args);
      }) as typeof ts.schedule,
    };
    ts.run(({ hot, expectObservable }) => {
      const src = hot(Array.from({ length: 1000 }, () => 'x').join(' '));
      const ready = hot('2000ms r');
      expectObservable(src.pipe(holdoff({ quietMs: 100, maxDelayMs: 500, ready, scheduler: counting }))).toBe(
        '2000ms x',
        { x: 'x' },
      );
    });
    expect(scheduled).toBe(0);
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

describe('holdoff with a leading edge', () => {
  const opts = { quietMs: 100, maxDelayMs: 500, leading: true };
  it('a change on an idle stream goes out at once; what arrives in the same turn goes with it', () => {
    scheduler().run(({ hot, expectObservable }) => {
      expectObservable(hot('(ab)').pipe(holdoff(opts))).toBe('b', { b: 'b' });
    });
  });
  it('changes that follow within the quiet period coalesce into one trailing emission', () => {
    scheduler().run(({ hot, expectObservable }) => {
      // a at 0 goes at once; b (10ms) and c (20ms) go 100ms after c; d (300ms) finds it idle again.
      expectObservable(hot('a 9ms b 9ms c 279ms d').pipe(holdoff(opts))).toBe('a 119ms c 179ms d', {
        a: 'a',
        c: 'c',
        d: 'd',
      });
    });
  });
  it('a never-ending trickle is still bounded by maxDelayMs', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const src = hot(Array.from({ length: 120 }, () => 'x 9ms').join(' '));
      // x at 0 at once; from 10ms on the trickle never goes quiet: flushes at 510ms and 1020ms.
      expectObservable(src.pipe(holdoff(opts)), '^ 1199ms !').toBe('x 509ms x 509ms x', { x: 'x' });
    });
  });
  it('a change LEADING_GAP_MS or more after the last emission goes at once, even within the quiet period', () => {
    scheduler().run(({ hot, expectObservable }) => {
      // a at once; b 40ms later (nothing pending) at once too: an acknowledgement a few ms after a
      // push must not make the next edit wait out the quiet period.
      expectObservable(hot('a 39ms b').pipe(holdoff(opts))).toBe('a 39ms b', { a: 'a', b: 'b' });
    });
  });
  it('nothing goes out before the gate opens', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const ready = hot('50ms r');
      expectObservable(hot('a 299ms b').pipe(holdoff({ ...opts, ready }))).toBe('50ms a 249ms b', {
        a: 'a',
        b: 'b',
      });
    });
  });
  it('an adaptive quiet period (quietNow) ends a burst sooner when the consumer is cheap, never past quietMs', () => {
    scheduler().run(({ hot, expectObservable }) => {
      // a at once; b 5ms later waits 10ms of quiet (not 100): out at 15ms.
      expectObservable(hot('a 4ms b').pipe(holdoff({ ...opts, quietNow: () => 10 }))).toBe('a 14ms b', {
        a: 'a',
        b: 'b',
      });
      expectObservable(hot('a 4ms b').pipe(holdoff({ ...opts, quietNow: () => 1e9 }))).toBe('a 104ms b', {
        a: 'a',
        b: 'b',
      });
    });
  });
  it('an adaptive max delay (maxDelayNow) emits a never-ending trickle every few ms, never past maxDelayMs', () => {
    scheduler().run(({ hot, expectObservable }) => {
      // A change every 10ms (quiet never comes): with maxDelayNow 30, out at 30, 70, 110 (the first
      // change after a flush starts the next wait); with a huge one, maxDelayMs still bounds it.
      const src = hot(Array.from({ length: 12 }, () => 'x 9ms').join(' '));
      expectObservable(src.pipe(holdoff({ quietMs: 100, maxDelayMs: 500, maxDelayNow: () => 30 })), '^ 119ms !').toBe(
        '30ms x 39ms x 39ms x',
        { x: 'x' },
      );
      expectObservable(
        hot(Array.from({ length: 60 }, () => 'x 9ms').join(' ')).pipe(
          holdoff({ quietMs: 100, maxDelayMs: 500, maxDelayNow: () => 1e9 }),
        ),
        '^ 599ms !',
      ).toBe('500ms x', { x: 'x' });
    });
  });
});
