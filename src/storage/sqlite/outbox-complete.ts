/**
 * SQLite's delivery-attempt completion: the fenced update and the attempt record as two statements
 * in one transaction (the caller's, or one of its own).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../kysely/schema.js';
import type { CompleteAttempt } from '../kysely/backend.js';

export const sqliteCompleteAttempt: CompleteAttempt = async (db, at, { seq, leaseToken, instance, result: r }) => {
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
    const attempts = res
      ? Number(res.attempts)
      : Number(
          (await trx.selectFrom('outbox_events').select('attempts').where('seq', '=', seq).executeTakeFirst())
            ?.attempts ?? 0,
        );
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
};
