import { describe, expect, it } from 'vitest';
import {
  afterAttempt,
  closedBreaker,
  FAILURES_TO_OPEN,
  gate,
  pace,
  PROBE_BASE_MS,
  PROBE_CAP_MS,
  probeDelayMs,
  probing,
  type Breaker,
} from '../../src/workers/outbox/breaker.js';

const T = 1_800_000_000_000;
const half = () => 0.5;

function failTimes(n: number, b: Breaker = closedBreaker(), probe = false): Breaker {
  for (let i = 0; i < n; i++) b = afterAttempt(b, { ok: false, probe, now: T + i, random: half }).breaker;
  return b;
}

describe('ERP circuit breaker', () => {
  it('stays closed through fewer failures in a row than the threshold, and a success forgets them', () => {
    const b = failTimes(FAILURES_TO_OPEN - 1);
    expect(gate(b, T)).toEqual({ kind: 'closed' });
    const ok = afterAttempt(b, { ok: true, probe: false, now: T, random: half });
    expect(ok).toEqual({ breaker: closedBreaker(), resumed: false });
    expect(gate(failTimes(FAILURES_TO_OPEN - 1, ok.breaker), T + 10)).toEqual({ kind: 'closed' });
  });

  it('opens after the threshold: nothing until the probe time, then exactly one probe at a time', () => {
    const b = failTimes(FAILURES_TO_OPEN);
    const at = T + FAILURES_TO_OPEN - 1 + probeDelayMs(0, half);
    expect(gate(b, T + 100)).toEqual({ kind: 'wait', at });
    expect(gate(b, at)).toEqual({ kind: 'probe' });
    expect(gate(probing(b), at + 1)).toEqual({ kind: 'wait', at });
  });

  it('a failed probe doubles the wait up to the cap; a straggler failing meanwhile moves nothing', () => {
    let b = failTimes(FAILURES_TO_OPEN);
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const now = b.probeAt ?? 0;
      b = afterAttempt(probing(b), { ok: false, probe: true, now, random: () => 1 }).breaker;
      waits.push((b.probeAt ?? 0) - now);
    }
    expect(waits).toEqual([10_000, 20_000, 40_000, 60_000, 60_000, 60_000, 60_000, 60_000]);
    const straggler = afterAttempt(b, { ok: false, probe: false, now: T, random: half }).breaker;
    expect(straggler.probeAt).toBe(b.probeAt);
    expect(straggler.probing).toBe(false);
  });

  it('a success closes an open breaker and says so (the waiting events are then made due)', () => {
    const b = probing(failTimes(FAILURES_TO_OPEN));
    expect(afterAttempt(b, { ok: true, probe: true, now: T, random: half })).toEqual({
      breaker: closedBreaker(),
      resumed: true,
    });
  });

  it('probe waits are jittered between half and all of the interval', () => {
    expect(probeDelayMs(0, () => 0)).toBe(PROBE_BASE_MS / 2);
    expect(probeDelayMs(0, () => 1)).toBe(PROBE_BASE_MS);
    expect(probeDelayMs(30, () => 1)).toBe(PROBE_CAP_MS);
  });
});

describe('delivery pace', () => {
  it('unlimited without a rate: every attempt may start now', () => {
    expect(pace(T + 5_000, T, undefined)).toEqual({ startAt: T, next: T });
    expect(pace(T + 5_000, T, 0)).toEqual({ startAt: T, next: T });
  });

  it('a rate spaces attempts evenly, with no burst after an idle time', () => {
    let free = T;
    const starts: number[] = [];
    for (let i = 0; i < 4; i++) {
      const p = pace(free, T, 4);
      starts.push(p.startAt - T);
      free = p.next;
    }
    expect(starts).toEqual([0, 250, 500, 750]);
    // Idle for a minute: the next starts now, the one after it a slot later (no saved-up burst).
    const later = pace(free, T + 60_000, 4);
    expect(later).toEqual({ startAt: T + 60_000, next: T + 60_250 });
  });
});
