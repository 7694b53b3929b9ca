/**
 * What opening a PostgreSQL store needs of the `pg` driver, in a module of its own: the store loads
 * it only for a PostgreSQL database, so a SQLite start-up does not load `pg` (about 0.12 s of CPU
 * and 3 MB of heap, measured on a 2-core machine).
 */
import pg from 'pg';
import { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../kysely/schema.js';
import { postgresNames } from '../kysely/precompiled.js';
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

/**
 * The pool's client: a statement text made by `Precompiled` goes out as a named prepared statement
 * (its name from `postgresNames`), every other text unnamed as Kysely sends it. A name is prepared
 * on a connection by its first use there (pg then sends only bind and execute) and lives as long
 * as the connection, or until a change of a table's columns makes PostgreSQL refuse it (below).
 */
class NamingClient extends pg.Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's overloads, passed through as given
  override query(...args: any[]): any {
    const name = typeof args[0] === 'string' ? postgresNames.get(args[0]) : undefined;
    const query = super.query as (...a: unknown[]) => unknown;
    if (name === undefined) return Reflect.apply(query, this, args);
    const result = Reflect.apply(query, this, [
      { name, text: args[0] as string, values: args[1] as unknown[] },
      ...args.slice(2),
    ]);
    if (!(result instanceof Promise)) return result;
    return result.catch((err: unknown) => {
      // A table's columns changed after this connection prepared the statement (another instance's
      // migration): PostgreSQL then refuses that prepared statement on every run ("cached plan must
      // not change result type"), so the connection is closed (this statement fails) and the pool
      // opens another, which prepares the text again.
      if ((err as { code?: unknown } | undefined)?.code === '0A000') void this.end().catch(() => undefined);
      throw err;
    });
  }
}

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
    Client: NamingClient,
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
