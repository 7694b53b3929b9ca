import type { Kysely, Selectable } from 'kysely';
import type { AccountsTable, ApiKeysTable, Database } from '../schema.js';
import { UniqueViolationError, type AccountsRepo, type ApiKeysRepo, type NewAccount } from '../../contract.js';
import { isUniqueViolation } from '../errors.js';
import type { AccountRecord, ApiKeyMatch, ApiKeyRecord } from '../../../model/account.js';

function toAccount(r: Selectable<AccountsTable>): AccountRecord {
  return { id: r.id, name: r.name, merchantId: r.merchant_id, createdAt: r.created_at, disabledAt: r.disabled_at };
}

function toKey(r: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    keyId: r.key_id,
    account: r.account,
    label: r.label,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  };
}

export class KyselyAccountsRepo implements AccountsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(a: NewAccount, now: Date): Promise<AccountRecord> {
    const row = { id: a.id, name: a.name, merchant_id: a.merchantId, created_at: now.toISOString(), disabled_at: null };
    try {
      await this.db.insertInto('accounts').values(row).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolationError(`account ${a.id} exists`);
      throw err;
    }
    return toAccount(row);
  }

  async get(id: string): Promise<AccountRecord | undefined> {
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toAccount(row) : undefined;
  }

  async list(): Promise<AccountRecord[]> {
    const rows = await this.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(toAccount);
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async setMerchantId(id: string, merchantId: string | null): Promise<void> {
    await this.db.updateTable('accounts').set({ merchant_id: merchantId }).where('id', '=', id).execute();
  }

  async disable(id: string, now: Date): Promise<boolean> {
    const res = await this.db
      .updateTable('accounts')
      .set({ disabled_at: now.toISOString() })
      .where('id', '=', id)
      .where('disabled_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }
}

export class KyselyApiKeysRepo implements ApiKeysRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(
    k: { keyId: string; account: string; label: string | null; keyHash: string },
    now: Date,
  ): Promise<ApiKeyRecord> {
    const row = {
      key_id: k.keyId,
      account: k.account,
      label: k.label,
      key_hash: k.keyHash,
      created_at: now.toISOString(),
      last_used_at: null,
      revoked_at: null,
    };
    try {
      await this.db.insertInto('api_keys').values(row).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolationError('api key exists');
      throw err;
    }
    return toKey(row);
  }

  async findByHash(keyHash: string): Promise<ApiKeyMatch | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account')
      .selectAll('api_keys')
      .select('accounts.disabled_at as account_disabled_at')
      .where('api_keys.key_hash', '=', keyHash)
      .executeTakeFirst();
    if (!row) return undefined;
    const { account_disabled_at, ...key } = row;
    return { ...toKey(key), accountDisabled: account_disabled_at !== null };
  }

  async list(account: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account', '=', account)
      .where('revoked_at', 'is', null)
      .orderBy('created_at')
      .orderBy('key_id')
      .execute();
    return rows.map(toKey);
  }

  async revoke(account: string, keyId: string, now: Date): Promise<boolean> {
    const res = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: now.toISOString() })
      .where('key_id', '=', keyId)
      .where('account', '=', account)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async touch(keyId: string, now: Date): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ last_used_at: now.toISOString() })
      .where('key_id', '=', keyId)
      .execute();
  }
}
