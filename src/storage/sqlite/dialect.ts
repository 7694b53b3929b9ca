/**
 * SQLite's side of the storage dialect. One connection in one process: a transaction holds the only
 * write lock from its start, so nothing is locked per row, and several statements cost no round
 * trip — the hot writes are plain statements inside the caller's transaction.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../kysely/schema.js';
import type { OutboxIndex, SqlDialect } from '../kysely/dialect.js';
import { KyselyNotificationsRepo } from '../kysely/repos/notifications.js';
import { KyselyTransactionsRepo } from '../kysely/repos/transactions.js';
import { insertOutboxEvent } from '../kysely/repos/outbox.js';

export const sqliteDialect: SqlDialect = {
  kind: 'sqlite',
  rowLock: sql``,
  skipLocked: sql``,
  // Without statistics SQLite prefers the `(state, …)` indexes and then sorts or scans every
  // waiting event; the claim must walk the partial index in due order and stop early.
  indexedBy: (index: OutboxIndex) => sql.raw(`indexed by ${index}`),

  async recordReport(db, now, w) {
    const notificationId = await new KyselyNotificationsRepo(db, now).insertNew(w.notification);
    if (notificationId === undefined) return { inserted: false };
    const transaction = await new KyselyTransactionsRepo(db, now, sqliteDialect).update(w.transactionId, w.patch);
    if (w.event) await insertOutboxEvent(db, w.event, w.now);
    return { inserted: true, notificationId, transaction };
  },

  async completeAttempt(db, at, { seq, leaseToken, instance, result: r }) {
    const run = async (trx: Kysely<Database>): Promise<boolean> => {
      const res = await trx
        .updateTable('outbox_events')
        .set((eb) => ({
          state: r.state,
          attempts: eb('attempts', '+', 1),
          next_attempt_at: r.nextAttemptAt ?? at,
          lease_owner: null,
          lease_until: null,
          last_status_code: r.statusCode,
          last_error: r.error,
          updated_at: at,
          delivered_at: r.state === 'delivered' ? at : null,
        }))
        .where('seq', '=', seq)
        .where('lease_token', '=', leaseToken)
        .where('state', 'in', ['pending', 'failed'])
        .returning('attempts')
        .executeTakeFirst();
      const attempts = res ? Number(res.attempts) : Number((await trx.selectFrom('outbox_events').select('attempts').where('seq', '=', seq).executeTakeFirst())?.attempts ?? 0);
      await trx
        .insertInto('delivery_attempts')
        .values({
          event_seq: seq,
          attempt_no: res ? attempts : attempts + 1,
          started_at: r.startedAt,
          status_code: r.statusCode,
          latency_ms: r.latencyMs,
          error: r.error,
          outcome: res ? r.state : 'rejected_stale_lease',
          instance,
        })
        .execute();
      return res !== undefined;
    };
    return db.isTransaction ? run(db) : db.transaction().execute((trx) => run(trx));
  },

  async lockFeed() {
    // One connection writes at a time: the transaction is the lock.
  },
};
