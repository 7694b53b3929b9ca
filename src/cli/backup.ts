/**
 * `paylink backup FILE`: a consistent copy of the SQLite database while the service runs.
 *
 * `VACUUM INTO` reads the whole database inside one read transaction, so the copy is the database
 * as of one commit: every transaction committed before it began is in it, none half. In WAL mode
 * the reader blocks no writer (the webhook keeps answering); the service's group commits simply
 * land after the snapshot. The copy is compact (no free pages) and a plain rollback-journal file
 * that opens on its own. It is written beside FILE and renamed into place only once it has passed
 * `PRAGMA integrity_check`, so FILE never names a partial copy.
 */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

export interface BackupResult {
  file: string;
  bytes: number;
}

export function backupSqlite(source: string, target: string): BackupResult {
  const out = path.resolve(target);
  if (fs.existsSync(out)) throw new BackupError(`${out} exists: name a new file (a backup never overwrites one)`);
  if (!fs.existsSync(source)) throw new BackupError(`no SQLite database at ${source} (DATA_DIR)`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const partial = `${out}.partial-${process.pid}`;
  // Not the service's process lock: a backup runs beside the service, as one more reader.
  const db = new SqliteDatabase(source, { fileMustExist: true, timeout: 10_000 });
  try {
    db.prepare('VACUUM INTO ?').run(partial);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw new BackupError(`the copy failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    db.close();
  }
  try {
    // It holds payment data and encrypted secrets: readable by the owner only.
    fs.chmodSync(partial, 0o600);
    const copy = new SqliteDatabase(partial, { readonly: true, fileMustExist: true });
    let check: unknown;
    try {
      check = copy.pragma('integrity_check', { simple: true });
    } finally {
      copy.close();
    }
    if (check !== 'ok') throw new BackupError(`the copy fails PRAGMA integrity_check (${String(check)})`);
    fs.renameSync(partial, out);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  }
  return { file: out, bytes: fs.statSync(out).size };
}

/** What to run for PostgreSQL, naming the variable rather than its value (the URL may hold a password). */
export function pgDumpLine(file: string): string {
  return `pg_dump --format=custom --no-owner --file=${shellQuote(file)} "$DATABASE_URL"`;
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
