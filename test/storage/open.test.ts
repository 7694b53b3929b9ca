/** Opening a store: what start-up says when the database cannot be used. */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import SqliteDatabase from 'better-sqlite3';
import { MigrationError, openStore } from '../../src/storage/kysely/store.js';
import { tempDir } from '../helpers/stores.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('opening a store', () => {
  it('an unreachable PostgreSQL is reported as unreachable, not as a failed migration', async () => {
    const err = await openStore({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:1/none' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MigrationError);
    expect((err as Error).message).toMatch(/^database unreachable, nothing migrated: /);
  });

  it('a migration that cannot run names the migration', async () => {
    const dir = tempDir('paylink-open-');
    const file = path.join(dir, 'paylink.db');
    const raw = new SqliteDatabase(file);
    raw.exec('create table transactions (x integer)');
    raw.close();
    try {
      const err = await openStore({ kind: 'sqlite', path: file }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MigrationError);
      expect((err as Error).message).toMatch(/^database migration 001_initial failed: .*transactions/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SQLite: a migration that fails leaves none of that run applied (one transaction)', async () => {
    const dir = tempDir('paylink-open-');
    const file = path.join(dir, 'paylink.db');
    const raw = new SqliteDatabase(file);
    // 001 to 010 apply; 015 creates this table.
    raw.exec('create table refunds (x integer)');
    raw.close();
    try {
      const err = await openStore({ kind: 'sqlite', path: file }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MigrationError);
      expect((err as Error).message).toMatch(/^database migration 015_refunds failed: /);
      const after = new SqliteDatabase(file, { readonly: true });
      try {
        const tables = after
          .prepare("select name from sqlite_master where type = 'table' and name in ('transactions', 'auth_failures')")
          .all();
        expect(tables).toEqual([]);
        expect(after.prepare('select count(*) as n from kysely_migration').get()).toEqual({ n: 0 });
      } finally {
        after.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the service stops at start-up with exit code 1 and one clear line', () => {
    const dir = tempDir('paylink-open-');
    try {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          PORT: '0',
          SIMULATOR_PORT: '0',
          DATA_DIR: dir,
          LOG_DIR: path.join(dir, 'logs'),
          DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
          log_user: 'ops',
          log_pass: 'a-long-enough-operator-pass',
        },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^paylink: database unreachable, nothing migrated: /m);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
