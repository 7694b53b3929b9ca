/**
 * Accounts: one Midtrans merchant each, with its own runtime configuration (the `/api/config`
 * document and rules, plus `gateway.merchant_id`), API keys and payments. The environment
 * configures `default`, which always exists and cannot be disabled.
 */
import { Type } from 'typebox';
import type { Deps } from '../../types.js';
import { ACCOUNT_ID_PATTERN, DEFAULT_ACCOUNT, type AccountRecord } from '../../model/account.js';
import type { GatewayMode } from '../../model/runtime-config.js';
import { applyOverrides } from '../../config/runtime.js';
import { AppError } from '../../platform/errors.js';
import { actorName, audit, type Actor } from '../audit.js';
import { accountCount, accountsChanged } from './events.js';
import { embeddedMerchantProblems, syncEmbeddedMerchant } from './embedded-merchants.js';
import { maySee, requireRole } from '../operators/access.js';
import {
  RuntimeConfigPatchSchema,
  changeRuntimeConfig,
  currentRuntimeConfig,
  effectiveProblems,
  mergePatch,
  type RuntimeConfigPatch,
  type RuntimeConfigState,
} from '../runtime-config.js';

export const AccountIdSchema = Type.String({
  minLength: 1,
  maxLength: 32,
  pattern: ACCOUNT_ID_PATTERN,
  description: 'The account id.',
});

export const NewAccountSchema = Type.Object(
  {
    id: AccountIdSchema,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    config: RuntimeConfigPatchSchema,
  },
  { additionalProperties: false },
);

export interface AccountSummary extends AccountRecord {
  mode: GatewayMode;
}

type ConfigDeps = Deps<'config' | 'embeddedGateway' | 'logger' | 'runtimeConfig' | 'store'>;

/** The services of one account's configuration: its document and its store view. */
function accountConfigDeps<S extends ConfigDeps>(services: S, account: string): S {
  return {
    ...services,
    runtimeConfig: services.runtimeConfig.forAccount(account),
    store: services.store.forAccount(account),
  };
}

/** The account a notification URL names: 404 when unknown, refused like a bad signature when disabled. */
export async function notifiedAccount(services: Deps<'store'>, id: string): Promise<string> {
  const a = await requireAccount(services, id);
  if (a.disabledAt !== null)
    throw new AppError('SIGNATURE_INVALID', 'The account of this notification URL is disabled.');
  return a.id;
}

/** Names a path of its own beside the accounts' notification URLs. */
const RESERVED_IDS = new Set(['replay']);

/** Whether the service has more than one account: lists then name each row's account. */
export async function severalAccounts(services: Deps<'store'>): Promise<boolean> {
  return (await accountCount(services.store)) > 1;
}

/** The account, or 404 as for any unknown resource; also when `actor` may not see it. */
export async function requireAccount(services: Deps<'store'>, id: string, actor?: Actor): Promise<AccountRecord> {
  const a = actor && !maySee(actor, id) ? undefined : await services.store.accounts.get(id);
  if (!a) throw new AppError('NOT_FOUND', `No account ${id}.`);
  return a;
}

/** The accounts `actor` may see (every account without one). */
export async function listAccounts(
  services: Deps<'runtimeConfig' | 'store'>,
  actor?: Actor,
): Promise<AccountSummary[]> {
  const all = (await services.store.accounts.list()).filter((a) => !actor || maySee(actor, a.id));
  return Promise.all(
    all.map(async (a) => ({ ...a, mode: (await services.runtimeConfig.forAccount(a.id).current()).gateway.mode })),
  );
}

/** The ids of the accounts `actor` may see, oldest first (the console's account switcher). */
export async function visibleAccountIds(services: Deps<'store'>, actor: Actor): Promise<string[]> {
  return (await services.store.accounts.list()).filter((a) => maySee(actor, a.id)).map((a) => a.id);
}

/** Keeps the accounts table's copy of the MID (for lists) as the account's configuration has it. */
async function syncMerchantId(services: ConfigDeps, account: AccountRecord): Promise<void> {
  const mid = (await services.runtimeConfig.forAccount(account.id).current()).gateway.merchant_id ?? null;
  if (mid !== account.merchantId) await services.store.accounts.setMerchantId(account.id, mid);
}

