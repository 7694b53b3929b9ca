/**
 * PostgreSQL's SQL fragments. Several instances share the database: rows are locked per row, claims
 * skip rows another instance holds, and the feed is sequenced under an advisory lock.
 */
import { sql } from 'kysely';
import type { OutboxIndex, SqlDialect } from '../kysely/dialect.js';

/** The advisory lock under which feed positions are given (any constant shared by every instance). */
const FEED_LOCK = 0x70_61_79_6c; // 'payl'

export const postgresDialect: SqlDialect = {
  kind: 'postgres',
  rowLock: 'for update',
  skipLocked: 'for update of e skip locked',
  // The planner picks the partial indexes from its statistics.
  indexedBy: (_index: OutboxIndex) => '',
  feedLock: sql`select pg_advisory_xact_lock(${FEED_LOCK})`,
};
