/**
 * Who an operator is, from a name and a password: the operator of `log_user`/`log_pass` (an admin)
 * or an enabled stored operator. Stored passwords are slow to check, so a check that succeeded is
 * remembered for a few minutes (by a keyed hash of the name, the password and the stored hash: a
 * changed password or a disabled operator is never served from it).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Deps } from '../../types.js';
import type { OperatorRecord, OperatorRole } from '../../model/operator.js';
import { secretEquals } from '../../platform/secrets.js';
import { spendVerification, verifyPassword } from './passwords.js';
import type { Actor } from '../audit.js';

export interface OperatorIdentity {
  username: string;
  role: OperatorRole;
  /** The accounts the operator may see; null = all. */
  accounts: string[] | null;
}

export type IdentityDeps = Deps<'operator' | 'store'>;

/** The name is one of a person's: lower-case letters, digits and `._-@`, up to 64. */
export const USERNAME_PATTERN = '^[a-z0-9][a-z0-9._@-]{0,63}$';
const USERNAME = new RegExp(USERNAME_PATTERN);
export const isUsername = (s: string): boolean => USERNAME.test(s);

const envIdentity = (services: IdentityDeps): OperatorIdentity => ({
  username: services.operator.user,
  role: 'admin',
  accounts: null,
});

export const toIdentity = (r: OperatorRecord): OperatorIdentity => ({
  username: r.username,
  role: r.role,
  accounts: r.accounts,
});

/** The operator of that name as things stand now (role and accounts), or undefined when unknown or disabled. */
export async function identityOf(services: IdentityDeps, username: string): Promise<OperatorIdentity | undefined> {
  if (username === services.operator.user) return envIdentity(services);
  if (!isUsername(username)) return undefined;
  const r = await services.store.operators.get(username);
  return r && r.disabledAt === null ? toIdentity(r) : undefined;
}

export function operatorActorOf(id: OperatorIdentity, ip?: string): Actor {
  return {
    kind: 'operator',
    user: id.username,
    role: id.role,
    ...(id.accounts === null ? {} : { accounts: id.accounts }),
    ...(ip === undefined ? {} : { ip }),
  };
}

const CACHE_MS = 5 * 60_000;
const CACHE_MAX = 1_000;
const cacheKey = randomBytes(32);
const verified = new Map<string, number>();

function remembered(key: string, nowMs: number): boolean {
  const until = verified.get(key);
  if (until === undefined) return false;
  if (until > nowMs) return true;
  verified.delete(key);
  return false;
}

function remember(key: string, nowMs: number): void {
  if (verified.size >= CACHE_MAX) verified.clear();
  verified.set(key, nowMs + CACHE_MS);
}

export type CredentialCheck =
  | { ok: true; identity: OperatorIdentity }
  /** `known`: the name is an operator's (logged; any other name may be a mistyped password). */
  | { ok: false; known: string | undefined };

/** Checks a name and a password; `record` is the stored operator of that name, when there is one. */
export async function checkCredentials(
  services: IdentityDeps,
  user: string,
  pass: string,
  record: OperatorRecord | undefined,
): Promise<CredentialCheck> {
  // Both compared every time, so timing does not tell which one was wrong.
  const envUser = secretEquals(user, services.operator.user);
  const envPass = secretEquals(pass, services.operator.pass);
  if (envUser) return envPass ? { ok: true, identity: envIdentity(services) } : { ok: false, known: user };
  if (!record) {
    await spendVerification(pass);
    return { ok: false, known: undefined };
  }
  const key = createHmac('sha256', cacheKey).update(`${user}\0${pass}\0${record.passwordHash}`).digest('base64url');
  const nowMs = Date.now();
  const good = remembered(key, nowMs) || (await verifyPassword(pass, record.passwordHash));
  if (!good || record.disabledAt !== null) return { ok: false, known: user };
  remember(key, nowMs);
  return { ok: true, identity: toIdentity(record) };
}

/** The stored operator a presented name may be (no lookup for names no operator can have). */
export async function storedOperator(services: IdentityDeps, user: string): Promise<OperatorRecord | undefined> {
  if (user === services.operator.user || !isUsername(user)) return undefined;
  return services.store.operators.get(user);
}
