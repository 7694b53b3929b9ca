import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, sql, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '../../config/env.js';
import type { Database } from './schema.js';
import { STORE_ACCESS, type CommitSignals, type MigrationStatus, type Repositories, type Store } from '../contract.js';
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
import { KyselyOperatorsRepo } from './repos/operators.js';
import { KyselyFeedRepo } from './repos/feed.js';
import { KyselyReconciliationRepo } from './repos/reconciliation.js';
import { KyselyAccountsRepo, KyselyApiKeysRepo } from './repos/accounts.js';
import { KyselyAlertsRepo } from './repos/alerts.js';
import { DEFAULT_ACCOUNT } from '../../model/account.js';
import type { Backend } from './backend.js';
import { sqliteDialect } from '../sqlite/fragments.js';
import { SqliteReportWrites } from '../sqlite/report-writes.js';
import { sqliteCompleteAttempt, sqliteCompleteAttempts } from '../sqlite/outbox-complete.js';
import { postgresDialect } from '../postgres/fragments.js';
import { PostgresReportWrites } from '../postgres/report-writes.js';
import { postgresCompleteAttempt, postgresCompleteAttempts } from '../postgres/outbox-complete.js';
import { decodeCursor } from './cursor.js';
import { isUniqueViolation } from './errors.js';
import { isDatabaseUnavailable } from '../../platform/errors.js';
import { withSpan } from '../../platform/tracing.js';
import { CachedSqliteDialect } from '../sqlite/driver.js';
import { GroupCommit, groupedWrites } from './group-commit.js';
import { directRunners } from './precompiled.js';
import { ensurePrivateFile, privateDir, privateFile } from '../../platform/private-files.js';

/** One process per SQLite file (the service takes this lock before it opens the store). */
export { lockSqliteFile, SqliteInUseError, type SqliteLock } from '../sqlite/lock.js';

export interface StoreOptions {
  logger?: Logger;
  now?: () => Date;
  /** PostgreSQL only: run in this schema (created if missing). Tests use one schema per suite. */
  schema?: string;
  /** PostgreSQL pool size; default the configuration's `poolMax` (`DATABASE_POOL_MAX`), else 10. */
  poolMax?: number;
  /** Told which migrations this open applied (none: the database was up to date) and the newest one it now has. */
  onMigrated?: (outcome: MigrateOutcome) => void;
}