/**
 * A new account with its configuration: 409 `ACCOUNT_EXISTS` for an id in use (a disabled one
 * too), 400 when the configuration would not be usable (nothing is created then).
 */
export async function createAccount(
  services: ConfigDeps & Deps<'clock'>,
  input: { id: string; name?: string; config: RuntimeConfigPatch },
  actor: Actor,
): Promise<AccountRecord> {
  requireRole(actor, 'admin');
  if (RESERVED_IDS.has(input.id))
    throw new AppError('VALIDATION_FAILED', `The id ${input.id} is reserved.`, {
      errors: [{ path: 'id', message: 'is reserved' }],
    });
  if (await services.store.accounts.get(input.id)) throw new AppError('ACCOUNT_EXISTS');
  const scoped = accountConfigDeps(services, input.id);
  const { next } = mergePatch({}, input.config);
  const effective = applyOverrides(scoped.runtimeConfig.defaults(), next);
  const problems = [
    ...effectiveProblems(effective, {
      production: services.config.isProduction,
      simulatorAvailable: services.config.gateway.mode === 'simulator',
    }),
    ...embeddedMerchantProblems(services, input.id, effective),
  ];
  if (problems.length > 0)
    throw new AppError('VALIDATION_FAILED', 'The configuration would not be usable.', {
      errors: problems.map((p) => ({ ...p, path: `config.${p.path}` })),
    });
  let created: AccountRecord;
  try {
    created = await services.store.accounts.insert(
      { id: input.id, name: input.name ?? input.id, merchantId: next.gateway?.merchant_id ?? null },
      services.clock.now(),
    );
  } catch (err) {
    if (services.store.isUniqueViolation(err)) throw new AppError('ACCOUNT_EXISTS');
    throw err;
  }
  accountsChanged(services.store);
  await changeRuntimeConfig(scoped, input.config, actor);
  await syncEmbeddedMerchant(services, input.id);
  audit(
    services,
    { actor, action: 'account_create', subject: input.id, outcome: 'saved' },
    `${actorName(actor)} created account ${input.id}`,
  );
  return created;
}

export async function accountConfig(services: ConfigDeps, id: string, actor: Actor): Promise<RuntimeConfigState> {
  await requireAccount(services, id, actor);
  return currentRuntimeConfig(accountConfigDeps(services, id));
}

/** `/api/config`'s rules on one account's document; the accounts list follows its MID. */
export async function changeAccountConfig(
  services: ConfigDeps,
  id: string,
  patch: RuntimeConfigPatch,
  actor: Actor,
): Promise<RuntimeConfigState> {
  requireRole(actor, 'admin');
  const account = await requireAccount(services, id, actor);
  const scoped = accountConfigDeps(services, id);
  const stored = await scoped.runtimeConfig.overrides();
  const embedded = embeddedMerchantProblems(
    services,
    id,
    applyOverrides(scoped.runtimeConfig.defaults(), mergePatch(stored.document, patch).next),
  );
  if (embedded.length > 0)
    throw new AppError('VALIDATION_FAILED', 'The configuration would not be usable.', { errors: embedded });
  await changeRuntimeConfig(scoped, patch, actor);
  await syncMerchantId(services, account);
  if (account.disabledAt === null) await syncEmbeddedMerchant(services, id);
  return currentRuntimeConfig(scoped);
}

/** Disables an account (its history is kept; its keys and notifications are refused from now on). */
export async function disableAccount(
  services: Deps<'clock' | 'logger' | 'store'>,
  id: string,
  actor: Actor,
): Promise<AccountRecord> {
  requireRole(actor, 'admin');
  await requireAccount(services, id, actor);
  if (id === DEFAULT_ACCOUNT) throw new AppError('ACCOUNT_DEFAULT');
  const changed = await services.store.accounts.disable(id, services.clock.now());
  if (changed)
    audit(
      services,
      { actor, action: 'account_disable', subject: id, outcome: 'saved' },
      `${actorName(actor)} disabled account ${id}`,
    );
  return requireAccount(services, id);
}
