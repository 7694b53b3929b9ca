/**
 * The SQLite driver for Kysely, in place of Kysely's own: the same single better-sqlite3
 * connection, but
 * - prepared statements are cached by SQL text (Kysely's driver prepares every statement again on
 *   every query, about a tenth of the webhook's CPU time; docs/performance.md), and
 * - waiters for the connection queue in order (Kysely's mutex wakes every waiter on each release).
 */
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteDialect,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { DirectRunner } from '../kysely/precompiled.js';

const CACHE_SIZE = 256;

class CachedConnection implements DatabaseConnection {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: SqliteDatabase) {}

  private prepare(text: string): Statement {
    const cached = this.statements.get(text);
    if (cached) {
      // Most recently used last: the first entry is the one evicted.
      this.statements.delete(text);
      this.statements.set(text, cached);
      return cached;
    }
    const stmt = this.db.prepare(text);
    if (this.statements.size >= CACHE_SIZE) {
      const oldest = this.statements.keys().next();
      if (!oldest.done) this.statements.delete(oldest.value);
    }
    this.statements.set(text, stmt);
    return stmt;
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const stmt = this.prepare(compiled.sql);
      const params = compiled.parameters as unknown[];
      if (stmt.reader) return Promise.resolve({ rows: stmt.all(params) as R[] });
      const { changes, lastInsertRowid } = stmt.run(params);
      return Promise.resolve({ numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] });
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used with SQLite');
  }
}

/** A FIFO lock: each release hands the connection to the next waiter only. */
class Lock {
  private held = false;
  private readonly waiters: (() => void)[] = [];

  get free(): boolean {
    return !this.held;
  }

  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

class CachedSqliteDriver implements Driver {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly connection: CachedConnection,
    private readonly lock: Lock,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock.acquire();
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings): Promise<void> {
    // IMMEDIATE: the write lock is taken at once, so a transaction never fails half-way on a lock upgrade.
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    this.lock.release();
  }

  async destroy(): Promise<void> {
    this.db.close();
  }
}

/**
 * Kysely's SQLite adapter, saying what SQLite does: schema changes are transactional. Kysely's
 * migrator then runs every pending migration in one transaction (as on PostgreSQL): all of them or
 * none, and one commit instead of one per statement. Each commit waits for an fsync
 * (synchronous = FULL); migrating an empty database took 0.85–1.3 s of start-up, nearly all of it
 * those waits (about 0.15 s of CPU), on a 2-core machine.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/** Kysely's SQLite dialect (compiler, introspector) over the caching driver, with migrations in one transaction. */
export class CachedSqliteDialect extends SqliteDialect {
  private readonly connection: CachedConnection;
  private readonly lock = new Lock();

  constructor(private readonly database: SqliteDatabase) {
    super({ database });
    this.connection = new CachedConnection(database);
  }

  override createDriver(): Driver {
    return new CachedSqliteDriver(this.database, this.connection, this.lock);
  }

  /**
   * Outside a transaction: a statement runs at once while nobody holds the connection (better-sqlite3
   * runs it synchronously, so nobody can take the connection meanwhile: the same as acquiring and
   * releasing it around the statement); otherwise it waits its turn through Kysely.
   */
  readonly whenFree: DirectRunner = (query) => (this.lock.free ? this.connection.executeQuery(query) : undefined);

  /**
   * Inside a transaction, which holds the connection until it ends: every statement runs at once.
   * A keyed SELECT inside a transaction took 12–14 µs through Kysely's executor and 7–9 µs this way
   * (loaded 2-core machine), and a new notification sends four statements inside its transaction.
   */
  readonly held: DirectRunner = (query) => this.connection.executeQuery(query);

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}
