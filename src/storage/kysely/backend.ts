/**
 * What each database does its own way, chosen once when the store is opened: its SQL fragments
 * (`dialect.ts`) and the hot writes it runs in statements of its own. SQLite runs them as plain
 * statements inside the caller's transaction (one connection, no round trips);
 * PostgreSQL as one statement each (data-modifying CTEs), where separate statements would each be a
 * round trip (docs/performance.md). Implemented in `sqlite/` and `postgres/`: `report-writes.ts`,
 * `outbox-complete.ts`, `fragments.ts`.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { AttemptResult } from '../../model/delivery.js';
import type { ReportWritesRepo } from '../contract.js';
import type { SqlDialect } from './dialect.js';

/** One delivery attempt's outcome, as `OutboxRepo.complete` receives it. */
export interface AttemptCompletion {
  seq: number;
  leaseToken: number;
  instance: string;
  result: AttemptResult;
}

/**
 * A delivery attempt's outcome: the event moved on (only while `leaseToken` is still its token)
 * and the attempt recorded, as one step. False when the lease was lost meanwhile.
 */
export type CompleteAttempt = (db: Kysely<Database>, at: string, c: AttemptCompletion) => Promise<boolean>;

/** `CompleteAttempt` of several events (distinct seqs) at once, all or nothing; kept per event, in order. */
export type CompleteAttempts = (
  db: Kysely<Database>,
  at: string,
  instance: string,
  items: readonly Omit<AttemptCompletion, 'instance'>[],
) => Promise<boolean[]>;

export interface Backend {
  readonly dialect: SqlDialect;
  /** The report writes (`Store.reports`) on `db`: the store's connection, or a transaction. */
  reportWrites(db: Kysely<Database>, now: () => Date, account: string): ReportWritesRepo;
  /** Behind `OutboxRepo.complete`. */
  readonly completeAttempt: CompleteAttempt;
  /** Behind `OutboxRepo.completeMany`. */
  readonly completeAttempts: CompleteAttempts;
}
