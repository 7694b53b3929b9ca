import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, sql, type Transaction } from 'kysely';
import { CurrentSchemaPostgresDialect } from './pg-introspection.js';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '../config.js';
import type { Database } from './schema.js';
import type { ConfigRepo, IdempotencyRepo, ReportWritesRepo, Store, TransactionsRepo } from './store.js';
import { migrationProvider } from './migrations.js';
import { KyselyTransactionsRepo } from './repos/transactions.js';
import { KyselyConfigRepo } from './repos/config.js';
import { KyselyIdempotencyRepo } from './repos/idempotency.js';
import { KyselyNotificationsRepo, type NotificationsRepo } from './repos/notifications.js';
import { KyselyOutboxRepo, type OutboxRepo } from './repos/outbox.js';
import { KyselyReportWritesRepo } from './repos/report-writes.js';
import { RefundsRepo } from './repos/refunds.js';
import { ConsoleQueries } from './repos/console-queries.js';
import { RetentionRepo } from './repos/retention.js';
import { AuthFailuresRepo } from './repos/auth-failures.js';
import { isDatabaseUnavailable } from '../errors.js';
import { CachedSqliteDialect } from './sqlite-driver.js';
import { GroupCommit } from './group-commit.js';

/** One process per SQLite file (the service takes this lock before it opens the store). */
export { lockSqliteFile, SqliteInUseError, type SqliteLock } from './sqlite-lock.js';

// int8 (bigserial ids, bigint amounts) arrive as strings by default; our values stay below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export interface StoreOptions {
  logger?: Logger;
  now?: () => Date;
  /** PostgreSQL only: run in this schema (created if missing). Tests use one schema per suite. */
  schema?: string;
  /** PostgreSQL pool size; default 10. */
  poolMax?: number;
}

export class MigrationError extends Error {
  constructor(name: string | undefined, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    // Before any migration ran, the usual cause is a database that cannot be reached at all.
    super(name === undefined && isDatabaseUnavailable(cause) ? `database unreachable, nothing migrated: ${why}` : `database migration ${name ?? '(unknown)'} failed: ${why}`);
    this.name = 'MigrationError';
  }
}

/**
 * The store as opened: the `Store` interface plus its query builder, for the composition root's
 * callers that seed or inspect the database directly (the bench, tests). Services see `Store` only.
 */
export interface KyselyBackedStore extends Store {
  readonly db: Kysely<Database>;
  transaction<T>(fn: (tx: KyselyBackedStore) => Promise<T>): Promise<T>;
}

class KyselyStore implements KyselyBackedStore {
  readonly transactions: TransactionsRepo;
  readonly config: ConfigRepo;
  readonly idempotency: IdempotencyRepo;
  readonly notifications: NotificationsRepo;
  readonly outbox: OutboxRepo;
  readonly reports: ReportWritesRepo;
  readonly refunds: RefundsRepo;
  readonly console: ConsoleQueries;
  readonly retention: RetentionRepo;
  readonly authFailures: AuthFailuresRepo;

  constructor(
    readonly kind: 'sqlite' | 'postgres',
    readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly onClose: () => Promise<void>,
    private readonly inTransaction = false,
    /** SQLite: concurrent transactions share one commit. */
    private readonly group?: GroupCommit,
  ) {
    const transactions = new KyselyTransactionsRepo(db, now, kind);
    const config = new KyselyConfigRepo(db, now);
    const idempotency = new KyselyIdempotencyRepo(db);
    const notifications = new KyselyNotificationsRepo(db, now, kind);
    const outbox = new KyselyOutboxRepo(db, now, kind);
    // SQLite outside a transaction: every write joins a group commit too (alone, each would cost
    // an fsync of its own on the event loop); reads go straight to the connection.
    const inGroup = <R extends object>(repo: R, inTx: (tx: Store) => R): R => (group ? groupedWrites(repo, (fn) => this.transaction((tx) => fn(inTx(tx)))) : repo);
    this.transactions = inGroup<TransactionsRepo>(transactions, (tx) => tx.transactions);
    this.config = inGroup<ConfigRepo>(config, (tx) => tx.config);
    this.idempotency = inGroup<IdempotencyRepo>(idempotency, (tx) => tx.idempotency);
    this.notifications = inGroup<NotificationsRepo>(notifications, (tx) => tx.notifications);
    this.outbox = inGroup<OutboxRepo>(outbox, (tx) => tx.outbox);
    this.reports = inGroup<ReportWritesRepo>(new KyselyReportWritesRepo(db, now, kind), (tx) => tx.reports);
    this.refunds = inGroup<RefundsRepo>(new RefundsRepo(db, now), (tx) => tx.refunds);
    this.console = new ConsoleQueries(db);
    this.retention = inGroup<RetentionRepo>(new RetentionRepo(db), (tx) => tx.retention);
    this.authFailures = new AuthFailuresRepo(db);
  }

