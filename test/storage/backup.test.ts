/** backupSqlite: a copy of the database as of one commit, taken beside a live writer. */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackupError, backupSqlite } from '../../src/cli/backup.js';
import { tempDir } from '../helpers/stores.js';

describe('backupSqlite', () => {
  let dir = '';
  let writer: SqliteDatabase.Database;
  const source = () => path.join(dir, 'paylink.db');
  beforeEach(() => {
    dir = tempDir('paylink-backup-unit-');
    writer = new SqliteDatabase(source());
    writer.pragma('journal_mode = WAL');
    // Commits stay in the WAL file (as they do between the service's checkpoints): a copy of the main file alone would miss them.
    writer.pragma('wal_autocheckpoint = 0');
    writer.exec('create table t (id integer primary key, v text not null)');
  });
  afterEach(() => {
    writer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('holds every committed row, also those still in the WAL, and none of a transaction still open', () => {
    const insert = writer.prepare('insert into t (v) values (?)');
    for (let i = 0; i < 500; i++) insert.run(`committed-${i}`);
    writer.exec('begin immediate');
    insert.run('uncommitted');
    const out = path.join(dir, 'copy.db');
    const r = backupSqlite(source(), out);
    writer.exec('commit');
    expect(r).toEqual({ file: out, bytes: fs.statSync(out).size });
    const copy = new SqliteDatabase(out, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.prepare('select count(*) as n from t').get()).toEqual({ n: 500 });
      expect(copy.prepare("select count(*) as n from t where v = 'uncommitted'").get()).toEqual({ n: 0 });
    } finally {
      copy.close();
    }
    expect(fs.readdirSync(dir).filter((f) => f.includes('.partial-'))).toEqual([]);
  });

  it('refuses an existing target and a missing source, leaving nothing behind', () => {
    const taken = path.join(dir, 'taken.db');
    fs.writeFileSync(taken, 'x');
    expect(() => backupSqlite(source(), taken)).toThrow(BackupError);
    expect(fs.readFileSync(taken, 'utf8')).toBe('x');
    expect(() => backupSqlite(path.join(dir, 'absent.db'), path.join(dir, 'new.db'))).toThrow(/no SQLite database/);
    expect(fs.existsSync(path.join(dir, 'new.db'))).toBe(false);
  });
});
