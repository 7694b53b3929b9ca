/** Operators who sign in by name, and their console sessions (kept by the hash of the cookie's id). */
import type { Kysely, Selectable } from 'kysely';
import type { Database, OperatorSessionsTable, OperatorsTable } from '../schema.js';
import { oneOf, UnexpectedValueError } from '../rows/literal.js';
import {
  OPERATOR_ROLES,
  type NewOperator,
  type OperatorChange,
  type OperatorRecord,
  type OperatorSession,
} from '../../../model/operator.js';
import type { OperatorsRepo } from '../../contract.js';

function accountsOf(text: string | null): string[] | null {
  if (text === null) return null;
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed) || !parsed.every((a): a is string => typeof a === 'string'))
    throw new UnexpectedValueError('operators.accounts', text);
  return parsed;
}

function toRecord(r: Selectable<OperatorsTable>): OperatorRecord {
  return {
    username: r.username,
    role: oneOf(OPERATOR_ROLES, r.role, 'operators.role'),
    accounts: accountsOf(r.accounts),
    passwordHash: r.password_hash,
    disabledAt: r.disabled_at,
    createdAt: r.created_at,
    lastSignInAt: r.last_sign_in_at,
  };
}

function toSession(
  r: Pick<Selectable<OperatorSessionsTable>, 'username' | 'created_at' | 'last_seen_at' | 'ended_at'>,
) {
  const s: OperatorSession = {
    username: r.username,
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    endedAt: r.ended_at,
  };
  return s;
}

export class KyselyOperatorsRepo implements OperatorsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(op: NewOperator, now: Date): Promise<boolean> {
    const res = await this.db
      .insertInto('operators')
      .values({
        username: op.username,
        role: op.role,
        accounts: op.accounts === null ? null : JSON.stringify(op.accounts),
        password_hash: op.passwordHash,
        disabled_at: null,
        created_at: now.toISOString(),
        last_sign_in_at: null,
      })
      .onConflict((oc) => oc.column('username').doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async get(username: string): Promise<OperatorRecord | undefined> {
    const row = await this.db.selectFrom('operators').selectAll().where('username', '=', username).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async list(): Promise<OperatorRecord[]> {
    const rows = await this.db.selectFrom('operators').selectAll().orderBy('username').execute();
    return rows.map(toRecord);
  }

  async update(username: string, change: OperatorChange): Promise<OperatorRecord | undefined> {
    const set: Partial<Selectable<OperatorsTable>> = {};
    if (change.role !== undefined) set.role = change.role;
    if (change.accounts !== undefined) set.accounts = change.accounts === null ? null : JSON.stringify(change.accounts);
    if (change.passwordHash !== undefined) set.password_hash = change.passwordHash;
    if (change.disabledAt !== undefined) set.disabled_at = change.disabledAt;
    if (Object.keys(set).length > 0)
      await this.db.updateTable('operators').set(set).where('username', '=', username).execute();
    return this.get(username);
  }

  async recordSignIn(username: string, now: Date): Promise<void> {
    await this.db
      .updateTable('operators')
      .set({ last_sign_in_at: now.toISOString() })
      .where('username', '=', username)
      .execute();
  }

  async createSession(idHash: string, username: string, now: Date): Promise<void> {
    const at = now.toISOString();
    await this.db
      .insertInto('operator_sessions')
      .values({ id_hash: idHash, username, created_at: at, last_seen_at: at, ended_at: null })
      .execute();
  }

  async findSession(idHash: string): Promise<OperatorSession | undefined> {
    const row = await this.db
      .selectFrom('operator_sessions')
      .select(['username', 'created_at', 'last_seen_at', 'ended_at'])
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
    return row ? toSession(row) : undefined;
  }

  async touchSession(idHash: string, now: Date): Promise<void> {
    await this.db
      .updateTable('operator_sessions')
      .set({ last_seen_at: now.toISOString() })
      .where('id_hash', '=', idHash)
      .where('ended_at', 'is', null)
      .execute();
  }

  async endSession(idHash: string, now: Date): Promise<void> {
    await this.db
      .updateTable('operator_sessions')
      .set({ ended_at: now.toISOString() })
      .where('id_hash', '=', idHash)
      .where('ended_at', 'is', null)
      .execute();
  }

  async endSessionsOf(username: string, now: Date): Promise<number> {
    const res = await this.db
      .updateTable('operator_sessions')
      .set({ ended_at: now.toISOString() })
      .where('username', '=', username)
      .where('ended_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async pruneSessions(before: string): Promise<number> {
    const res = await this.db
      .deleteFrom('operator_sessions')
      .where((eb) => eb.or([eb('ended_at', '<', before), eb('last_seen_at', '<', before)]))
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