export class MigrationError extends Error {
  constructor(name: string | undefined, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    // Before any migration ran, the usual cause is a database that cannot be reached at all.
    super(
      name === undefined && isDatabaseUnavailable(cause)
        ? `database unreachable, nothing migrated: ${why}`
        : `database migration ${name ?? '(unknown)'} failed: ${why}`,
    );
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

/** Each database's own SQL, picked once when the store is opened. */
const BACKENDS: Record<'sqlite' | 'postgres', Backend> = {
  sqlite: {
    dialect: sqliteDialect,
    reportWrites: (db, now, account) => new SqliteReportWrites(db, now, account),
    completeAttempt: sqliteCompleteAttempt,
    completeAttempts: sqliteCompleteAttempts,
  },
  postgres: {
    dialect: postgresDialect,
    reportWrites: (db, now, account) => new PostgresReportWrites(db, now, account),
    completeAttempt: postgresCompleteAttempt,
    completeAttempts: postgresCompleteAttempts,
  },
};

/** What a repository is built from: the connection or transaction it runs on, the clock, and its database's own SQL. */
interface RepoContext {
  readonly db: Kysely<Database>;
  readonly now: () => Date;
  readonly backend: Backend;
  /** The account the view reads and writes (see the contract's `TransactionsRepo`). */
  readonly account: string;
}

/**
 * Every repository of the store, in one table: a new repository is its interface in the contract
 * (with its `Repositories` field and `STORE_ACCESS` entry), its file in repos/, and one line here.
 */
const REPOSITORIES: { readonly [K in keyof Repositories]: (c: RepoContext) => Repositories[K] } = {
  transactions: (c) => new KyselyTransactionsRepo(c.db, c.now, c.backend.dialect, c.account),
  config: (c) => new KyselyConfigRepo(c.db, c.now, c.account),
  idempotency: (c) => new KyselyIdempotencyRepo(c.db, c.account),
  notifications: (c) => new KyselyNotificationsRepo(c.db, c.now, c.backend.dialect.kind, c.account),
  outbox: (c) => new KyselyOutboxRepo(c.db, c.now, c.backend, c.account),
  reports: (c) => c.backend.reportWrites(c.db, c.now, c.account),
  refunds: (c) => new KyselyRefundsRepo(c.db, c.now, c.account),
  console: (c) => new KyselyConsoleQueries(c.db, c.account),
  retention: (c) => new KyselyRetentionRepo(c.db),
  authFailures: (c) => new KyselyAuthFailuresRepo(c.db),
  operators: (c) => new KyselyOperatorsRepo(c.db),
  feed: (c) => new KyselyFeedRepo(c.db, c.backend.dialect, c.account),
  reconciliation: (c) => new KyselyReconciliationRepo(c.db, c.now, c.backend.dialect.kind, c.account),
  accounts: (c) => new KyselyAccountsRepo(c.db),
  apiKeys: (c) => new KyselyApiKeysRepo(c.db),
  alerts: (c) => new KyselyAlertsRepo(c.db, c.account),
};

/** The table's names, typed (`Object.keys` widens them to string). */
const REPOSITORY_NAMES = Object.keys(REPOSITORIES) as (keyof Repositories)[];

/**
 * One of each repository on `target`, each built by `make` when first used: a store is made for
 * every transaction, which uses two or three of the sixteen.
 */
function addRepositories(
  target: object,
  make: <K extends keyof Repositories>(name: K) => Repositories[K],
): asserts target is Repositories {
  for (const name of REPOSITORY_NAMES) {
    Object.defineProperty(target, name, {
      configurable: true,
      enumerable: true,
      get() {
        const repo = make(name);
        Object.defineProperty(target, name, { value: repo, enumerable: true });
        return repo;
      },
    });
  }
}

/** What a store runs on: its repositories' context, how it closes, and (SQLite) its group commit. */
interface Connection extends RepoContext {
  readonly close: () => Promise<void>;
  readonly signals: CommitSignals;
  /** SQLite: concurrent transactions share one commit. */
  readonly group?: GroupCommit;
  /** Outside transactions: each account's view, built once (a view is a set of repositories, kept for the store's life). */
  readonly views?: Map<string, KyselyBackedStore>;
}

/**
 * The store over `c`, or (`inTransaction`) over one of its transactions. Outside a transaction on
 * SQLite, each repository's `write` methods run in a transaction of the group commit of their own
 * (alone, each would cost an fsync of its own on the event loop): the rule `Store` and
 * `STORE_ACCESS` state. Reads go straight to the connection.
 */
function kyselyStore(c: Connection, inTransaction: boolean): KyselyBackedStore {
  const { group } = c;
  const build = <K extends keyof Repositories>(name: K): Repositories[K] => {
    const repo = REPOSITORIES[name](c);
    return group ? groupedWrites(repo, STORE_ACCESS[name], (fn) => store.transaction((tx) => fn(tx[name]))) : repo;
  };
  const base: Omit<KyselyBackedStore, keyof Repositories> = {
    kind: c.backend.dialect.kind,
    account: c.account,
    db: c.db,
    forAccount(account) {
      if (account === c.account) return store;
      const kept = c.views?.get(account);
      if (kept) return kept;
      const view = kyselyStore({ ...c, account }, inTransaction);
      c.views?.set(account, view);
      return view;
    },
    async transaction<T>(fn: (tx: KyselyBackedStore) => Promise<T>): Promise<T> {
      if (inTransaction) return fn(store);
      const inner = (trx: Transaction<Database>) =>
        fn(kyselyStore({ ...c, db: trx, close: async () => undefined, group: undefined, views: undefined }, true));
      if (!group) return c.db.transaction().execute(inner);
      // PostgreSQL's statements have spans of their own (pg's instrumentation); SQLite's are
      // calls into the driver, so its transactions get one span each, inside traced work only.
      return withSpan('sqlite transaction', { 'db.system.name': 'sqlite' }, () => group.run(inner), {
        requireParent: true,
      });
    },
    signals: c.signals,
    isListCursor: (cursor) => decodeCursor(cursor) !== undefined,
    isUniqueViolation,
    async ping(): Promise<void> {
      await sql`select 1`.execute(c.db);
    },
    async migrationStatus(): Promise<MigrationStatus> {
      // Kysely's table, in the schema the connection's search_path names (see `migrate`).
      const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(c.db);
      const applied = new Set(rows.map((r) => r.name));
      const known = Object.keys(migrations(c.backend.dialect.kind));
      return {
        applied: known.filter((n) => applied.has(n)).length,
        pending: known.filter((n) => !applied.has(n)),
        unknown: [...applied].filter((n) => !known.includes(n)).sort(),
      };
    },
    close: () => c.close(),
  };
  addRepositories(base, build);
  const store: KyselyBackedStore = base;
  return store;
}

/** SQLite: one process per database file, so every commit is this process's own and nobody else needs telling. */
const ONE_PROCESS: CommitSignals = { live: true, listen: () => () => undefined, announce: () => undefined };

function sqliteKysely(file: string): { db: Kysely<Database>; dialect: CachedSqliteDialect } {
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
  // Measured cost: about a quarter of the webhook throughput (npm run bench, as docs/performance.md
  // describes it).
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  const dialect = new CachedSqliteDialect(database);
  const db = new Kysely<Database>({ dialect });
  directRunners.set(db, dialect.whenFree);
  return { db, dialect };
}

/** Opens the database and runs pending migrations. A failed migration rejects with `MigrationError`. */
export async function openStore(cfg: DatabaseConfig, opts: StoreOptions = {}): Promise<KyselyBackedStore> {
  const now = opts.now ?? (() => new Date());
  // pg is loaded for a PostgreSQL database only (see ../postgres/open.ts).
  const postgres = cfg.kind === 'postgres' ? await import('../postgres/open.js') : undefined;
  let db: Kysely<Database>;
  let sqlite: CachedSqliteDialect | undefined;
  if (cfg.kind === 'postgres' && postgres) {
    await postgres.checkTls(postgres.pgConnection(cfg.url));
    if (opts.schema) {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(opts.schema)) throw new Error('invalid schema name');
      await postgres.createSchema(cfg.url, opts.schema);
    }
    db = postgres.postgresKysely(cfg.url, { ...opts, poolMax: opts.poolMax ?? cfg.poolMax });
  } else if (cfg.kind === 'sqlite') ({ db, dialect: sqlite } = sqliteKysely(cfg.path));
  else throw new Error('unknown database kind');
  try {
    const migrated = await migrate(db, cfg.kind, cfg.kind === 'postgres' ? opts.schema : undefined);
    opts.onMigrated?.(migrated);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const signals =
    cfg.kind === 'postgres' && postgres
      ? postgres.postgresSignals({
          connection: postgres.pgConnection(cfg.url),
          schema: opts.schema,
          logger: opts.logger,
        })
      : undefined;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await signals?.close();
    await db.destroy();
  };
  return kyselyStore(
    {
      backend: BACKENDS[cfg.kind],
      db,
      now,
      close,
      signals: signals ?? ONE_PROCESS,
      group: sqlite ? new GroupCommit(db, sqlite.held) : undefined,
      account: DEFAULT_ACCOUNT,
      views: new Map(),
    },
    false,
  );
}

export interface MigrateOutcome {
  /** The migrations this open applied, in the order it applied them. */
  applied: string[];
  /** The newest (highest-named) of this version's migrations the database has; undefined: none. */
  latest: string | undefined;
}

/** Runs what is pending. */
async function migrate(db: Kysely<Database>, kind: 'sqlite' | 'postgres', schema?: string): Promise<MigrateOutcome> {
  // Without an explicit schema, Kysely counts a migration table in ANY schema as present, so a
  // fresh schema beside another one (parallel test suites) would fail to migrate.
  // Migrations are added in parallel under reserved number ranges, so a database may already have a
  // higher-numbered one when a lower-numbered one arrives: each runs once, whatever the order.
  const migrator = new Migrator({
    db,
    provider: migrationProvider(kind),
    allowUnorderedMigrations: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new MigrationError(failed?.migrationName, error);
  }
  const executed = (await migrator.getMigrations()).filter((m) => m.executedAt !== undefined).map((m) => m.name);
  return {
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
    latest: executed.sort().at(-1),
  };
}
