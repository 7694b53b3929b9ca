/**
 * SQLite's SQL fragments. One connection in one process: a transaction holds the only write lock
 * from its start, so nothing is locked per row and no claim has rows to skip.
 */
import type { OutboxIndex, SqlDialect } from '../kysely/dialect.js';

export const sqliteDialect: SqlDialect = {
  kind: 'sqlite',
  rowLock: '',
  skipLocked: '',
  // Without statistics SQLite prefers the `(state, …)` indexes and then sorts or scans every
  // waiting event; the claim must walk the partial index in due order and stop early.
  indexedBy: (index: OutboxIndex) => `indexed by ${index}`,
  // One connection writes at a time: the transaction is the lock.
  feedLock: null,
};
