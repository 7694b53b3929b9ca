/**
 * DATA_DIR holds the SQLite database (every order, customer and stored secret), the generated
 * operator password and the key of the stored secrets: it is for this service's user alone. The
 * directory is kept 0700 and every file in it 0600, whatever the umask, and files left more open
 * by an earlier run are tightened when they are next opened.
 */
import fs from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Narrows `p` to `mode` when it allows more; false when it is absent or not ours to change. */
function restrict(p: string, mode: number): boolean {
  let current: number;
  try {
    current = fs.statSync(p).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  if ((current & ~mode) === 0) return true;
  try {
    fs.chmodSync(p, mode);
    return true;
  } catch (err) {
    // A directory owned by another user (a volume mounted for us) keeps the mode its owner chose.
    if ((err as NodeJS.ErrnoException).code === 'EPERM') return false;
    throw err;
  }
}

/** Creates `dir` (and missing parents) owner-only, and narrows an existing one to 0700. */
export function privateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  restrict(dir, PRIVATE_DIR_MODE);
}

/** Narrows an existing file to 0600 (nothing when it is absent). */
export function privateFile(file: string): void {
  restrict(file, PRIVATE_FILE_MODE);
}

/**
 * Creates `file` empty with mode 0600 when it does not exist yet, and narrows it when it does: for
 * files another library creates with its own default mode (SQLite's 0644). SQLite gives its
 * `-wal` and `-shm` files the database file's mode, so they follow.
 */
export function ensurePrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
  privateFile(file);
}

/**
 * Creates `file` empty and 0600, and fails when anything is there already (O_EXCL: a file left by
 * another run, or a link planted to redirect the write): for a file that is private from its first
 * byte, which another program then fills.
 */
export function createPrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'wx', PRIVATE_FILE_MODE));
}

/** Writes `data` to a new or existing file, 0600 either way. */
export function writePrivateFile(file: string, data: string): void {
  fs.writeFileSync(file, data, { mode: PRIVATE_FILE_MODE });
  privateFile(file);
}
