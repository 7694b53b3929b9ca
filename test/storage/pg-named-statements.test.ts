/**
 * PostgreSQL's named prepared statements (src/storage/postgres/open.ts): a precompiled text is
 * prepared once per connection under its name; when a table's columns change after that (another
 * instance's migration), the statement fails once on that connection, the connection is closed, and
 * the next run prepares it again on a new one and sees the new columns.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { TEST_DATABASE_URL, dropSchema } from '../helpers/stores.js';
import { createSchema, postgresKysely } from '../../src/storage/postgres/open.js';
import { Precompiled, postgresNames } from '../../src/storage/kysely/precompiled.js';
import type { Database } from '../../src/storage/kysely/schema.js';

describe.runIf(TEST_DATABASE_URL)('PostgreSQL named statements', () => {
  const schema = `named_${process.pid}`;
  let db: Kysely<Database> | undefined;
  afterEach(async () => {
    await db?.destroy();
    db = undefined;
    await dropSchema(TEST_DATABASE_URL ?? '', schema);
  });

  it('prepares a precompiled text once per connection, and recovers after its table gains a column', async () => {
    const url = TEST_DATABASE_URL ?? '';
    await createSchema(url, schema);
    db = postgresKysely(url, { poolMax: 1, schema });
    await sql`create table t (a integer)`.execute(db);
    await sql`insert into t values (1)`.execute(db);
    const byA = new Precompiled<Record<string, unknown>>('select * from t where a = ?');
    const prepared = new Precompiled<{ name: string }>('select name from pg_prepared_statements');

    expect(await byA.first(db, 'postgres', [1])).toEqual({ a: 1 });
    const names = (await prepared.run(db, 'postgres', [])).rows.map((r) => r.name);
    expect(names).toContain(postgresNames.get('select * from t where a = $1'));

    await sql`alter table t add column b integer`.execute(db);
    await expect(byA.first(db, 'postgres', [1])).rejects.toMatchObject({ code: '0A000' });
    expect(await byA.first(db, 'postgres', [1])).toEqual({ a: 1, b: null });
    expect(await byA.first(db, 'postgres', [1])).toEqual({ a: 1, b: null });
  });
});
