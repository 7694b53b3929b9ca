import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  BASELINE_TTL_MS,
  START_LANES,
  adapt,
  lanesOf,
  startWindow,
  type Answer,
  type Window,
} from '../../src/workers/outbox/window.js';

const MAX = 128;
/** `n` answers 200 ms apart, each with the window's lanes in use. */
function answers(w: Window, n: number, a: Omit<Answer, 'now' | 'held'>, from = 0, max = MAX): Window {
  for (let i = 0; i < n; i++) w = adapt(w, { ...a, held: lanesOf(w), now: from + i * 10 }, max);
  return w;
}

describe('the lanes an endpoint may hold', () => {
  it('starts at the fixed number used before, bounded by the maximum', () => {
    expect(lanesOf(startWindow(MAX))).toBe(START_LANES);
    expect(lanesOf(startWindow(4))).toBe(4);
  });

  it('grows while a healthy endpoint answers 2xx as fast, up to the maximum and no further', () => {
    const w = answers(startWindow(MAX), 40, { ok: true, latencyMs: 200 });
    expect(lanesOf(w)).toBe(START_LANES + 20);
    expect(lanesOf(answers(w, 1000, { ok: true, latencyMs: 200 }, 1_000))).toBe(MAX);
  });

  it('does not grow while it is not in use: a window half empty proves nothing about a larger one', () => {
    let w = startWindow(MAX);
    for (let i = 0; i < 100; i++) w = adapt(w, { ok: true, latencyMs: 200, held: 7, now: i }, MAX);
    expect(lanesOf(w)).toBe(START_LANES);
    w = adapt(w, { ok: true, latencyMs: 200, held: 8, now: 200 }, MAX);
    expect(w.limit).toBe(START_LANES + 0.5);
  });

  it('halves on a failure, once per moment: the answers of one overload count once', () => {
    const w = answers(startWindow(MAX), 250, { ok: true, latencyMs: 200 });
    expect(lanesOf(w)).toBe(MAX);
    const failed = adapt(w, { ok: false, latencyMs: 300, held: MAX, now: 10_000 }, MAX);
    expect(lanesOf(failed)).toBe(MAX / 2);
    // the other lanes' failures of the same moment
    const same = answers(failed, 20, { ok: false, latencyMs: 300 }, 10_001);
    expect(lanesOf(same)).toBe(MAX / 2);
    // failing on: halved again each latency, down to one lane and never below
    let down = failed;
    for (let i = 1; i <= 20; i++)
      down = adapt(down, { ok: false, latencyMs: 300, held: 1, now: 10_000 + i * 301 }, MAX);
    expect(lanesOf(down)).toBe(1);
    expect(down.limit).toBeGreaterThanOrEqual(1);
  });

  it('a timeout holds further cuts for its whole length', () => {
    const w = adapt(startWindow(MAX), { ok: false, latencyMs: 5_000, held: 16, now: 0 }, MAX);
    expect(lanesOf(w)).toBe(8);
    expect(lanesOf(adapt(w, { ok: false, latencyMs: 5_000, held: 8, now: 4_999 }, MAX))).toBe(8);
    expect(lanesOf(adapt(w, { ok: false, latencyMs: 5_000, held: 8, now: 5_000 }, MAX))).toBe(4);
  });

  it('shrinks when the answers slow down (the endpoint is queueing), and does not grow meanwhile', () => {
    const w = answers(startWindow(MAX), 100, { ok: true, latencyMs: 200 });
    expect(lanesOf(w)).toBe(66);
    const slow = adapt(w, { ok: true, latencyMs: 600, held: 66, now: 2_000 }, MAX);
    expect(slow.limit).toBeCloseTo(w.limit * 0.9);
    const slower = answers(slow, 100, { ok: true, latencyMs: 600 }, 2_001);
    expect(slower.limit).toBeLessThan(slow.limit);
    // within twice the quickest answer (and some jitter): no cut
    expect(adapt(w, { ok: true, latencyMs: 420, held: 66, now: 2_000 }, MAX).limit).toBe(w.limit + 0.5);
  });

  it('a slow answer never cuts it below the fixed number of before (this process being busy reads as a slow ERP); a failure does', () => {
    let w = answers(startWindow(MAX), 10, { ok: true, latencyMs: 200 });
    // within the baseline's lifetime (30 s): ten cuts would take 21 lanes to 7
    for (let i = 1; i <= 10; i++) w = adapt(w, { ok: true, latencyMs: 2_000, held: 99, now: i * 2_001 }, MAX);
    expect(w.limit).toBe(START_LANES);
    const failed = adapt(w, { ok: false, latencyMs: 200, held: 16, now: 25_000 }, MAX);
    expect(lanesOf(failed)).toBe(START_LANES / 2);
    // below it after failures, a slow answer does not cut (nor grow) it
    const slowAfter = adapt(failed, { ok: true, latencyMs: 2_000, held: 8, now: 28_000 }, MAX);
    expect(slowAfter.limit).toBe(START_LANES / 2);
  });

  it('relearns the quickest answer after a while: an endpoint whose normal latency moved is not held small', () => {
    const w = answers(startWindow(MAX), 10, { ok: true, latencyMs: 100 });
    const moved = adapt(w, { ok: true, latencyMs: 400, held: 99, now: 10 + BASELINE_TTL_MS + 1 }, MAX);
    expect(moved.baselineMs).toBe(400);
    expect(moved.limit).toBe(w.limit + 0.5);
  });

  it('always between one lane and the maximum', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 256 }),
        fc.array(
          fc.record({
            ok: fc.boolean(),
            latencyMs: fc.integer({ min: 0, max: 10_000 }),
            held: fc.integer({ min: 0, max: 300 }),
            dt: fc.integer({ min: 0, max: 60_000 }),
          }),
        ),
        (max, xs) => {
          let w = startWindow(max);
          let now = 0;
          for (const x of xs) {
            now += x.dt;
            w = adapt(w, { ok: x.ok, latencyMs: x.latencyMs, held: x.held, now }, max);
            expect(lanesOf(w)).toBeGreaterThanOrEqual(1);
            expect(lanesOf(w)).toBeLessThanOrEqual(max);
          }
        },
      ),
    );
  });
});
