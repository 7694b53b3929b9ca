/**
 * A notification's row and its record, and the insert that both the repository and a database's own
 * report writes (`sqlite/report-writes.ts`) run.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, NotificationsTable } from '../schema.js';
import {
  NOTIFICATION_RESULTS,
  NOTIFICATION_SOURCES,
  type NewNotification,
  type NotificationRecord,
} from '../../../model/notification.js';
import { oneOf } from './literal.js';
import { Precompiled, type DatabaseKind } from '../precompiled.js';

type NotificationRow = Selectable<NotificationsTable>;

export function toNotification(r: NotificationRow): NotificationRecord {
  return {
    id: Number(r.id),
    account: r.account,
    dedupeKey: r.dedupe_key,
    gatewayOrderId: r.gateway_order_id,
    transactionRef: r.transaction_ref,
    gatewayTransactionId: r.gateway_transaction_id,
    transactionStatus: r.transaction_status,
    statusCode: r.status_code,
    source: oneOf(NOTIFICATION_SOURCES, r.source, 'notifications.source'),
    result: oneOf(NOTIFICATION_RESULTS, r.result, 'notifications.result'),
    payload: r.payload,
    reason: r.reason,
    receivedAt: r.received_at,
  };
}

const INSERT = new Precompiled<{ id: number | string }>(`
  insert into notifications (account, dedupe_key, gateway_order_id, transaction_ref, gateway_transaction_id,
    transaction_status, status_code, source, result, payload, reason, received_at)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  on conflict (account, dedupe_key) do nothing
  returning id`);

/** A new notification's values in the insert's column order (its reason cut to 500 characters). */
export function notificationValues(account: string, n: NewNotification, at: string): unknown[] {
  return [
    account,
    n.dedupeKey,
    n.gatewayOrderId,
    n.transactionRef,
    n.gatewayTransactionId,
    n.transactionStatus,
    n.statusCode,
    n.source,
    n.result,
    n.payload,
    n.reason === undefined || n.reason === null ? null : n.reason.slice(0, 500),
    at,
  ];
}

/** The new record's id, or undefined when the dedupe key exists (nothing written). */
export async function insertNotification(
  db: Kysely<Database>,
  kind: DatabaseKind,
  now: () => Date,
  n: NewNotification,
  account: string,
): Promise<number | undefined> {
  // ON CONFLICT DO NOTHING: a unique violation would abort a PostgreSQL transaction.
  const row = await INSERT.first(db, kind, notificationValues(account, n, now().toISOString()));
  return row ? Number(row.id) : undefined;
}
