import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, NotificationsTable } from '../schema.js';
import { oneOf } from './literal.js';

export const NOTIFICATION_SOURCES = ['webhook', 'replay', 'status_check', 'reconcile'] as const;
export type NotificationSource = (typeof NOTIFICATION_SOURCES)[number];
/** `received` only while the ingesting transaction runs; `rechecked` = an unverified one the reconciler has since resolved. */
export const NOTIFICATION_RESULTS = ['received', 'applied', 'duplicate', 'stale', 'unknown_status', 'unverified', 'ignored', 'rechecked'] as const;
export type NotificationResult = (typeof NOTIFICATION_RESULTS)[number];

export interface NotificationRecord {
  id: number;
  dedupeKey: string;
  gatewayOrderId: string;
  /** Our transaction id, once resolved. */
  transactionRef: string | null;
  gatewayTransactionId: string | null;
  transactionStatus: string | null;
  statusCode: string | null;
  source: NotificationSource;
  result: NotificationResult;
  /** The report as received (JSON text). */
  payload: string;
  receivedAt: string;
}

export type NewNotification = Omit<NotificationRecord, 'id' | 'receivedAt'>;

export interface NotificationsRepo {
  /**
   * Inserts unless the dedupe key exists. `inserted` false → `existing` is the earlier record
   * (a duplicate, or an `unverified` one the caller may process again).
   */
  record(n: NewNotification): Promise<{ inserted: true; id: number } | { inserted: false; existing: NotificationRecord }>;
  setResult(id: number, result: NotificationResult, transactionRef?: string | null): Promise<void>;
  findById(id: number): Promise<NotificationRecord | undefined>;
  findByDedupeKey(dedupeKey: string): Promise<NotificationRecord | undefined>;
  /** Oldest first. */
  listByResult(result: NotificationResult, limit: number): Promise<NotificationRecord[]>;
  /**
   * Unverified notifications to re-ask the gateway about: never rechecked first (oldest first),
   * then the least recently rechecked, so ones whose check keeps failing go to the back.
   */
  listUnverifiedForRecheck(limit: number): Promise<NotificationRecord[]>;
  /** Notes a recheck (whatever its outcome): `listUnverifiedForRecheck` returns it after the others. */
  markChecked(id: number, at: string): Promise<void>;
  /** Oldest first. */
  listForOrder(gatewayOrderId: string, limit?: number): Promise<NotificationRecord[]>;
  /** True when a report of this gateway transaction was applied to the transaction before. */
  transactionSeen(transactionRef: string, gatewayTransactionId: string): Promise<boolean>;
  /**
   * Serializes ingestion per transaction: PostgreSQL row lock until the surrounding database
   * transaction ends. SQLite needs none (one connection, one writer).
   */
  lockTransaction(transactionId: string): Promise<void>;
}

type Row = Selectable<NotificationsTable>;

function toRecord(r: Row): NotificationRecord {
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
    receivedAt: r.received_at,
  };
}

export class KyselyNotificationsRepo implements NotificationsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly kind: 'sqlite' | 'postgres',
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
        received_at: this.now().toISOString(),
      })
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    return row ? Number(row.id) : undefined;
  }

  async setResult(id: number, result: NotificationResult, transactionRef?: string | null): Promise<void> {
    const set: { result: string; transaction_ref?: string | null } = { result };
    if (transactionRef !== undefined) set.transaction_ref = transactionRef;
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

  async lockTransaction(transactionId: string): Promise<void> {
    if (this.kind !== 'postgres') return;
    await sql`select id from transactions where id = ${transactionId} for update`.execute(this.db);
  }
}
