/** Failed authentication attempts per client, and the policy that locks a client out. */

export interface AuthFailurePolicy {
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

export interface AuthFailureState {
  /** Failures counted in the current window (0 right after a lock). */
  failures: number;
  /** ISO time the lock ends, or null. */
  lockedUntil: string | null;
}
