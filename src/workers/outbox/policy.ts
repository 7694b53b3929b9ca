/**
 * Retry policy for ERP deliveries. Pure (time and randomness are passed in).
 *
 * - 2xx → delivered.
 * - Every other answer (4xx included: a receiver that refuses an event is usually a receiver with a
 *   bug or a configuration being fixed, and an event dropped at once would let the order's later
 *   events overtake it), 3xx since redirects are not followed, timeouts and refused connections →
 *   retried with exponential backoff and jitter: base 10 s × 2^n, capped at 1 h, "equal jitter"
 *   (half fixed, half random). A `Retry-After` (seconds or HTTP date) replaces the backoff, bounded
 *   to [1 s, 6 h].
 * - After `retry_for_hours` (fractions down to 0.01 h = 36 s) from the start of the retry window → `dead`. The last attempt is
 *   scheduled no later than the window's end, so the window is used to its last minute. A dead
 *   event is logged as an error, listed by `/api/deliveries?status=dead`, and re-deliverable by hand
 *   (`POST /api/deliveries/{id}/retry`).
 */
export const BACKOFF_BASE_MS = 10_000;
export const BACKOFF_CAP_MS = 3_600_000;
const RETRY_AFTER_MIN_MS = 1_000;
const RETRY_AFTER_MAX_MS = 6 * 3_600_000;

/** Delay after the `failures`-th consecutive failure (1-based). */
export function backoffMs(failures: number, random: () => number): number {
  const exp = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 20));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/** Milliseconds to wait, or undefined when absent or unparseable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  if (!/[A-Za-z]/.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}

export type Verdict =
  { state: 'delivered' } | { state: 'failed'; nextAttemptAt: Date } | { state: 'dead'; reason: string };

export interface JudgeInput {
  statusCode: number | null;
  retryAfter?: string;
  /** Failures of this event so far, including this one. */
  failures: number;
  now: Date;
  retryFrom: Date;
  retryForHours: number;
  random: () => number;
}

export function judge(i: JudgeInput): Verdict {
  const s = i.statusCode;
  if (s !== null && s >= 200 && s < 300) return { state: 'delivered' };
  // Whole milliseconds: 0.07 h is 252000.00000000003 ms, a deadline no Date can reach, which would
  // schedule the last attempt at the window's end again and again.
  const deadline = i.retryFrom.getTime() + Math.round(i.retryForHours * 3_600_000);
  if (i.now.getTime() >= deadline) return { state: 'dead', reason: `retry window of ${i.retryForHours} h exhausted` };
  const ra = parseRetryAfter(i.retryAfter, i.now);
  const delay =
    ra !== undefined ? Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, ra)) : backoffMs(i.failures, i.random);
  return { state: 'failed', nextAttemptAt: new Date(Math.min(i.now.getTime() + delay, deadline)) };
}
