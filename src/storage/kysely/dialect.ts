/**
 * The SQL that differs between the two databases inside queries the repositories share: fragments
 * only (a lock clause, an index hint, a lock statement), never a whole operation. Each database's
 * own fragments are in `sqlite/fragments.ts` and `postgres/fragments.ts`, chosen once when the store
 * is opened — never a branch inside a repository method. Whole writes that differ are in
 * `backend.ts`.
 */
import type { RawBuilder } from 'kysely';

/** The indexes a claim must walk in due order (see repos/outbox.ts). */
export type OutboxIndex = 'outbox_lanes_due_idx' | 'outbox_lanes_account_due_idx';

export interface SqlDialect {
  readonly kind: 'sqlite' | 'postgres';
  /**
   * The clause after `select …` that locks the rows read, where rows are locked per row; empty on
   * SQLite (one writer holds the file). Text, for the statements written once (precompiled.ts).
   */
  readonly rowLock: string;
  /**
   * Claims lock the events they take (alias `e`) and skip those another instance holds
   * (PostgreSQL); SQLite has one process per file. Text, as `rowLock`.
   */
  readonly skipLocked: string;
  /** An index the planner must use (SQLite, which has no statistics to find it); empty where it finds it itself. Text, as `rowLock`. */
  indexedBy(index: OutboxIndex): string;
  /**
   * The statement that serialises the feed's sequencing across connections until the surrounding
   * transaction ends (PostgreSQL); null on SQLite, where one connection writes and the transaction
   * is the lock.
   */
  readonly feedLock: RawBuilder<unknown> | null;
}
