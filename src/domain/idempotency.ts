/**
 * Requests remembered by key, so that a request sent again acts once: the API's `Idempotency-Key`
 * and the console's one-time form keys share these records. A key is claimed for one request (its
 * fingerprint); the first outcome is kept under it, or the claim is released when the answer is no
 * outcome, so a later retry runs again. A claim held by a request that crashed is taken over once
 * its lock runs out.
 */
import type { Deps } from '../types.js';
import type { IdempotencyRecord } from '../storage/contract.js';

export type IdempotencyDeps = Deps<'clock' | 'logger' | 'store'>;

/** How long a key is remembered by default: the contract's minimum. */
export const KEY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** How long an in-flight claim blocks its key by default before a retry may take over (a crashed instance). */
export const CLAIM_LOCK_MS = 90_000;
const PRUNE_EVERY_MS = 60_000;

/** A key this request holds, until its outcome is kept or the claim released. */
export interface KeyClaim {
  scope: string;
  key: string;
  token: string;
}

/** Won (`claim`), or the record of the request that holds or held the key. */
export type ClaimResult = { claimed: true; claim: KeyClaim } | { claimed: false; record: IdempotencyRecord };

const lastPrune = new WeakMap<object, number>();

/** Drops expired records, at most once a minute per store; a failure is logged and costs the request nothing. */
export async function pruneExpiredKeys(services: IdempotencyDeps, now: Date): Promise<void> {
  const last = lastPrune.get(services.store) ?? 0;
  if (now.getTime() - last < PRUNE_EVERY_MS) return;
  lastPrune.set(services.store, now.getTime());
  try {
    await services.store.idempotency.pruneExpired(now);
  } catch (err) {
    services.logger.warn(
      { err: { message: err instanceof Error ? err.message : String(err) } },
      'idempotency prune failed',
    );
  }
}

/** Claims `key` within `scope` for the request of fingerprint `requestHash`, across instances. */
export async function claimKey(
  services: IdempotencyDeps,
  scope: string,
  key: string,
  requestHash: string,
  o: { now: Date; retentionMs: number; lockMs: number },
): Promise<ClaimResult> {
  const res = await services.store.idempotency.claim(scope, key, requestHash, o);
  return res.claimed ? { claimed: true, claim: { scope, key, token: res.token } } : res;
}

/** Keeps the request's outcome under its key; false when the claim was lost (its lock ran out and another took it). */
export function keepOutcome(services: IdempotencyDeps, c: KeyClaim, status: number, body: string): Promise<boolean> {
  return services.store.idempotency.complete(c.scope, c.key, c.token, status, body);
}

/** Frees the key without an outcome: the answer was none (a refusal of the input, a 5xx), so a retry runs again. */
export function releaseKey(services: IdempotencyDeps, c: KeyClaim): Promise<boolean> {
  return services.store.idempotency.release(c.scope, c.key, c.token);
}
