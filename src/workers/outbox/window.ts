/**
 * How many lanes one delivery endpoint (an account's ERP, an account's alert receiver) may hold at
 * once: a window that adapts to the endpoint's answers. Pure: time (ms) is passed in, so each rule
 * is tested without an ERP, and the worker owns the only clock.
 *
 * Why: with a fixed number of lanes, an ERP that answers in 200 ms takes at most lanes × 5 events
 * per second however healthy it is (16 lanes: 80/s, so a two-minute burst of 300/s leaves a
 * backlog that takes minutes to drain), while more fixed lanes would hit an ERP that is already
 * struggling with more requests at once. So the window grows while the endpoint answers 2xx
 * without its latency rising (more requests at once cost it nothing: it is not queueing them),
 * and shrinks when it fails or its answers slow down (it is queueing: more at once only lengthens
 * the queue).
 *
 * - Starts at `START_LANES` (the fixed number the worker used before the window; it holds no
 *   risk an ERP has not already taken), bounded by [1, max] (`OUTBOX_MAX_LANES`).
 * - A 2xx within `LATENCY_RISE` × the endpoint's quickest recent answer (+ `LATENCY_SLACK_MS` of
 *   jitter) grows it by `GROWTH_PER_2XX` lane, only while the endpoint holds at least half of it
 *   (a window not in use proves nothing about a larger one): about ×1.5 per round trip.
 * - A 2xx slower than that cuts it to `LATENCY_CUT` of itself, but not below `START_LANES`: the
 *   latency is measured from this process, so a busy event loop here (a burst of notifications
 *   to ingest) reads as a slow ERP; below the old fixed number that would starve every account
 *   (in the quick bench's burst, events of both accounts were still undelivered when its wait
 *   of several minutes ended). A failure (any non-2xx answer, a timeout, a refused
 *   connection: what the breaker counts too) halves it, down to one lane. Answers of one moment
 *   arrive together: after a cut, no other cut for the latency of the answer that caused it.
 * - The quickest answer is relearnt after `BASELINE_TTL_MS`, so an ERP whose normal latency moved
 *   (another data centre, a heavier version) is not held small for ever.
 *
 * The breaker (breaker.ts) still decides whether the endpoint is tried at all; the window only
 * how many lanes it takes while it is. Per-order ordering does not depend on it: the claim never
 * hands out an event while an earlier one of its order is still to deliver.
 */
export const START_LANES = 16;
export const GROWTH_PER_2XX = 0.5;
export const LATENCY_RISE = 2;
export const LATENCY_SLACK_MS = 25;
export const LATENCY_CUT = 0.9;
export const FAILURE_CUT = 0.5;
export const BASELINE_TTL_MS = 30_000;

export interface Window {
  /** Lanes the endpoint may hold (fractional: growth comes half a lane at a time). */
  limit: number;
  /** The quickest 2xx answer seen since `baselineAt` (ms); undefined before the first. */
  baselineMs?: number;
  baselineAt: number;
  /** No cut before this time (ms). */
  holdUntil: number;
}

export function startWindow(max: number): Window {
  return { limit: Math.max(1, Math.min(START_LANES, max)), baselineAt: 0, holdUntil: 0 };
}

/** Whole lanes the window allows now. */
export function lanesOf(w: Window): number {
  return Math.max(1, Math.floor(w.limit));
}

export interface Answer {
  /** A 2xx answer. */
  ok: boolean;
  latencyMs: number;
  /** Lanes the endpoint held when the attempt was made. */
  held: number;
  now: number;
}

/** The window after one attempt's answer. */
export function adapt(w: Window, a: Answer, max: number): Window {
  const cut = (from: Window, factor: number, floor: number): Window =>
    a.now < from.holdUntil || from.limit <= floor
      ? from
      : { ...from, limit: Math.max(floor, from.limit * factor), holdUntil: a.now + Math.max(1, a.latencyMs) };
  if (!a.ok) return cut(w, FAILURE_CUT, 1);
  const relearn = w.baselineMs === undefined || a.now - w.baselineAt > BASELINE_TTL_MS || a.latencyMs < w.baselineMs;
  const next: Window = relearn ? { ...w, baselineMs: a.latencyMs, baselineAt: a.now } : w;
  const baselineMs = next.baselineMs ?? a.latencyMs;
  if (a.latencyMs > baselineMs * LATENCY_RISE + LATENCY_SLACK_MS)
    return cut(next, LATENCY_CUT, Math.min(START_LANES, Math.max(1, max)));
  if (a.held * 2 < lanesOf(next)) return next;
  return { ...next, limit: Math.min(Math.max(1, max), next.limit + GROWTH_PER_2XX) };
}
