/**
 * What opening a PostgreSQL store needs of the `pg` driver, in a module of its own: the store loads
 * it only for a PostgreSQL database, so a SQLite start-up does not load `pg` (about 0.12 s of CPU
 * and 3 MB of heap, measured on a 2-core machine).
 */
import pg from 'pg';
import { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../kysely/schema.js';
import { CurrentSchemaPostgresDialect } from './introspection.js';
import { checkTls, pgConnection } from './tls.js';

export { postgresSignals } from './signals.js';
export { checkTls, pgConnection };

// int8 (bigserial ids, bigint amounts) arrive as strings by default; our values stay below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

/**
 * The pool's size when `DATABASE_POOL_MAX` is unset. 20 did no better on a 2-core machine with the
 * server on it (scripts/hot-path-cpu.ts, 16 webhooks at a time, 8 pairs: CPU per new notification
 * +11.5 % by the median pair, p99 answer 466 → 590 ms by the medians): more connections only queue
 * on the same cores. A server with cores of its own may differ; measure before raising it.
 */
export const DEFAULT_POOL_MAX = 10;

export interface PoolOptions {
  logger?: Logger;
  schema?: string;
  poolMax?: number;
}

/** Creates `schema` when missing (tests use one schema per suite). */
export async function createSchema(url: string, schema: string): Promise<void> {
  const { connectionString, ssl } = pgConnection(url);
  const admin = new pg.Client({ connectionString, ssl, connectionTimeoutMillis: 2_000 });
  await admin.connect();
  try {
    await admin.query(`create schema if not exists ${schema}`);
  } finally {
    await admin.end();
  }
}

export function postgresKysely(url: string, opts: PoolOptions): Kysely<Database> {
  const { connectionString, ssl } = pgConnection(url);
  const pool = new pg.Pool({
    connectionString,
    ssl,
    max: opts.poolMax ?? DEFAULT_POOL_MAX,
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 15_000,
    options: opts.schema ? `-c search_path=${opts.schema}` : undefined,
  });
  // Without a listener, an idle client's backend dying would crash the process.
  pool.on('error', (err) => opts.logger?.warn({ err: { message: err.message } }, 'postgres pool: idle client error'));
  // The same for a client that is checked out but between queries (inside a transaction, say)
  // when its connection drops: pg emits 'error' on the client itself, which would crash the
  // process. The client is unusable afterwards; its next query fails (→ 503) and the pool drops it.
  pool.on('connect', (client) =>
    client.on('error', (err) => opts.logger?.warn({ err: { message: err.message } }, 'postgres connection lost')),
  );
  return new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
}
