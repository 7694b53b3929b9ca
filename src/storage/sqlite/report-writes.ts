/**
 * SQLite's report writes: plain statements inside the caller's transaction. One connection in one
 * process, so several statements cost no round trip, and the transaction already holds the only
 * write lock. The domain takes the locked path here (its lock is the group commit's); the
 * unlocked read and the write guarded by it exist for the contract, the row's version being the
 * whole row as read.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../kysely/schema.js';
import type { TransactionRecord } from '../../model/payment.js';
import type {
  CurrentWithOthers,
  ReportWrite,
  ReportWritesRepo,
  ReportWritten,
  ReportWrittenIfUnchanged,
  VersionedTransaction,
} from '../contract.js';
import { insertNotification } from '../kysely/rows/notifications.js';
import { Precompiled } from '../kysely/precompiled.js';
import { toTransaction, updateTransaction, type TransactionRow } from '../kysely/rows/transactions.js';
import { writeOutboxEvent } from '../kysely/rows/outbox.js';

const BY_GATEWAY_ORDER_ID = new Precompiled<TransactionRow>(
  'select * from transactions where gateway_order_id = ? and account = ?',
);
const BY_ID = new Precompiled<TransactionRow>('select * from transactions where id = ?');

export class SqliteReportWrites implements ReportWritesRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly account: string,
  ) {}

  async recordNew(w: ReportWrite): Promise<ReportWritten> {
    const notificationId = await insertNotification(this.db, 'sqlite', this.now, w.notification, this.account);
    if (notificationId === undefined) return { inserted: false };
    const transaction = await updateTransaction(this.db, 'sqlite', this.now, w.transactionId, w.patch);
    if (w.event) await writeOutboxEvent(this.db, 'sqlite', w.event, w.now, this.account);
    return { inserted: true, notificationId, transaction };
  }

  async findCurrent(gatewayOrderId: string): Promise<VersionedTransaction | undefined> {
    const row = await BY_GATEWAY_ORDER_ID.first(this.db, 'sqlite', [gatewayOrderId, this.account]);
    return row ? { transaction: toTransaction(row), rowVersion: JSON.stringify(row) } : undefined;
  }

  /** One statement per id: on SQLite a statement costs no round trip. */
  async findCurrentWith(gatewayOrderId: string, others: readonly string[]): Promise<CurrentWithOthers> {
    const current = await this.findCurrent(gatewayOrderId);
    const found = new Map<string, TransactionRecord>();
    for (const id of others) {
      const row = await BY_GATEWAY_ORDER_ID.first(this.db, 'sqlite', [id, this.account]);
      if (row) found.set(id, toTransaction(row));
    }
    return { ...(current ? { current } : {}), others: found };
  }

  /** A `write`: it runs in a transaction of the group commit, which holds the write lock throughout. */
  async recordNewIfUnchanged(w: ReportWrite & { rowVersion: string }): Promise<ReportWrittenIfUnchanged> {
    const row = await BY_ID.first(this.db, 'sqlite', [w.transactionId]);
    if (!row || JSON.stringify(row) !== w.rowVersion) return { outcome: 'moved' };
    const out = await this.recordNew(w);
    return out.inserted ? { outcome: 'written', ...out } : { outcome: 'duplicate' };
  }
}
