/**
 * Console sessions: the cookie holds a random id, the store only its hash, and every request looks
 * the session up, so a sign-out (or disabling the operator) ends it on every instance at once.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Deps } from '../../types.js';
import { identityOf, operatorActorOf, type OperatorIdentity } from './identity.js';
import { actorName, audit } from '../audit.js';

/** A session unused for this long has ended. */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** Seen-at is written at most this often per session: the idle expiry needs no finer grain. */
const TOUCH_EVERY_MS = 60_000;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export type SessionDeps = Deps<'clock' | 'operator' | 'store'>;
export type SessionAuditDeps = Deps<'clock' | 'logger' | 'operator' | 'store'>;

const hashOf = (id: string): string => createHash('sha256').update(id).digest('base64url');

/** Starts a session for a signed-in operator; the answer is the cookie's value, known only to the browser. */
export async function startSession(
  services: SessionAuditDeps,
  identity: OperatorIdentity,
  ip: string,
): Promise<string> {
  const id = randomBytes(32).toString('base64url');
  await services.store.operators.createSession(hashOf(id), identity.username, services.clock.now());
  const actor = operatorActorOf(identity, ip);
  audit(
    services,
    { actor, action: 'session_start', subject: identity.username, outcome: 'saved' },
    `${actorName(actor)} signed in to the console`,
  );
  return id;
}

/** The operator of a live session, as they are now (role, accounts); undefined when ended, idle too long or disabled. */
export async function sessionIdentity(services: SessionDeps, id: string): Promise<OperatorIdentity | undefined> {
  if (!SESSION_ID.test(id)) return undefined;
  const hash = hashOf(id);
  const s = await services.store.operators.findSession(hash);
  if (!s || s.endedAt !== null) return undefined;
  const now = services.clock.now();
  const idleMs = now.getTime() - Date.parse(s.lastSeenAt);
  if (idleMs >= SESSION_IDLE_MS) return undefined;
  const identity = await identityOf(services, s.username);
  if (!identity) return undefined;
  if (idleMs >= TOUCH_EVERY_MS) await services.store.operators.touchSession(hash, now);
  return identity;
}

/** Ends the session of that cookie at once, on every instance (each looks it up on every request). */
export async function endSession(services: SessionAuditDeps, id: string, ip: string): Promise<void> {
  if (!SESSION_ID.test(id)) return;
  const hash = hashOf(id);
  const s = await services.store.operators.findSession(hash);
  if (!s || s.endedAt !== null) return;
  await services.store.operators.endSession(hash, services.clock.now());
  audit(
    services,
    {
      actor: { kind: 'operator', user: s.username, role: 'viewer', ip },
      action: 'session_end',
      subject: s.username,
      outcome: 'saved',
    },
    `operator:${s.username} signed out of the console`,
  );
}
