import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, sql, type Transaction } from 'kysely';
import { CurrentSchemaPostgresDialect } from '../postgres/introspection.js';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '../../config/env.js';
import type { Database } from './schema.js';
import { STORE_ACCESS, type Access, type AuthFailuresRepo, type ConfigRepo, type FeedRepo, type MigrationStatus, type ReconciliationRepo, type ConsoleQueries, type IdempotencyRepo, type NotificationsRepo, type OutboxRepo, type RefundsRepo, type ReportWritesRepo, type RetentionRepo, type Store, type TransactionsRepo } from '../contract.js';
import { migrationProvider, migrations } from './migrations.js';
import { KyselyTransactionsRepo } from './repos/transactions.js';
import { KyselyConfigRepo } from './repos/runtime-config.js';
import { KyselyIdempotencyRepo } from './repos/idempotency.js';
import { KyselyNotificationsRepo } from './repos/notifications.js';
import { KyselyOutboxRepo } from './repos/outbox.js';
import { KyselyRefundsRepo } from './repos/refunds.js';
import { KyselyConsoleQueries } from './repos/console-queries.js';
import { KyselyRetentionRepo } from './repos/retention.js';
import { KyselyAuthFailuresRepo } from './repos/auth-failures.js';
import { KyselyFeedRepo } from './repos/feed.js';
import { KyselyReconciliationRepo } from './repos/reconciliation.js';
import type { SqlDialect } from './dialect.js';
import { sqliteDialect } from '../sqlite/dialect.js';
import { postgresDialect } from '../postgres/dialect.js';
import { isDatabaseUnavailable } from '../../platform/errors.js';
import { CachedSqliteDialect } from '../sqlite/driver.js';
import { GroupCommit } from './group-commit.js';
import { ensurePrivateFile, privateDir, privateFile } from '../../platform/private-files.js';

/** One process per SQLite file (the service takes this lock before it opens the store). */
export { lockSqliteFile, SqliteInUseError, type SqliteLock } from '../sqlite/lock.js';

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
  readonly feed: FeedRepo;
  readonly reconciliation: ReconciliationRepo;

  readonly kind: 'sqlite' | 'postgres';

  constructor(
    private readonly dialect: SqlDialect,
    readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly onClose: () => Promise<void>,
    private readonly inTransaction = false,
    /** SQLite: concurrent transactions share one commit. */
    private readonly group?: GroupCommit,
  ) {
    this.kind = dialect.kind;
    // SQLite outside a transaction: every write joins a group commit too (alone, each would cost
    // an fsync of its own on the event loop); reads go straight to the connection.
    const writes = <R extends object>(repo: R, access: Access<R>, inTx: (tx: Store) => R): R => (group ? groupedWrites(repo, access, (fn) => this.transaction((tx) => fn(inTx(tx)))) : repo);
    this.transactions = writes<TransactionsRepo>(new KyselyTransactionsRepo(db, now, dialect), STORE_ACCESS.transactions, (tx) => tx.transactions);
    this.config = writes<ConfigRepo>(new KyselyConfigRepo(db, now), STORE_ACCESS.config, (tx) => tx.config);
    this.idempotency = writes<IdempotencyRepo>(new KyselyIdempotencyRepo(db), STORE_ACCESS.idempotency, (tx) => tx.idempotency);
    this.notifications = writes<NotificationsRepo>(new KyselyNotificationsRepo(db, now), STORE_ACCESS.notifications, (tx) => tx.notifications);
    this.outbox = writes<OutboxRepo>(new KyselyOutboxRepo(db, now, dialect), STORE_ACCESS.outbox, (tx) => tx.outbox);
    this.reports = writes<ReportWritesRepo>({ recordNew: (w) => dialect.recordReport(db, now, w) }, STORE_ACCESS.reports, (tx) => tx.reports);
    this.refunds = writes<RefundsRepo>(new KyselyRefundsRepo(db, now), STORE_ACCESS.refunds, (tx) => tx.refunds);
    this.console = new KyselyConsoleQueries(db);
    this.retention = writes<RetentionRepo>(new KyselyRetentionRepo(db), STORE_ACCESS.retention, (tx) => tx.retention);
    this.authFailures = new KyselyAuthFailuresRepo(db);
    this.feed = writes<FeedRepo>(new KyselyFeedRepo(db, dialect), STORE_ACCESS.feed, (tx) => tx.feed);
    this.reconciliation = writes<ReconciliationRepo>(new KyselyReconciliationRepo(db, now, dialect.kind), STORE_ACCESS.reconciliation, (tx) => tx.reconciliation);
  }

  async transaction<T>(fn: (tx: KyselyBackedStore) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    const inner = (trx: Transaction<Database>) => fn(new KyselyStore(this.dialect, trx, this.now, async () => undefined, true));
    return this.group ? this.group.run(inner) : this.db.transaction().execute(inner);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async migrationStatus(): Promise<MigrationStatus> {
    // Kysely's table, in the schema the connection's search_path names (see `migrate`).
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(this.db);
    const applied = new Set(rows.map((r) => r.name));
    const known = Object.keys(migrations(this.kind));
    return {
      applied: known.filter((n) => applied.has(n)).length,
      pending: known.filter((n) => !applied.has(n)),
      unknown: [...applied].filter((n) => !known.includes(n)).sort(),
    };
  }

  async close(): Promise<void> {
    await this.onClose();
  }
}

/** `repo`, with each method `access` declares a `write` run through `run` (in a transaction of the group commit, on the transaction's own repo). */
function groupedWrites<R extends object>(repo: R, access: Access<R>, run: <T>(fn: (r: R) => Promise<T>) => Promise<T>): R {
  const isWrite = (prop: string | symbol): prop is keyof R & string => typeof prop === 'string' && (access as Record<string, string>)[prop] === 'write';
  return new Proxy(repo, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || !isWrite(prop)) return value;
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
  const onDisk = file !== ':memory:';
  if (onDisk) {
    privateDir(path.dirname(file));
    ensurePrivateFile(file);
  }
  const database = new SqliteDatabase(file);
  // WAL lets readers run beside the writer; busy_timeout waits for a lock instead of failing at once.
  database.pragma('journal_mode = WAL');
  // New -wal and -shm files take the database file's mode; ones an earlier run left are narrowed.
  if (onDisk) for (const f of [`${file}-wal`, `${file}-shm`]) privateFile(f);
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
  return new KyselyStore(cfg.kind === 'sqlite' ? sqliteDialect : postgresDialect, db, now, close, false, cfg.kind === 'sqlite' ? new GroupCommit(db) : undefined);
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
