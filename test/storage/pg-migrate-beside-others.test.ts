/**
 * Test suites run in parallel, each in its own PostgreSQL schema, creating and dropping schemas all
 * the time. Migrating one schema must not depend on the others staying put while it looks.
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase, TEST_DATABASE_URL } from '../helpers/stores.js';

describe.skipIf(!TEST_DATABASE_URL)('migrations beside schemas that come and go (postgres)', () => {
  it('opening stores while other schemas are created, filled and dropped never fails', async () => {
    const url = TEST_DATABASE_URL ?? '';
    let stop = false;
    const churn = async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        for (let i = 0; i < 400 && !stop; i++) {
          const s = `churn_${randomBytes(5).toString('hex')}`;
          await c.query(`create schema ${s}`);
          await c.query(`create table ${s}.t (id int, a text, b text)`);
          await c.query(`drop schema ${s} cascade`);
        }
      } finally {
        await c.end();
      }
    };
    const churning = Promise.all([churn(), churn()]);
    const failures: string[] = [];
    try {
      for (let i = 0; i < 8; i++) {
        const db = freshDatabase('postgres');
        try {
          const store = await db.open();
          await store.close();
        } catch (err) {
          failures.push(err instanceof Error ? err.message : String(err));
        } finally {
          await db.dispose();
        }
      }
    } finally {
      stop = true;
      await churning;
    }
    expect(failures).toEqual([]);
  });
});
