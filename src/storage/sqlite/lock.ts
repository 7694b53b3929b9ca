/**
 * One process per SQLite file. The outbox frees every lease at start-up on SQLite (a lease still
 * set can only be a dead run's), and SQLite has no row locks to share an outbox with; a second
 * process on the same file would re-deliver what the first has in flight and race its leases.
 * So the second one refuses to start. The lock is an exclusive SQLite lock on `<file>.lock`,
 * which the operating system frees when the holder dies, SIGKILL included: no stale lock files.
 */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { ensurePrivateFile, privateDir, writePrivateFile } from '../../platform/private-files.js';

export class SqliteInUseError extends Error {
  constructor(file: string, holder: string | undefined) {
    super(
      `the SQLite database ${file} is in use by another paylink process${holder ? ` (pid ${holder})` : ''}; ` +
        'SQLite serves one process at a time: stop the other one, give this one its own DATA_DIR, or use PostgreSQL (DATABASE_URL) to run several instances',
    );
    this.name = 'SqliteInUseError';
  }
}

export interface SqliteLock {
  release(): void;
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

/** Holds the file's process lock until `release()` or process exit; throws `SqliteInUseError` when another process holds it. */
export function lockSqliteFile(file: string): SqliteLock {
  privateDir(path.dirname(file));
  ensurePrivateFile(`${file}.lock`);
  const lockDb = new SqliteDatabase(`${file}.lock`, { timeout: 0 });
  const pidFile = `${file}.pid`;
  try {
    lockDb.pragma('locking_mode = EXCLUSIVE');
    lockDb.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lockDb.close();
    if (!isBusy(err)) throw err;
    let holder: string | undefined;
    try {
      holder = fs.readFileSync(pidFile, 'utf8').trim().slice(0, 20) || undefined;
    } catch {
      // no pid written (yet): the message names no pid
    }
    throw new SqliteInUseError(file, holder);
  }
  // For the message a second process prints; the lock, not this file, is what decides.
  writePrivateFile(pidFile, `${process.pid}\n`);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      try {
        lockDb.exec('ROLLBACK');
      } finally {
        lockDb.close();
      }
    },
  };
}
