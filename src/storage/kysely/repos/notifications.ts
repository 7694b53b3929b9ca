import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, NotificationsTable } from '../schema.js';
import { oneOf } from './literal.js';
import { NOTIFICATION_RESULTS, NOTIFICATION_SOURCES, type NewNotification, type NotificationOutcomeUpdate, type NotificationRecord, type NotificationResult } from '../../../model/notification.js';
import type { NotificationsRepo } from '../../contract.js';

type Row = Selectable<NotificationsTable>;

export function toRecord(r: Row): NotificationRecord {
  return {
    id: Number(r.id),
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

export class KyselyNotificationsRepo implements NotificationsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
  ) {}

  async record(n: NewNotification): Promise<{ inserted: true; id: number } | { inserted: false; existing: NotificationRecord }> {
    const id = await this.insertNew(n);
    if (id !== undefined) return { inserted: true, id };
    const existing = await this.db.selectFrom('notifications').selectAll().where('dedupe_key', '=', n.dedupeKey).executeTakeFirst();
    if (!existing) throw new Error('notification dedupe conflict without a row');
    return { inserted: false, existing: toRecord(existing) };
  }

  /** The new record's id, or undefined when the dedupe key exists (nothing written). */
  async insertNew(n: NewNotification): Promise<number | undefined> {
    // ON CONFLICT DO NOTHING: a unique violation would abort a PostgreSQL transaction.
    const row = await this.db
      .insertInto('notifications')
      .values({
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
        received_at: this.now().toISOString(),
      })
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    return row ? Number(row.id) : undefined;
  }

  async setResult(id: number, o: NotificationOutcomeUpdate): Promise<void> {
    const set: { result: string; transaction_ref?: string | null; gateway_transaction_id?: string | null; reason?: string | null } = { result: o.result };
    if (o.transactionRef !== undefined) set.transaction_ref = o.transactionRef;
    if (o.gatewayTransactionId !== undefined) set.gateway_transaction_id = o.gatewayTransactionId;
    if (o.reason !== undefined) set.reason = o.reason === null ? null : o.reason.slice(0, 500);
    await this.db.updateTable('notifications').set(set).where('id', '=', id).execute();
  }

  async findById(id: number): Promise<NotificationRecord | undefined> {
    const row = await this.db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async findByDedupeKey(dedupeKey: string): Promise<NotificationRecord | undefined> {
    const row = await this.db.selectFrom('notifications').selectAll().where('dedupe_key', '=', dedupeKey).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async listByResult(result: NotificationResult, limit: number): Promise<NotificationRecord[]> {
    const rows = await this.db.selectFrom('notifications').selectAll().where('result', '=', result).orderBy('id', 'asc').limit(limit).execute();
    return rows.map(toRecord);
  }

  async listUnverifiedForRecheck(limit: number): Promise<NotificationRecord[]> {
    const rows = await this.db
      .selectFrom('notifications')
      .selectAll()
      .where('result', '=', 'unverified')
      // Empty text sorts before any time on both databases.
      .orderBy(sql`coalesce(checked_at, '')`, 'asc')
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  async markChecked(id: number, at: string): Promise<void> {
    await this.db.updateTable('notifications').set({ checked_at: at }).where('id', '=', id).execute();
  }

  async listForOrder(gatewayOrderId: string, limit = 1000): Promise<NotificationRecord[]> {
    const rows = await this.db.selectFrom('notifications').selectAll().where('gateway_order_id', '=', gatewayOrderId).orderBy('id', 'asc').limit(limit).execute();
    return rows.map(toRecord);
  }

  async transactionSeen(transactionRef: string, gatewayTransactionId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('notifications')
      .select('id')
      .where('transaction_ref', '=', transactionRef)
      .where('gateway_transaction_id', '=', gatewayTransactionId)
      .where('result', 'in', ['applied', 'duplicate'])
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }
}
