/**
 * One sign-in attempt by name and password, through Basic Auth or the console's sign-in page:
 * locks and slow-downs first, then the credentials, then the count of failures.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Deps } from '../../types.js';
import { SLOW_DOWN_MS, type OperatorThrottle } from '../sign-in-throttle.js';
import { checkCredentials, storedOperator, type OperatorIdentity } from './identity.js';
import { isDatabaseUnavailable } from '../../platform/errors.js';

export type SignInDeps = Deps<'clock' | 'logger' | 'operator' | 'store'>;

export type SignInResult =
  | { kind: 'ok'; identity: OperatorIdentity }
  /** The name is locked from this address: nothing was checked. */
  | { kind: 'locked'; lockedFor: number }
  /** Wrong name or password; `lockedFor` > 0 when this failure locked the name. */
  | { kind: 'failed'; known: string | undefined; lockedFor: number; slowedNow: boolean };

export async function signIn(
  services: SignInDeps,
  throttle: OperatorThrottle,
  attempt: { user: string; pass: string; ip: string },
): Promise<SignInResult> {
  const record = await storedOperator(services, attempt.user).catch((err: unknown) => {
    // Without the database the operator of log_user can still sign in (to diagnose the outage).
    if (isDatabaseUnavailable(err)) return undefined;
    throw err;
  });
  const known = attempt.user === services.operator.user || record !== undefined ? attempt.user : undefined;
  const state = await throttle.state(attempt.ip, known);
  if (state.lockedFor > 0) return { kind: 'locked', lockedFor: state.lockedFor };
  if (state.slowed) await sleep(SLOW_DOWN_MS);
  const check = await checkCredentials(services, attempt.user, attempt.pass, record);
  if (!check.ok) {
    const { lockedFor, slowedNow } = await throttle.fail(attempt.ip, known);
    return { kind: 'failed', known: check.known, lockedFor, slowedNow };
  }
  if (state.failures > 0) await throttle.succeed(attempt.ip, check.identity.username);
  const now = services.clock.now();
  // Basic Auth signs in on every request: the time is kept to the minute, not written each time.
  if (record && (record.lastSignInAt === null || now.getTime() - Date.parse(record.lastSignInAt) >= 60_000))
    await services.store.operators.recordSignIn(record.username, now);
  return { kind: 'ok', identity: check.identity };
}
