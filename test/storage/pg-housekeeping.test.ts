/**
 * PostgreSQL housekeeping: the pool holds as many connections as `DATABASE_POOL_MAX` says, and
 * migration 041 gives `outbox_events` its own autovacuum rule (SQLite: recorded, nothing changed).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { migrations } from '../../src/storage/kysely/migrations.js';
import { openStore, type KyselyBackedStore, type MigrateOutcome } from '../../src/storage/kysely/store.js';
import { dropSchema, freshDatabase, TEST_DATABASE_URL } from '../helpers/stores.js';

const AUTOVACUUM = [
  'autovacuum_vacuum_scale_factor=0',
  'autovacuum_vacuum_threshold=1000',
  'autovacuum_vacuum_cost_delay=0',
  'autovacuum_analyze_scale_factor=0.02',
];

/** The last migration (each database has the same list). */
const LATEST = Object.keys(migrations('postgres')).sort().at(-1);

/** Distinct server backends that served `n` statements sent at once, each holding its connection 0.3 s. */
async function connectionsUsed(store: KyselyBackedStore, n: number): Promise<number> {
  const pids = await Promise.all(
    Array.from({ length: n }, async () => {
      const r = await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.3)`.execute(store.db);
      return r.rows[0]?.pid;
    }),
  );
  return new Set(pids).size;
}

async function reloptions(store: KyselyBackedStore, schema: string): Promise<string[] | null> {
  const r = await sql<{ reloptions: string[] | null }>`
    select c.reloptions from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relname = 'outbox_events'`.execute(store.db);
  return r.rows[0]?.reloptions ?? null;
}

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL housekeeping (postgres)', () => {
  const url = TEST_DATABASE_URL ?? '';

  it('the pool opens as many connections as DATABASE_POOL_MAX says, and 10 when it is unset', async () => {
    for (const [given, want] of [
      ['13', 13],
      [undefined, 10],
    ] as const) {
      const schema = `t_${randomBytes(6).toString('hex')}`;
      const { database } = loadConfig({ DATABASE_URL: url, DATABASE_POOL_MAX: given });
      const store = await openStore(database, { schema });
      try {
        expect(await connectionsUsed(store, 20)).toBe(want);
      } finally {
        await store.close();
        await dropSchema(url, schema);
      }
    }
  });

  it('migration 041 sets the autovacuum storage parameters of outbox_events, once, after 040', async () => {
    const db = freshDatabase('postgres');
    const schema = db.schema ?? '';
    try {
      let first: MigrateOutcome | undefined;
      const store = await db.open({ onMigrated: (o) => (first = o) });
      try {
        expect(await reloptions(store, schema)).toEqual(AUTOVACUUM);
        expect(first?.applied).toContain('041_outbox_autovacuum');
        expect(first?.latest).toBe(LATEST);
        expect(first?.applied.indexOf('041_outbox_autovacuum')).toBeGreaterThan(
          first?.applied.indexOf('040_reconciliation_source') ?? Infinity,
        );
        // Applying it again changes nothing and fails on nothing.
        await migrations('postgres')['041_outbox_autovacuum']?.up(store.db as unknown as Kysely<unknown>);
        expect(await reloptions(store, schema)).toEqual(AUTOVACUUM);
      } finally {
        await store.close();
      }
      let second: MigrateOutcome | undefined;
      const again = await db.open({ onMigrated: (o) => (second = o) });
      await again.close();
      expect(second?.applied).toEqual([]);
    } finally {
      await db.dispose();
    }
  });

  it('a database migrated by the version before 041 gets 041 and what follows it on open', async () => {
    const db = freshDatabase('postgres');
    const schema = db.schema ?? '';
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const older = new Kysely<unknown>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` }),
      }),
    });
    try {
      const before = Object.fromEntries(Object.entries(migrations('postgres')).filter(([name]) => name < '041'));
      const { error } = await new Migrator({
        db: older,
        provider: { getMigrations: async () => before },
        allowUnorderedMigrations: true,
        migrationTableSchema: schema,
      }).migrateToLatest();
      expect(error).toBeUndefined();
      let outcome: MigrateOutcome | undefined;
      const store = await db.open({ onMigrated: (o) => (outcome = o) });
      try {
        expect(outcome?.applied).toEqual(Object.keys(migrations('postgres')).filter((name) => name >= '041'));
        expect(outcome?.applied[0]).toBe('041_outbox_autovacuum');
        expect(await reloptions(store, schema)).toEqual(AUTOVACUUM);
      } finally {
        await store.close();
      }
    } finally {
      await older.destroy();
      await db.dispose();
    }
  });
});

describe('migration 041 on SQLite', () => {
  it('is recorded and changes nothing', async () => {
    const db = freshDatabase('sqlite');
    try {
      let outcome: MigrateOutcome | undefined;
      const store = await db.open({ onMigrated: (o) => (outcome = o) });
      try {
        expect(outcome?.applied).toContain('041_outbox_autovacuum');
        expect(outcome?.latest).toBe(LATEST);
        const rows = await sql<{ n: number }>`select count(*) as n from outbox_events`.execute(store.db);
        expect(rows.rows[0]?.n).toBe(0);
      } finally {
        await store.close();
      }
    } finally {
      await db.dispose();
    }
  });
});
