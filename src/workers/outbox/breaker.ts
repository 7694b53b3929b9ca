/**
 * The circuit breaker of one account's ERP endpoint, and the pace of its deliveries. Pure: time
 * (ms since the epoch) and randomness are passed in, so each rule is tested without waiting and
 * without a real ERP, and the worker owns the only clock.
 *
 * - Closed: every lane the account may take delivers.
 * - After `FAILURES_TO_OPEN` failures in a row (any non-2xx answer, timeout or refused connection)
 *   it opens: the endpoint is not hammered by every lane and every retry coming due, but probed by
 *   one event at a time, the first probe `PROBE_BASE_MS` later, each failed probe doubling the wait
 *   up to `PROBE_CAP_MS`, with jitter so that instances sharing a database do not probe in step.
 * - A success (a probe's, or of an attempt started before it opened) closes it: the worker then
 *   makes the account's waiting events due at once, so they follow in order at full speed instead
 *   of each waiting out its own backoff.
 *
 * The breaker lives in each instance's memory: with n instances an endpoint that is down gets at
 * most n probes per interval, and an instance that restarts learns the endpoint's state again
 * within `FAILURES_TO_OPEN` attempts. That is cheaper and simpler than a shared row written on
 * every attempt, and the harm it bounds (a few extra requests) is small.
 */
export const FAILURES_TO_OPEN = 5;
export const PROBE_BASE_MS = 5_000;
export const PROBE_CAP_MS = 60_000;

export interface Breaker {
  /** Failures in a row (reset by a success). */
  failures: number;
  /** While open: when the next probe may start (ms). Undefined = closed. */
  probeAt?: number;
  /** Probes that failed since it opened (the wait doubles with each). */
  failedProbes: number;
  /** A probe is under way: no second one starts meanwhile. */
  probing: boolean;
}

export const closedBreaker = (): Breaker => ({ failures: 0, failedProbes: 0, probing: false });

/** What the account's lanes may do now: all of them, one probe, or nothing until `at`. */
export type Gate = { kind: 'closed' } | { kind: 'probe' } | { kind: 'wait'; at: number };

export function gate(b: Breaker, now: number): Gate {
  if (b.probeAt === undefined) return { kind: 'closed' };
  if (b.probing || now < b.probeAt) return { kind: 'wait', at: b.probeAt };
  return { kind: 'probe' };
}

/** The wait before the next probe after `failedProbes` failed ones: doubling, capped, "equal jitter". */
export function probeDelayMs(failedProbes: number, random: () => number): number {
  const full = Math.min(PROBE_CAP_MS, PROBE_BASE_MS * 2 ** Math.min(failedProbes, 10));
  return Math.round(full / 2 + random() * (full / 2));
}

/**
 * The breaker after an attempt's outcome. `resumed` is true when this success closed an open
 * breaker: the caller makes the account's waiting events due now.
 */
export function afterAttempt(
  b: Breaker,
  o: { ok: boolean; probe: boolean; now: number; random: () => number },
): { breaker: Breaker; resumed: boolean } {
  if (o.ok) return { breaker: closedBreaker(), resumed: b.probeAt !== undefined };
  const failures = b.failures + 1;
  if (b.probeAt !== undefined) {
    // Only the probe's failure moves the next probe on; a straggler started before it opened does not.
    if (!o.probe) return { breaker: { ...b, failures }, resumed: false };
    const failedProbes = b.failedProbes + 1;
    return {
      breaker: { failures, failedProbes, probing: false, probeAt: o.now + probeDelayMs(failedProbes, o.random) },
      resumed: false,
    };
  }
  if (failures < FAILURES_TO_OPEN) return { breaker: { ...b, failures }, resumed: false };
  return {
    breaker: { failures, failedProbes: 0, probing: false, probeAt: o.now + probeDelayMs(0, o.random) },
    resumed: false,
  };
}

/** The breaker once a probe is started. */
export const probing = (b: Breaker): Breaker => ({ ...b, probing: true });

/**
 * Pace under `erp.max_rate_per_s` (0 or absent = unlimited): when the next attempt may start (ms),
 * and the earliest start of the one after it. No burst: a backlog after an outage drains at the
 * rate the ERP said it can take, from its first event.
 */
export function pace(nextFreeAt: number, now: number, ratePerS: number | undefined): { startAt: number; next: number } {
  if (!ratePerS || ratePerS <= 0) return { startAt: now, next: now };
  const startAt = Math.max(now, nextFreeAt);
  return { startAt, next: startAt + 1_000 / ratePerS };
}
