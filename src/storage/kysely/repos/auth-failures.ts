/**
 * Failed authentication attempts per client address, in the database so every instance sharing it
 * counts the same failures and honours the same lock (a client spreading its guesses over
 * instances behind a balancer gets no more tries).
 */
import { sql, type Kysely } from 'kysely';
import type { AuthFailurePolicy, AuthFailureState } from '../../../model/auth-failures.js';
import type { AuthFailuresRepo } from '../../contract.js';
import type { Database } from '../schema.js';

export class KyselyAuthFailuresRepo implements AuthFailuresRepo {
  private sincePrune = 0;
  constructor(private readonly db: Kysely<Database>) {}

  async get(scope: string, client: string): Promise<AuthFailureState | undefined> {
    const row = await this.db
      .selectFrom('auth_failures')
      .select(['failures', 'locked_until'])
      .where('scope', '=', scope)
      .where('client', '=', client)
      .executeTakeFirst();
    return row ? { failures: Number(row.failures), lockedUntil: row.locked_until } : undefined;
  }

  /**
   * Counts one failure, atomically across instances: a window older than `windowMs` starts again
   * at 1, a live lock is left alone; reaching `maxFailures` locks the client for `lockMs`.
   */
  async fail(scope: string, client: string, now: Date, p: AuthFailurePolicy): Promise<AuthFailureState> {
    const at = now.toISOString();
    const cutoff = new Date(now.getTime() - p.windowMs).toISOString();
    const row = await sql<{ failures: number | string; locked_until: string | null }>`
      insert into auth_failures (scope, client, failures, window_start, locked_until) values (${scope}, ${client}, 1, ${at}, null)
      on conflict (scope, client) do update set
        failures = case when auth_failures.locked_until > ${at} then auth_failures.failures
                        when auth_failures.window_start <= ${cutoff} then 1
                        else auth_failures.failures + 1 end,
        window_start = case when auth_failures.locked_until > ${at} then auth_failures.window_start
                            when auth_failures.window_start <= ${cutoff} then ${at}
                            else auth_failures.window_start end
      returning failures, locked_until`.execute(this.db);
    const r = row.rows[0];
    if (++this.sincePrune >= 100) {
      this.sincePrune = 0;
      await this.prune(now, p);
    }
    const state: AuthFailureState = { failures: Number(r?.failures ?? 1), lockedUntil: r?.locked_until ?? null };
    if (state.lockedUntil !== null && state.lockedUntil > at) return state;
    if (state.failures < p.maxFailures) return { failures: state.failures, lockedUntil: null };
    const lockedUntil = new Date(now.getTime() + p.lockMs).toISOString();
    await this.db
      .updateTable('auth_failures')
      .set({ failures: 0, window_start: at, locked_until: lockedUntil })
      .where('scope', '=', scope)
      .where('client', '=', client)
      .execute();
    return { failures: 0, lockedUntil };
  }

  async clear(scope: string, client: string): Promise<void> {
    await this.db.deleteFrom('auth_failures').where('scope', '=', scope).where('client', '=', client).execute();
  }

  async lockedUntil(scope: string, now: Date): Promise<string | null> {
    const row = await this.db
      .selectFrom('auth_failures')
      .select((eb) => eb.fn.max('locked_until').as('until'))
      .where('scope', '=', scope)
      .where('locked_until', '>', now.toISOString())
      .executeTakeFirst();
    return row?.until ?? null;
  }

  async clearScope(scope: string): Promise<void> {
    await this.db.deleteFrom('auth_failures').where('scope', '=', scope).execute();
  }

  /** Rows whose window and lock are both over say nothing any more. */
  async prune(now: Date, p: AuthFailurePolicy): Promise<void> {
    const at = now.toISOString();
    const cutoff = new Date(now.getTime() - p.windowMs).toISOString();
    await this.db
      .deleteFrom('auth_failures')
      .where('window_start', '<=', cutoff)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', at)]))
      .execute();
  }
}
