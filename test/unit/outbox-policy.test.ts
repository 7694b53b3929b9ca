import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS, backoffMs, judge, parseRetryAfter } from '../../src/workers/outbox/policy.js';

const now = new Date('2026-11-22T03:00:00.000Z');
const base = { failures: 1, now, retryFrom: now, retryForHours: 72, random: () => 0.5 };

describe('backoffMs', () => {
  it('doubles from ~10 s and is capped at 1 h, with jitter inside [d/2, d]', () => {
    expect(backoffMs(1, () => 0)).toBe(BACKOFF_BASE_MS / 2);
    expect(backoffMs(1, () => 1)).toBe(BACKOFF_BASE_MS);
    expect(backoffMs(2, () => 1)).toBe(2 * BACKOFF_BASE_MS);
    expect(backoffMs(4, () => 1)).toBe(8 * BACKOFF_BASE_MS);
    expect(backoffMs(50, () => 1)).toBe(BACKOFF_CAP_MS);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, r) => {
          const d = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(n - 1, 20));
          const v = backoffMs(n, () => r);
          return v >= d / 2 && v <= d;
        },
      ),
    );
  });
});

describe('parseRetryAfter', () => {
  it('seconds, HTTP dates, garbage', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(new Date(now.getTime() + 90_000).toUTCString(), now)).toBe(90_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('judge', () => {
  it('2xx delivered', () => {
    for (const s of [200, 201, 202, 204, 299])
      expect(judge({ ...base, statusCode: s })).toEqual({ state: 'delivered' });
  });

  it('every failure is retried with backoff, refusals of the body included (about 3 days, then dead)', () => {
    for (const s of [null, 301, 302, 400, 401, 403, 404, 408, 410, 413, 415, 422, 429, 500, 502, 503, 504]) {
      const v = judge({ ...base, statusCode: s });
      expect(v.state, String(s)).toBe('failed');
      if (v.state === 'failed') expect(v.nextAttemptAt.getTime() - now.getTime()).toBe(7_500);
    }
  });

  it('Retry-After replaces the backoff, bounded to [1 s, 6 h]', () => {
    const at = (ra: string) => {
      const v = judge({ ...base, statusCode: 503, retryAfter: ra });
      return v.state === 'failed' ? v.nextAttemptAt.getTime() - now.getTime() : -1;
    };
    expect(at('30')).toBe(30_000);
    expect(at('0')).toBe(1_000);
    expect(at('999999')).toBe(6 * 3_600_000);
    expect(at(new Date(now.getTime() + 45_000).toUTCString())).toBe(45_000);
    expect(at('garbage')).toBe(7_500);
  });

  it('after the retry window the event is dead; the last attempt is no later than the window end', () => {
    const end = now.getTime() + 72 * 3_600_000;
    expect(judge({ ...base, statusCode: 500, now: new Date(end) }).state).toBe('dead');
    const late = judge({ ...base, statusCode: 500, failures: 30, now: new Date(end - 60_000) });
    expect(late).toEqual({ state: 'failed', nextAttemptAt: new Date(end) });
  });
});

describe('a fractional retry window (erp.retry_for_hours down to 0.01)', () => {
  it('an event failing every attempt is dead after 36 s of simulated time with 0.01 h, never later', () => {
    for (const r of [0, 0.5, 0.999]) {
      const retryFrom = now;
      let t = now;
      let failures = 0;
      const attempts: number[] = [];
      for (;;) {
        failures++;
        attempts.push(t.getTime() - now.getTime());
        const v = judge({ statusCode: 503, failures, now: t, retryFrom, retryForHours: 0.01, random: () => r });
        if (v.state === 'dead') {
          expect(v.reason).toBe('retry window of 0.01 h exhausted');
          break;
        }
        expect(v.state).toBe('failed');
        if (v.state !== 'failed') break;
        t = v.nextAttemptAt;
        expect(attempts.length).toBeLessThan(20);
      }
      // The last attempt is at the window's end exactly: 36 s after it started, and none after it.
      expect(attempts[attempts.length - 1]).toBe(36_000);
      expect(attempts.slice(0, -1).every((ms) => ms < 36_000)).toBe(true);
    }
  });

  it('one millisecond before the end of a 0.01 h window an event is still retried, at the end it is dead', () => {
    const at = (ms: number) => new Date(now.getTime() + ms);
    const before = judge({ ...base, statusCode: 500, retryForHours: 0.01, now: at(35_999) });
    expect(before).toEqual({ state: 'failed', nextAttemptAt: at(36_000) });
    expect(judge({ ...base, statusCode: 500, retryForHours: 0.01, now: at(36_000) }).state).toBe('dead');
    expect(judge({ ...base, statusCode: 500, retryForHours: 0.5, now: at(1_799_999) }).state).toBe('failed');
    expect(judge({ ...base, statusCode: 500, retryForHours: 0.5, now: at(1_800_000) }).state).toBe('dead');
    // A fraction whose milliseconds are not exact in binary still ends on a whole millisecond.
    expect(0.07 * 3_600_000).not.toBe(252_000);
    expect(judge({ ...base, statusCode: 500, retryForHours: 0.07, now: at(251_999) })).toEqual({
      state: 'failed',
      nextAttemptAt: at(252_000),
    });
    expect(judge({ ...base, statusCode: 500, retryForHours: 0.07, now: at(252_000) }).state).toBe('dead');
  });
});
