import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { FeedEntry, FeedRepo } from '../../contract.js';
import type { SqlDialect } from '../dialect.js';

export class KyselyFeedRepo implements FeedRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: SqlDialect,
    private readonly account: string,
  ) {}

  async identity(): Promise<{ databaseId: string; cursorKey: string }> {
    const rows = await this.db
      .selectFrom('paylink_meta')
      .select(['key', 'value'])
      .where('key', 'in', ['database_id', 'feed_cursor_key'])
      .execute();
    const get = (k: string) => rows.find((r) => r.key === k)?.value;
    const databaseId = get('database_id');
    const cursorKey = get('feed_cursor_key');
    if (!databaseId || !cursorKey) throw new Error('paylink_meta lacks the database identity');
    return { databaseId, cursorKey };
  }

  /**
   * Under the feed lock, the visible events without a position get the next ones in outbox order,
   * starting above the highest given and at `floor` or above. An event still uncommitted is
   * invisible here and gets a later position once it commits, so positions grow in the order events
   * become visible.
   */
  async sequence(floor: number): Promise<number> {
    const run = async (trx: Kysely<Database>): Promise<number> => {
      if (this.dialect.feedLock) await this.dialect.feedLock.execute(trx);
      const top = await trx
        .selectFrom('outbox_events')
        .select((eb) => eb.fn.max('feed_seq').as('top'))
        .where('feed_seq', 'is not', null)
        .executeTakeFirst();
      const before = Math.max(Number(top?.top ?? 0), floor - 1);
      const res = await sql`
        update outbox_events set feed_seq = x.pos
        from (
          select seq, cast(${before} as bigint) + row_number() over (order by seq) as pos
          from outbox_events where feed_seq is null and lane = 'erp'
        ) as x
        where outbox_events.seq = x.seq`.execute(trx);
      return Number(res.numAffectedRows ?? 0);
    };
    return this.db.isTransaction ? run(this.db) : this.db.transaction().execute(run);
  }

  async after(position: number, limit: number): Promise<FeedEntry[]> {
    const rows = await this.db
      .selectFrom('outbox_events')
      .select(['feed_seq', 'payload'])
      .where('feed_seq', '>', position)
      .where('account', '=', this.account)
      .orderBy('feed_seq')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ position: Number(r.feed_seq), payload: r.payload }));
  }

  async handedOut(position: number): Promise<void> {
    await this.db
      .updateTable('feed_positions')
      .set({ position })
      .where('name', '=', 'handed_out')
      .where('position', '<', position)
      .execute();
  }

  /**
   * Never beyond what a pull handed out: a cursor names what the ERP holds, but one kept from a
   * database this one is a restored copy of may lie beyond events this copy never handed out.
   * The attempt is recorded as `acknowledged` (by whom), and any push still in flight is fenced off.
   */
  async acknowledge(position: number, now: Date, by: string): Promise<number> {
    const at = now.toISOString();
    const run = async (trx: Kysely<Database>): Promise<number> => {
      const mark = await trx
        .selectFrom('feed_positions')
        .select('position')
        .where('name', '=', 'handed_out')
        .executeTakeFirst();
      const upTo = Math.min(position, Number(mark?.position ?? 0));
      await sql`
        insert into delivery_attempts (event_seq, attempt_no, started_at, status_code, latency_ms, error, outcome, instance)
        select seq, attempts + 1, ${at}, null, null, null, 'acknowledged', ${by}
        from outbox_events where feed_seq <= ${upTo} and account = ${this.account} and state in ('pending', 'failed', 'dead') order by seq`.execute(
        trx,
      );
      const res = await trx
        .updateTable('outbox_events')
        .set((eb) => ({
          state: 'delivered',
          attempts: eb('attempts', '+', 1),
          delivered_at: at,
          updated_at: at,
          lease_owner: null,
          lease_until: null,
          lease_token: eb('lease_token', '+', 1),
          last_error: null,
        }))
        .where('feed_seq', '<=', upTo)
        .where('account', '=', this.account)
        .where('state', 'in', ['pending', 'failed', 'dead'])
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    };
    return this.db.isTransaction ? run(this.db) : this.db.transaction().execute(run);
  }
}
