import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { freeLanes } from '../../src/workers/outbox/lanes.js';

const use = (o: Record<string, number>) => new Map(Object.entries(o));

describe('outbox lanes shared by accounts', () => {
  it('one account takes every lane, as before accounts existed', () => {
    expect(freeLanes('default', use({}), ['default'], 16, 1)).toBe(16);
  });

  it('first pass: each account up to its fair share; second pass: what the others leave', () => {
    expect(freeLanes('a', use({}), ['a', 'b'], 16, 1)).toBe(8);
    // b holds none: one lane stays free for it
    expect(freeLanes('a', use({ a: 8 }), ['a', 'b'], 16, 2)).toBe(7);
    expect(freeLanes('b', use({ a: 15 }), ['a', 'b'], 16, 1)).toBe(1);
  });

  it('an account holding lanes for a slow ERP never takes the last lane an idle account needs', () => {
    expect(freeLanes('a', use({ a: 15 }), ['a', 'b'], 16, 2)).toBe(0);
    expect(freeLanes('b', use({ a: 15 }), ['a', 'b'], 16, 2)).toBe(1);
    // more accounts than lanes: an idle account may still take a free lane
    const many = Array.from({ length: 20 }, (_, i) => `s${i}`);
    expect(freeLanes('s19', use({ s0: 1 }), many, 16, 1)).toBe(1);
    expect(freeLanes('s0', use({ s0: 1 }), many, 16, 2)).toBe(0);
  });

  it('never hands out more lanes than are free', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 32 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(1 as const, 2 as const),
        (total, held, pass) => {
          const accounts = held.map((_, i) => `a${i}`);
          const m = new Map<string, number>();
          let used = 0;
          held.forEach((n, i) => {
            const take = Math.min(n, total - used);
            used += take;
            if (take > 0) m.set(`a${i}`, take);
          });
          for (const a of accounts) {
            const n = freeLanes(a, m, accounts, total, pass);
            expect(n).toBeGreaterThanOrEqual(0);
            expect(n).toBeLessThanOrEqual(total - used);
            if (used < total && !m.has(a)) expect(n).toBeGreaterThanOrEqual(1);
          }
        },
      ),
    );
  });
});
