/**
 * PostgreSQL's report writes: the notification, the transaction's change and the ERP event in one
 * statement (data-modifying CTEs). Every statement is a round trip, and separate statements would
 * take three or four (docs/performance.md). Each part runs only when the one before it wrote, so a
 * known dedupe key writes nothing at all.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../kysely/schema.js';
import type { ReportWrite, ReportWritesRepo, ReportWritten } from '../contract.js';
import { toColumns, toTransaction, type TransactionRow } from '../kysely/rows/transactions.js';

export class PostgresReportWrites implements ReportWritesRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly account: string,
  ) {}

  async recordNew(w: ReportWrite): Promise<ReportWritten> {
    const at = this.now().toISOString();
    const due = w.now.toISOString();
    const n = w.notification;
    const set = Object.entries({ ...toColumns(w.patch), updated_at: at }).map(
      ([col, v]) => sql`${sql.ref(col)} = ${v}`,
    );
    const event = w.event
      ? sql`, o as (
          insert into outbox_events (account, event_id, event_type, order_key, order_id, mercant_id, status_version, payload, state, attempts, next_attempt_at, lease_token, created_at, updated_at, retry_from, trace_context)
          select ${this.account}, ${w.event.eventId}, ${w.event.eventType}, ${w.event.orderKey}, ${w.event.orderId}::text, ${w.event.mercantId}::text, ${w.event.statusVersion}::integer, ${w.event.payload}, 'pending', 0, ${due}, 0, ${due}, ${due}, ${due}, ${w.event.traceContext ?? null}::text
          where exists (select 1 from u)
        )`
      : sql``;
    const result = await sql<Record<string, unknown> & { notification_id: number }>`
      with n as (
        insert into notifications (account, dedupe_key, gateway_order_id, transaction_ref, gateway_transaction_id, transaction_status, status_code, source, result, payload, reason, received_at)
        values (${this.account}, ${n.dedupeKey}, ${n.gatewayOrderId}, ${n.transactionRef}, ${n.gatewayTransactionId}, ${n.transactionStatus}, ${n.statusCode}, ${n.source}, ${n.result}, ${n.payload}, ${n.reason ?? null}::text, ${at})
        on conflict (account, dedupe_key) do nothing
        returning id
      ), u as (
        update transactions set ${sql.join(set)} where id = ${w.transactionId} and exists (select 1 from n)
        returning *
      )${event}
      select (select id from n) as notification_id, u.* from u`.execute(this.db);
    const row = result.rows[0];
    if (!row) return { inserted: false };
    const { notification_id: notificationId, ...transaction } = row;
    return {
      inserted: true,
      notificationId: Number(notificationId),
      transaction: toTransaction(transaction as TransactionRow),
    };
  }
}
