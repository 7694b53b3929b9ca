/**
 * Which real driver errors count as "the database cannot answer now" (→ 503, so the gateway and
 * the ERP retry) and which are bugs or constraints (→ 500 / 4xx). Errors come from the real drivers.
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import fs from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { isDatabaseUnavailable } from '../../src/platform/errors.js';
import { TEST_DATABASE_URL, tempDir } from '../helpers/stores.js';

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

describe('isDatabaseUnavailable (SQLite)', () => {
  it('a locked database (busy, extended codes included) is unavailable; a constraint or a syntax error is not', () => {
    const dir = tempDir('paylink-dberr-');
    const file = path.join(dir, 'x.db');
    const a = new Database(file, { timeout: 0 });
    const b = new Database(file, { timeout: 0 });
    try {
      a.exec('create table t (id integer primary key, v text not null)');
      a.exec('begin exclusive');
      const busy = caught(() => b.prepare('insert into t (v) values (?)').run('x'));
      expect((busy as { code: string }).code).toMatch(/^SQLITE_BUSY/);
      expect(isDatabaseUnavailable(busy)).toBe(true);
      a.exec('commit');
      a.prepare('insert into t (id, v) values (1, ?)').run('x');
      expect(isDatabaseUnavailable(caught(() => a.prepare('insert into t (id, v) values (1, ?)').run('y')))).toBe(
        false,
      );
      expect(isDatabaseUnavailable(caught(() => a.prepare('selec 1')))).toBe(false);
      a.close();
      expect(isDatabaseUnavailable(caught(() => a.prepare('select 1')))).toBe(true);
    } finally {
      if (a.open) a.close();
      b.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('extended and resource codes by name', () => {
    const err = (code: string) => Object.assign(new Error('x'), { code });
    for (const c of [
      'SQLITE_BUSY_SNAPSHOT',
      'SQLITE_IOERR_WRITE',
      'SQLITE_FULL',
      'SQLITE_LOCKED',
      'SQLITE_CANTOPEN_ISDIR',
      'SQLITE_READONLY_DBMOVED',
    ])
      expect(isDatabaseUnavailable(err(c)), c).toBe(true);
    for (const c of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'SQLITE_MISMATCH', '23505', '42P01', '22021'])
      expect(isDatabaseUnavailable(err(c)), c).toBe(false);
  });
});

describe.runIf(TEST_DATABASE_URL)('isDatabaseUnavailable (PostgreSQL)', () => {
  it('a full pool, a statement timeout and a refused connection are unavailable; an error in the query is not', async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, connectionTimeoutMillis: 200 });
    const held = await pool.connect();
    try {
      const full = await pool.connect().then(
        (c) => {
          c.release();
          throw new Error('expected the pool to be full');
        },
        (e: unknown) => e,
      );
      expect(isDatabaseUnavailable(full)).toBe(true);
      await held.query('set statement_timeout = 50');
      const slow = await held.query('select pg_sleep(1)').catch((e: unknown) => e);
      expect((slow as { code: string }).code).toBe('57014');
      expect(isDatabaseUnavailable(slow)).toBe(true);
      await held.query('set statement_timeout = 0');
      const divide = await held.query('select 1/0').catch((e: unknown) => e);
      expect(isDatabaseUnavailable(divide)).toBe(false);
      const bad = await held.query('select from no_such_table_here').catch((e: unknown) => e);
      expect(isDatabaseUnavailable(bad)).toBe(false);
    } finally {
      held.release();
      await pool.end();
    }
    const refused = new pg.Client({
      host: '127.0.0.1',
      port: 1,
      user: 'postgres',
      database: 'test',
      connectionTimeoutMillis: 1_000,
    });
    const err = await refused.connect().catch((e: unknown) => e);
    expect(isDatabaseUnavailable(err)).toBe(true);
  });
});
