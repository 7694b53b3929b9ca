import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { insertNotification, toNotification } from '../rows/notifications.js';
import { toTransaction, type TransactionRow } from '../rows/transactions.js';
import { Precompiled, type DatabaseKind } from '../precompiled.js';
import {
  NOTIFICATION_RESULTS,
  type NewNotification,
  type NotificationOutcomeUpdate,
  type NotificationRecord,
  type NotificationResult,
} from '../../../model/notification.js';
import { oneOf } from '../rows/literal.js';
import type { NotificationsRepo, RecordedWithTransaction } from '../../contract.js';

/** The duplicate check of every notification: the earlier record and its transaction in one lookup. */
const WITH_TRANSACTION = new Precompiled<
  TransactionRow & { n_id: number | string; n_result: string; n_transaction_ref: string | null; t_found: unknown }
>(`
  select n.id as n_id, n.result as n_result, n.transaction_ref as n_transaction_ref, t.id as t_found, t.*
  from notifications n left join transactions t on t.id = n.transaction_ref
  where n.dedupe_key = ? and n.account = ?`);

export class KyselyNotificationsRepo implements NotificationsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly kind: DatabaseKind,
    private readonly account: string,
  ) {}

  async record(
    n: NewNotification,
  ): Promise<{ inserted: true; id: number } | { inserted: false; existing: NotificationRecord }> {
    const id = await insertNotification(this.db, this.kind, this.now, n, this.account);
    if (id !== undefined) return { inserted: true, id };
    const existing = await this.db
      .selectFrom('notifications')
      .selectAll()
      .where('dedupe_key', '=', n.dedupeKey)
      .where('account', '=', this.account)
      .executeTakeFirst();
    if (!existing) throw new Error('notification dedupe conflict without a row');
    return { inserted: false, existing: toNotification(existing) };
  }

  async setResult(id: number, o: NotificationOutcomeUpdate): Promise<void> {
    const set: {
      result: string;
      transaction_ref?: string | null;
      gateway_transaction_id?: string | null;
      reason?: string | null;
    } = { result: o.result };
    if (o.transactionRef !== undefined) set.transaction_ref = o.transactionRef;
    if (o.gatewayTransactionId !== undefined) set.gateway_transaction_id = o.gatewayTransactionId;
    if (o.reason !== undefined) set.reason = o.reason === null ? null : o.reason.slice(0, 500);
    await this.db.updateTable('notifications').set(set).where('id', '=', id).execute();
  }

  async findById(id: number): Promise<NotificationRecord | undefined> {
    const row = await this.db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toNotification(row) : undefined;
  }

  async findByDedupeKey(dedupeKey: string): Promise<NotificationRecord | undefined> {
    const row = await this.db
      .selectFrom('notifications')
      .selectAll()
      .where('dedupe_key', '=', dedupeKey)
      .where('account', '=', this.account)
      .executeTakeFirst();
    return row ? toNotification(row) : undefined;
  }

  async findWithTransaction(dedupeKey: string): Promise<RecordedWithTransaction | undefined> {
    const row = await WITH_TRANSACTION.first(this.db, this.kind, [dedupeKey, this.account]);
    if (!row) return undefined;
    const result = oneOf(NOTIFICATION_RESULTS, row.n_result, 'notifications.result');
    return {
      notificationId: Number(row.n_id),
      result,
      transactionRef: row.n_transaction_ref,
      transaction: row.t_found === null ? undefined : toTransaction(row),
    };
  }

  async listByResult(result: NotificationResult, limit: number): Promise<NotificationRecord[]> {
    const rows = await this.db
      .selectFrom('notifications')
      .selectAll()
      .where('result', '=', result)
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toNotification);
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
    return rows.map(toNotification);
  }

  async markChecked(id: number, at: string): Promise<void> {
    await this.db.updateTable('notifications').set({ checked_at: at }).where('id', '=', id).execute();
  }

  async listForOrder(gatewayOrderId: string, limit = 1000): Promise<NotificationRecord[]> {
    const rows = await this.db
      .selectFrom('notifications')
      .selectAll()
      .where('gateway_order_id', '=', gatewayOrderId)
      .where('account', '=', this.account)
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toNotification);
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
