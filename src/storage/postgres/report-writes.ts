/**
 * PostgreSQL's report writes: the notification, the transaction's change and the ERP event in one
 * statement (data-modifying CTEs). Every statement is a round trip, and separate statements would
 * take three or four (docs/performance.md). Each part runs only when the one before it wrote, so a
 * known dedupe key writes nothing at all.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../kysely/schema.js';
import type { ReportWrite, ReportWritesRepo, ReportWritten } from '../contract.js';
import { toColumns, toTransaction, type TransactionRow } from '../kysely/rows/transactions.js';
import { PrecompiledFamily } from '../kysely/precompiled.js';
import { notificationValues } from '../kysely/rows/notifications.js';

type Written = TransactionRow & { notification_id: number | string };

/** Keyed by the columns the patch sets, then `event` or `none`: one text per shape, made once. */
const WRITE = new PrecompiledFamily<Written>((key) => {
  const parts = key.split(' ');
  const withEvent = parts.pop() === 'event';
  const set = [...parts.filter((c) => c !== ''), 'updated_at'].map((c) => `${c} = ?`).join(', ');
  const event = withEvent
    ? `, o as (
        insert into outbox_events (account, event_id, event_type, order_key, order_id, mercant_id, status_version, payload, state, attempts, next_attempt_at, lease_token, created_at, updated_at, retry_from, trace_context)
        select ?, ?, ?, ?, ?::text, ?::text, ?::integer, ?, 'pending', 0, ?, 0, ?, ?, ?, ?::text
        where exists (select 1 from u)
      )`
    : '';
  return `
    with n as (
      insert into notifications (account, dedupe_key, gateway_order_id, transaction_ref, gateway_transaction_id, transaction_status, status_code, source, result, payload, reason, received_at)
      values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::text, ?)
      on conflict (account, dedupe_key) do nothing
      returning id
    ), u as (
      update transactions set ${set} where id = ? and exists (select 1 from n)
      returning *
    )${event}
    select (select id from n) as notification_id, u.* from u`;
});

export class PostgresReportWrites implements ReportWritesRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly account: string,
  ) {}

  async recordNew(w: ReportWrite): Promise<ReportWritten> {
    const at = this.now().toISOString();
    const due = w.now.toISOString();
    const columns = toColumns(w.patch);
    const e = w.event;
    const params: unknown[] = [
      ...notificationValues(this.account, w.notification, at),
      ...Object.values(columns),
      at,
      w.transactionId,
    ];
    if (e)
      params.push(
        this.account,
        e.eventId,
        e.eventType,
        e.orderKey,
        e.orderId,
        e.mercantId,
        e.statusVersion,
        e.payload,
        due,
        due,
        due,
        due,
        e.traceContext ?? null,
      );
    const key = `${Object.keys(columns).join(' ')} ${e ? 'event' : 'none'}`;
    const row = await WRITE.get(key).first(this.db, 'postgres', params);
    if (!row) return { inserted: false };
    const { notification_id: notificationId, ...transaction } = row;
    return {
      inserted: true,
      notificationId: Number(notificationId),
      transaction: toTransaction(transaction as TransactionRow),
    };
  }
}
