/**
 * `paylink backup FILE`: a consistent copy of the SQLite database while the service runs.
 *
 * `VACUUM INTO` reads the whole database inside one read transaction, so the copy is the database
 * as of one commit: every transaction committed before it began is in it, none half. In WAL mode
 * the reader blocks no writer (the webhook keeps answering); the service's group commits simply
 * land after the snapshot. The copy is compact (no free pages) and a plain rollback-journal file
 * that opens on its own. It is written beside FILE and renamed into place only once it has passed
 * `PRAGMA integrity_check`, so FILE never names a partial copy. The copy holds every payment and the
 * encrypted secrets: the partial file is created empty and 0600 before SQLite writes into it (SQLite
 * would create it with the umask's mode, readable by all while it fills).
 */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { createPrivateFile } from '../platform/private-files.js';

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

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** VACUUM INTO a new, private, empty `partial`; it is removed when the copy fails. */
function copyInto(source: string, partial: string): void {
  try {
    createPrivateFile(partial);
  } catch (err) {
    throw new BackupError(`cannot create ${partial}: ${reason(err)}`);
  }
  try {
    // Not the service's process lock: a backup runs beside the service, as one more reader.
    const db = new SqliteDatabase(source, { fileMustExist: true, timeout: 10_000 });
    try {
      // VACUUM INTO fills an existing empty file and leaves its mode as it is.
      db.prepare('VACUUM INTO ?').run(partial);
    } finally {
      db.close();
    }
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw new BackupError(`the copy failed: ${reason(err)}`);
  }
}

export function backupSqlite(source: string, target: string): BackupResult {
  const out = path.resolve(target);
  if (fs.existsSync(out)) throw new BackupError(`${out} exists: name a new file (a backup never overwrites one)`);
  if (!fs.existsSync(source)) throw new BackupError(`no SQLite database at ${source} (DATA_DIR)`);
  // A missing directory is usually a mistyped path or an unmounted volume: creating it would hide that.
  const dir = path.dirname(out);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    throw new BackupError(`the directory ${dir} does not exist: create it first (a backup never creates directories)`);
  const partial = `${out}.partial-${process.pid}`;
  copyInto(source, partial);
  try {
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

/**
 * What to run for PostgreSQL, naming the variable rather than its value (the URL may hold a password).
 * pg_dump creates its file with the umask's mode and overwrites one that exists, keeping that file's
 * mode. So the shell creates it instead, in a subshell with umask 077 (0600 from its first byte) and
 * noclobber (`set -C`: created exclusively, an existing file is refused and left as it was).
 */
export function pgDumpLine(file: string): string {
  return `(umask 077 && set -C && pg_dump --format=custom --no-owner "$DATABASE_URL" > ${shellQuote(file)})`;
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