  async transaction<T>(fn: (tx: KyselyBackedStore) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    const inner = (trx: Transaction<Database>) => fn(new KyselyStore(this.kind, trx, this.now, async () => undefined, true));
    return this.group ? this.group.run(inner) : this.db.transaction().execute(inner);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.onClose();
  }
}

/** Repository methods that only read: called directly, never through a group commit. */
const READS = /^(find|get|list|latest|count|attempts|transactionSeen|nextDueAt)/;

/** `repo`, with each write method run through `run` (in a transaction of the group commit, on the transaction's own repo). */
function groupedWrites<R extends object>(repo: R, run: <T>(fn: (r: R) => Promise<T>) => Promise<T>): R {
  return new Proxy(repo, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function' || READS.test(prop)) return value;
      return (...args: unknown[]) =>
        run((r) => {
          const method: unknown = Reflect.get(r, prop);
          if (typeof method !== 'function') throw new Error(`no method ${prop}`);
          return Promise.resolve(method.apply(r, args));
        });
    },
  });
}

function sqliteKysely(file: string): Kysely<Database> {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SqliteDatabase(file);
  // WAL lets readers run beside the writer; busy_timeout waits for a lock instead of failing at once.
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  // FULL: a commit is on disk before we answer. The webhook answers 200 only after its commit, and
  // the gateway never resends what it saw acknowledged; NORMAL could lose that commit on power loss.
  // Measured cost: about a quarter of the webhook throughput (npm run bench).
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  return new Kysely<Database>({ dialect: new CachedSqliteDialect(database) });
}

function postgresKysely(url: string, opts: StoreOptions): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolMax ?? 10,
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
  pool.on('connect', (client) => client.on('error', (err) => opts.logger?.warn({ err: { message: err.message } }, 'postgres connection lost')));
  return new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
}

/** Opens the database and runs pending migrations. A failed migration rejects with `MigrationError`. */
export async function openStore(cfg: DatabaseConfig, opts: StoreOptions = {}): Promise<KyselyBackedStore> {
  const now = opts.now ?? (() => new Date());
  if (cfg.kind === 'postgres' && opts.schema) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(opts.schema)) throw new Error('invalid schema name');
    const admin = new pg.Client({ connectionString: cfg.url, connectionTimeoutMillis: 2_000 });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists ${opts.schema}`);
    } finally {
      await admin.end();
    }
  }
  const db = cfg.kind === 'sqlite' ? sqliteKysely(cfg.path) : postgresKysely(cfg.url, opts);
  try {
    await migrate(db, cfg.kind, cfg.kind === 'postgres' ? opts.schema : undefined);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await db.destroy();
  };
  return new KyselyStore(cfg.kind, db, now, close, false, cfg.kind === 'sqlite' ? new GroupCommit(db) : undefined);
}

async function migrate(db: Kysely<Database>, kind: 'sqlite' | 'postgres', schema?: string): Promise<void> {
  // Without an explicit schema, Kysely counts a migration table in ANY schema as present, so a
  // fresh schema beside another one (parallel test suites) would fail to migrate.
  // Migrations are added in parallel under reserved number ranges, so a database may already have a
  // higher-numbered one when a lower-numbered one arrives: each runs once, whatever the order.
  const migrator = new Migrator({ db, provider: migrationProvider(kind), allowUnorderedMigrations: true, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new MigrationError(failed?.migrationName, error);
  }
}
