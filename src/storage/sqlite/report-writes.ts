/**
 * SQLite's report writes: plain statements inside the caller's transaction. One connection in one
 * process, so several statements cost no round trip, and the transaction already holds the only
 * write lock.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../kysely/schema.js';
import type { ReportWrite, ReportWritesRepo, ReportWritten } from '../contract.js';
import { insertNotification } from '../kysely/rows/notifications.js';
import { updateTransaction } from '../kysely/rows/transactions.js';
import { insertOutboxEvent } from '../kysely/rows/outbox.js';

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
    if (w.event) await insertOutboxEvent(this.db, 'sqlite', w.event, w.now, this.account);
    return { inserted: true, notificationId, transaction };
  }
}
