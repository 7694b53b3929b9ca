import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { ConfigRepo, RuntimeConfigRow } from '../../contract.js';
import { isUniqueViolation } from '../errors.js';
import { DEFAULT_ACCOUNT } from '../../../model/account.js';

/** The default account's row keeps the id it had before accounts; another account's is named after it (ids hold no `:`). */
function rowId(account: string): string {
  return account === DEFAULT_ACCOUNT ? 'current' : `account:${account}`;
}

export class KyselyConfigRepo implements ConfigRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly account: string,
  ) {}

  async get(): Promise<RuntimeConfigRow | undefined> {
    const row = await this.db
      .selectFrom('runtime_config')
      .selectAll()
      .where('id', '=', rowId(this.account))
      .executeTakeFirst();
    if (!row) return undefined;
    const parsed: unknown = JSON.parse(row.document);
    const document =
      parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : {};
    return { document, version: Number(row.version), updatedAt: row.updated_at, updatedBy: row.updated_by };
  }

  async put(
    document: Record<string, unknown>,
    expectedVersion: number,
    updatedBy: string | null,
  ): Promise<RuntimeConfigRow | undefined> {
    const at = this.now().toISOString();
    const text = JSON.stringify(document);
    const version = expectedVersion + 1;
    if (expectedVersion === 0) {
      try {
        await this.db
          .insertInto('runtime_config')
          .values({
            id: rowId(this.account),
            account: this.account,
            document: text,
            version,
            updated_at: at,
            updated_by: updatedBy,
          })
          .execute();
      } catch (err) {
        if (isUniqueViolation(err)) return undefined;
        throw err;
      }
    } else {
      const res = await this.db
        .updateTable('runtime_config')
        .set({ document: text, version, updated_at: at, updated_by: updatedBy })
        .where('id', '=', rowId(this.account))
        .where('version', '=', expectedVersion)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return undefined;
    }
    return { document, version, updatedAt: at, updatedBy };
  }
}
