/**
 * What differs between the two databases, behind one interface: each database's SQL for the hot
 * writes lives in its own file (`sqlite/dialect.ts`, `postgres/dialect.ts`), chosen once when the
 * store is opened — never a branch inside a repository method.
 */
import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import type { AttemptResult } from '../../model/delivery.js';
import type { ReportWrite, ReportWritten } from '../contract.js';

/** The indexes a claim must walk in due order (see outbox.ts). */
export type OutboxIndex = 'outbox_claimable_idx' | 'outbox_leased_idx';

export interface SqlDialect {
  readonly kind: 'sqlite' | 'postgres';
  /** `select … for update` where rows are locked per row; SQLite needs none (one writer holds the file). */
  readonly rowLock: RawBuilder<unknown>;
  /** Claims skip rows another instance holds (PostgreSQL); SQLite has one process per file. */
  readonly skipLocked: RawBuilder<unknown>;
  /** An index the planner must use (SQLite, which has no statistics to find it); empty where it finds it itself. */
  indexedBy(index: OutboxIndex): RawBuilder<unknown>;
  /**
   * Records a gateway report's notification, the transaction's change and its ERP event as one step:
   * all of it, or nothing when the notification's dedupe key exists.
   */
  recordReport(db: Kysely<Database>, now: () => Date, w: ReportWrite): Promise<ReportWritten>;
  /**
   * A delivery attempt's outcome: the event moved on (only while `leaseToken` is still its token)
   * and the attempt recorded, as one step. False when the lease was lost meanwhile.
   */
  completeAttempt(db: Kysely<Database>, at: string, c: { seq: number; leaseToken: number; instance: string; result: AttemptResult }): Promise<boolean>;
  /** Serialises the feed's sequencing across connections until the surrounding transaction ends (PostgreSQL); SQLite has one writer. */
  lockFeed(db: Kysely<Database>): Promise<void>;
}
