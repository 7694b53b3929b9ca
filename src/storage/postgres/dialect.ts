/**
 * PostgreSQL's side of the storage dialect. Several instances share the database: rows are locked
 * per row, claims skip rows another instance holds, and every statement is a round trip — so each
 * hot write is one statement (data-modifying CTEs), where separate statements would take three or
 * four round trips.
 */
import { sql } from 'kysely';
import type { OutboxIndex, SqlDialect } from '../kysely/dialect.js';
import { toColumns, toRecord } from '../kysely/repos/transactions.js';

/** The advisory lock under which feed positions are given (any constant shared by every instance). */
const FEED_LOCK = 0x70_61_79_6c; // 'payl'

export const postgresDialect: SqlDialect = {
  kind: 'postgres',
  rowLock: sql`for update`,
  skipLocked: sql`for update skip locked`,
  // The planner picks the partial indexes from its statistics.
  indexedBy: (_index: OutboxIndex) => sql``,

  /** Each part runs only when the one before it wrote: a known dedupe key writes nothing at all. */
  async recordReport(db, now, w) {
    const at = now().toISOString();
    const due = w.now.toISOString();
    const n = w.notification;
    const set = Object.entries({ ...toColumns(w.patch), updated_at: at }).map(([col, v]) => sql`${sql.ref(col)} = ${v}`);
    const event = w.event
      ? sql`, o as (
          insert into outbox_events (event_id, event_type, order_key, order_id, mercant_id, status_version, payload, state, attempts, next_attempt_at, lease_token, created_at, updated_at, retry_from)
          select ${w.event.eventId}, ${w.event.eventType}, ${w.event.orderKey}, ${w.event.orderId}::text, ${w.event.mercantId}::text, ${w.event.statusVersion}::integer, ${w.event.payload}, 'pending', 0, ${due}, 0, ${due}, ${due}, ${due}
          where exists (select 1 from u)
        )`
      : sql``;
    const result = await sql<Record<string, unknown> & { notification_id: number }>`
      with n as (
        insert into notifications (dedupe_key, gateway_order_id, transaction_ref, gateway_transaction_id, transaction_status, status_code, source, result, payload, reason, received_at)
        values (${n.dedupeKey}, ${n.gatewayOrderId}, ${n.transactionRef}, ${n.gatewayTransactionId}, ${n.transactionStatus}, ${n.statusCode}, ${n.source}, ${n.result}, ${n.payload}, ${n.reason ?? null}::text, ${at})
        on conflict (dedupe_key) do nothing
        returning id
      ), u as (
        update transactions set ${sql.join(set)} where id = ${w.transactionId} and exists (select 1 from n)
        returning *
      )${event}
      select (select id from n) as notification_id, u.* from u`.execute(db);
    const row = result.rows[0];
    if (!row) return { inserted: false };
    const { notification_id: notificationId, ...transaction } = row;
    return { inserted: true, notificationId: Number(notificationId), transaction: toRecord(transaction as Parameters<typeof toRecord>[0]) };
  },

  /**
   * The fenced update and the attempt record in one statement. Every part of a statement sees the
   * same snapshot, so a lost lease records `attempts + 1` of the row as it was. (A data-modifying
   * part of a WITH runs whether or not anything reads it.)
   */
  async completeAttempt(db, at, { seq, leaseToken, instance, result: r }) {
    const result = await sql<{ kept: boolean }>`
      with u as (
        update outbox_events set state = ${r.state}, attempts = attempts + 1, next_attempt_at = ${r.nextAttemptAt ?? at},
          lease_owner = null, lease_until = null, last_status_code = ${r.statusCode}::integer, last_error = ${r.error},
          updated_at = ${at}, delivered_at = ${r.state === 'delivered' ? at : null}
        where seq = ${seq} and lease_token = ${leaseToken} and state in ('pending', 'failed')
        returning attempts
      ), a as (
        insert into delivery_attempts (event_seq, attempt_no, started_at, status_code, latency_ms, error, outcome, instance)
        select ${seq}::bigint, coalesce((select attempts from u), (select attempts + 1 from outbox_events where seq = ${seq}), 1),
          ${r.startedAt}, ${r.statusCode}::integer, ${r.latencyMs}::integer, ${r.error}::text,
          case when exists (select 1 from u) then ${r.state}::text else 'rejected_stale_lease' end, ${instance}::text
      )
      select exists (select 1 from u) as kept`.execute(db);
    return result.rows[0]?.kept === true;
  },

  async lockFeed(db) {
    await sql`select pg_advisory_xact_lock(${FEED_LOCK})`.execute(db);
  },
};
