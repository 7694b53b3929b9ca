/**
 * backupSqlite: a copy of the database as of one commit, taken beside a live writer, private from its
 * first byte; the pg_dump line `paylink backup` prints for PostgreSQL, private and never overwriting.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackupError, backupSqlite, pgDumpLine } from '../../src/cli/backup.js';
import { runCli } from '../helpers/cli.js';
import { TEST_DATABASE_URL, tempDir } from '../helpers/stores.js';

const mode = (file: string) => fs.statSync(file).mode & 0o777;

/** Polls until `find` returns a value (every 5 ms, up to `ms`). */
async function waitFor<T>(what: string, find: () => T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Runs `sh -c line`; resolves with its exit code and output. */
function sh(
  line: string,
  env: Record<string, string>,
): { exited: () => boolean; done: Promise<{ code: number | null; output: string }> } {
  const proc = spawn('sh', ['-c', line], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exited = false;
  proc.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const done = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code) => {
      exited = true;
      resolve({ code, output });
    });
  });
  return { exited: () => exited, done };
}

/** Runs `body` with the umask most systems have (022): files made with the default mode are then world-readable. */
async function withOpenUmask(body: () => Promise<void>): Promise<void> {
  const before = process.umask(0o022);
  try {
    await body();
  } finally {
    process.umask(before);
  }
}

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

  it('the copy is 0600 from its first byte: its partial file, looked at whenever it changes while `paylink backup` writes it, and the finished file', async () => {
    const data = path.join(dir, 'data');
    fs.mkdirSync(data);
    // Large enough (about 15 MB, two indexes to rebuild) that the copy takes a while to write.
    const db = new SqliteDatabase(path.join(data, 'paylink.db'));
    db.exec('create table p (id integer primary key, a text not null, b text not null)');
    db.exec(
      'with recursive n(i) as (select 1 union all select i + 1 from n where i < 100000) insert into p (a, b) select hex(randomblob(16)), hex(randomblob(16)) from n',
    );
    db.exec('create index p_a on p (a); create index p_b on p (b)');
    db.close();
    const backups = path.join(dir, 'backups');
    fs.mkdirSync(backups);
    const seen: number[] = [];
    const watcher = fs.watch(backups, (_event, name) => {
      if (!name?.startsWith('copy.db.partial-')) return;
      try {
        seen.push(mode(path.join(backups, name)));
      } catch {
        // Renamed or removed between the event and the look.
      }
    });
    try {
      await withOpenUmask(async () => {
        const r = await runCli(['backup', path.join(backups, 'copy.db')], {
          env: { DATA_DIR: data, LOG_DIR: path.join(data, 'logs') },
        });
        expect(r.code, r.stderr).toBe(0);
      });
    } finally {
      watcher.close();
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((m) => m !== 0o600).map((m) => m.toString(8))).toEqual([]);
    expect(mode(path.join(backups, 'copy.db'))).toBe(0o600);
    expect(fs.readdirSync(backups)).toEqual(['copy.db']);
  });

  it.skipIf(!TEST_DATABASE_URL)(
    'PostgreSQL: the printed pg_dump line writes a 0600 file from its first byte and never overwrites one',
    async () => {
      const base = new URL(TEST_DATABASE_URL ?? '');
      const name = `paylink_bkmode_${process.pid}_${Date.now()}`;
      const url = Object.assign(new URL(base.href), { pathname: `/${name}` }).href;
      const admin = new pg.Client({ connectionString: base.href });
      await admin.connect();
      await admin.query(`create database ${name}`);
      const holder = new pg.Client({ connectionString: url });
      try {
        await holder.connect();
        await holder.query(
          "create table p (id serial primary key, v text not null); insert into p (v) values ('payment')",
        );
        const dump = path.join(dir, 'paylink.dump');
        const line = pgDumpLine(dump);
        await withOpenUmask(async () => {
          // pg_dump waits for this lock before it reads the table: the dump is then in progress, its file open.
          await holder.query('begin');
          await holder.query('lock table p in access exclusive mode');
          const running = sh(line, { DATABASE_URL: url });
          await waitFor('the dump file', () => (fs.existsSync(dump) ? true : undefined));
          expect(running.exited()).toBe(false);
          expect(mode(dump)).toBe(0o600);
          await holder.query('commit');
          const r = await running.done;
          expect(r.code, r.output).toBe(0);
          expect(mode(dump)).toBe(0o600);
          expect(fs.statSync(dump).size).toBeGreaterThan(0);

          // The same line again: the file there is refused and left as it was.
          const size = fs.statSync(dump).size;
          const again = await sh(line, { DATABASE_URL: url }).done;
          expect(again.code).not.toBe(0);
          expect(again.output).toMatch(/exist/i);
          expect(fs.statSync(dump).size).toBe(size);
        });
      } finally {
        await holder.end();
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      }
    },
  );
});
