/**
 * API keys of the accounts. A key is 32 random bytes (`pl_` + base64url), so a plain SHA-256 of
 * it is a safe store: nobody can search a space of 2^256, and the lookup is one indexed read of the
 * hash (no timing of a comparison to learn from). Looked up on every request, never cached, so a
 * revocation or a disabled account takes effect at once on every instance.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Deps } from '../../types.js';
import { DEFAULT_ACCOUNT, type ApiKeyRecord } from '../../model/account.js';
import { secretEquals } from '../../platform/secrets.js';
import { AppError } from '../../platform/errors.js';
import { actorName, audit, type Actor } from '../audit.js';
import { requireAccount } from './accounts.js';
import { requireRole } from '../operators/access.js';

/** A use is noted at most this often per key: a busy ERP must not write on every request. */
const TOUCH_EVERY_MS = 60_000;

export function apiKeyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A new key for the account, shown this once: only its hash is kept. */
export async function createApiKey(
  services: Deps<'clock' | 'logger' | 'store'>,
  account: string,
  label: string | undefined,
  actor: Actor,
): Promise<ApiKeyRecord & { key: string }> {
  requireRole(actor, 'admin');
  await requireAccount(services, account, actor);
  const key = `pl_${randomBytes(32).toString('base64url')}`;
  const keyId = `key_${randomBytes(9).toString('base64url')}`;
  const rec = await services.store.apiKeys.insert(
    { keyId, account, label: label ?? null, keyHash: apiKeyHash(key) },
    services.clock.now(),
  );
  audit(
    services,
    { actor, action: 'api_key_create', subject: account, outcome: 'saved' },
    `${actorName(actor)} created an API key for account ${account}`,
    { key_id: keyId },
  );
  return { ...rec, key };
}

export async function listApiKeys(services: Deps<'store'>, account: string, actor: Actor): Promise<ApiKeyRecord[]> {
  requireRole(actor, 'admin');
  await requireAccount(services, account, actor);
  return services.store.apiKeys.list(account);
}

/** Revokes at once; 404 when the account has no such key that is still in force. */
export async function revokeApiKey(
  services: Deps<'clock' | 'logger' | 'store'>,
  account: string,
  keyId: string,
  actor: Actor,
): Promise<void> {
  requireRole(actor, 'admin');
  await requireAccount(services, account, actor);
  if (!(await services.store.apiKeys.revoke(account, keyId, services.clock.now())))
    throw new AppError('NOT_FOUND', `No API key ${keyId} in force for account ${account}.`);
  audit(
    services,
    { actor, action: 'api_key_revoke', subject: account, outcome: 'saved' },
    `${actorName(actor)} revoked an API key of account ${account}`,
    { key_id: keyId },
  );
}

/**
 * The account a presented key acts for, or undefined when it is wrong, revoked or its account is
 * disabled. The keys of `API_KEYS` are `default`'s (each compared in constant time).
 */
export async function accountOfKey(
  services: Deps<'clock' | 'config' | 'logger' | 'store'>,
  presented: string,
): Promise<string | undefined> {
  let env = false;
  for (const k of services.config.apiKeys) env = secretEquals(presented, k) || env;
  if (env) return DEFAULT_ACCOUNT;
  // Only a key of our own shape is looked up: anything else cannot be one.
  if (!presented.startsWith('pl_') || presented.length > 100) return undefined;
  const found = await services.store.apiKeys.findByHash(apiKeyHash(presented));
  if (!found || found.revokedAt !== null || found.accountDisabled) return undefined;
  const now = services.clock.now();
  if (found.lastUsedAt === null || now.getTime() - Date.parse(found.lastUsedAt) >= TOUCH_EVERY_MS)
    await services.store.apiKeys.touch(found.keyId, now).catch((err: unknown) => {
      services.logger.warn(
        { err: { message: err instanceof Error ? err.message : String(err) } },
        'api key use not noted',
      );
    });
  return found.account;
}
