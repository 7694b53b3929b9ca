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

/** The new record's id, or undefined when the dedupe key exists (nothing written). */
export async function insertNotification(
  db: Kysely<Database>,
  now: () => Date,
  n: NewNotification,
  account: string,
): Promise<number | undefined> {
  // ON CONFLICT DO NOTHING: a unique violation would abort a PostgreSQL transaction.
  const row = await db
    .insertInto('notifications')
    .values({
      account,
      dedupe_key: n.dedupeKey,
      gateway_order_id: n.gatewayOrderId,
      transaction_ref: n.transactionRef,
      gateway_transaction_id: n.gatewayTransactionId,
      transaction_status: n.transactionStatus,
      status_code: n.statusCode,
      source: n.source,
      result: n.result,
      payload: n.payload,
      reason: n.reason === undefined || n.reason === null ? null : n.reason.slice(0, 500),
      received_at: now().toISOString(),
    })
    .onConflict((oc) => oc.columns(['account', 'dedupe_key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row ? Number(row.id) : undefined;
}
