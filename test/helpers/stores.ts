import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach } from 'vitest';
import { openStore, type KyselyBackedStore, type StoreOptions } from '../../src/storage/kysely/store.js';
import type { Store } from '../../src/storage/contract.js';
import type { DatabaseConfig } from '../../src/config/env.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  /** Where a service process would point DATABASE_URL / DATA_DIR. */
  config: DatabaseConfig;
  schema?: string;
  open(opts?: StoreOptions): Promise<KyselyBackedStore>;
  /** Removes the file or schema. */
  dispose(): Promise<void>;
}

export function tempDir(prefix = 'paylink-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A fresh, empty database of the given kind: a temp SQLite file, or its own PostgreSQL schema. */
export function freshDatabase(kind: 'sqlite' | 'postgres'): TestDatabase {
  if (kind === 'sqlite') {
    const dir = tempDir();
    const config: DatabaseConfig = { kind: 'sqlite', path: path.join(dir, 'paylink.db') };
    return {
      name: 'sqlite',
      config,
      open: (opts) => openStore(config, opts),
      dispose: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
  const url = TEST_DATABASE_URL;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const config: DatabaseConfig = { kind: 'postgres', url };
  return {
    name: 'postgres',
    config,
    schema,
    open: (opts) => openStore(config, { ...opts, schema }),
    dispose: () => dropSchema(url, schema),
  };
}

/** SQLite always; PostgreSQL whenever TEST_DATABASE_URL is set. */
/** Drops a test's PostgreSQL schema and all it holds. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await c.end();
  }
}

export const DATABASE_KINDS: Array<'sqlite' | 'postgres'> = TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/**
 * A fresh database and open store for every test of the enclosing describe: `set` receives them
 * before each test; after it, the store in use (`current`, for tests that reopen it) is closed and
 * the database removed.
 */
export function freshStoreEachTest(
  kind: 'sqlite' | 'postgres',
  set: (db: TestDatabase, store: Store) => void,
  o: { open?: () => StoreOptions; current?: () => Store } = {},
): void {
  let made: { db: TestDatabase; store: Store } | undefined;
  beforeEach(async () => {
    const db = freshDatabase(kind);
    const store = await db.open(o.open?.() ?? {});
    made = { db, store };
    set(db, store);
  });
  afterEach(async () => {
    if (!made) return;
    await (o.current?.() ?? made.store).close();
    await made.db.dispose();
    made = undefined;
  });
}
