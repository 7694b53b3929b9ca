/**
 * Failed sign-ins, counted in the database so every instance sees the same counts and locks:
 * operator sign-ins per name and address (and per address, to slow it down), and wrong API keys
 * per address, each a scope with a policy of its own.
 */
import type { Deps } from '../types.js';
import type { AuthFailurePolicy } from '../model/auth-failures.js';
import { isDatabaseUnavailable } from '../platform/errors.js';

/**
 * PCI DSS 8.3.4: at most 10 failed attempts, then locked for at least 30 minutes. An operator name
 * is locked from the address that failed (a colleague behind the same address signs in as usual);
 * the address itself, after as many failures over any names, is slowed down for as long.
 */
export const LOCKOUT: AuthFailurePolicy = { maxFailures: 10, windowMs: 15 * 60_000, lockMs: 30 * 60_000 };
/**
 * Wrong API keys: counted like operator logins, per client address, with more room (an ERP being
 * set up with a stale key sends a burst of them) and a shorter lock. API keys are long random
 * strings: this stops scans and floods, where guessing was never feasible anyway.
 */
export const API_KEY_THROTTLE: AuthFailurePolicy = { maxFailures: 50, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

/**
 * The failures of one scope. `ip` is the client address: the socket's, or with TRUST_PROXY the one
 * the trusted proxies forwarded.
 */
export interface Lockout {
  /** Seconds left when `ip` is locked out (0 when not), and whether failures are on record. */
  state(ip: string): Promise<{ lockedFor: number; failures: number }>;
  /** Records a failure; the seconds left when the client is (now) locked out, else 0. */
  fail(ip: string): Promise<number>;
  succeed(ip: string): Promise<void>;
}

/**
 * While the database cannot answer, counting is skipped (logged) rather than refusing everyone:
 * credentials are still checked, and the operator endpoints stay usable to diagnose the outage.
 */
export function createLockout(
  { store, clock, logger }: Deps<'clock' | 'logger' | 'store'>,
  scope: string,
  policy: AuthFailurePolicy,
): Lockout {
  const secondsLeft = (until: string | null, now: Date) =>
    until === null ? 0 : Math.max(0, Math.ceil((Date.parse(until) - now.getTime()) / 1000));
  const unavailable =
    <T>(fallback: T) =>
    (err: unknown): T => {
      if (!isDatabaseUnavailable(err)) throw err;
      logger.warn(
        { scope, err: { message: err instanceof Error ? err.message : String(err) } },
        'failed-login counts unavailable: database down',
      );
      return fallback;
    };
  return {
    async state(ip) {
      const s = await store.authFailures.get(scope, ip).catch(unavailable(undefined));
      return { lockedFor: s ? secondsLeft(s.lockedUntil, clock.now()) : 0, failures: s?.failures ?? 0 };
    },
    async fail(ip) {
      const now = clock.now();
      const s = await store.authFailures.fail(scope, ip, now, policy).catch(unavailable(undefined));
      return s ? secondsLeft(s.lockedUntil, now) : 0;
    },
    succeed: (ip) => store.authFailures.clear(scope, ip).catch(unavailable(undefined)),
  };
}

/** How long each credential check from a slowed-down address waits before it is made. */
export const SLOW_DOWN_MS = 1_000;

/** The failures of the names no operator has, from one address, are counted together. */
export const operatorScope = (name: string | undefined): string => `operator:${name ?? '?'}`;

/** Operator sign-ins: a lock per name and address, a slow-down per address. */
export interface OperatorThrottle {
  /** Seconds the name is still locked from `ip` (0 when not), failures on record, and whether `ip` is slowed down. */
  state(ip: string, name: string | undefined): Promise<{ lockedFor: number; failures: number; slowed: boolean }>;
  /** Records a failure: whether it locked the name, or slowed the address down, just now. */
  fail(ip: string, name: string | undefined): Promise<{ lockedFor: number; slowedNow: boolean }>;
  /** A correct sign-in forgets the name's failures from that address (the address's count runs out by itself). */
  succeed(ip: string, name: string): Promise<void>;
}

export function createOperatorThrottle(services: Deps<'clock' | 'logger' | 'store'>): OperatorThrottle {
  const address = createLockout(services, 'operator', LOCKOUT);
  const byName = (name: string | undefined) => createLockout(services, operatorScope(name), LOCKOUT);
  return {
    async state(ip, name) {
      const [n, a] = await Promise.all([byName(name).state(ip), address.state(ip)]);
      return { lockedFor: n.lockedFor, failures: n.failures, slowed: a.lockedFor > 0 };
    },
    async fail(ip, name) {
      const before = await address.state(ip);
      const lockedFor = await byName(name).fail(ip);
      const slowedFor = await address.fail(ip);
      return { lockedFor, slowedNow: before.lockedFor === 0 && slowedFor > 0 };
    },
    succeed: (ip, name) => byName(name).succeed(ip),
  };
}
