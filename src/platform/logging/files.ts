/**
 * Reading LOG_DIR for operators. Only regular `*.log` files directly inside LOG_DIR are ever
 * listed or opened: names are checked against one strict pattern, symlinks and files with more
 * than one link are refused (lstat), the resolved path must sit in the resolved directory, and the
 * file is opened with O_NOFOLLOW and must be the very file checked (fstat: device and inode) — so
 * neither an encoding trick nor a link swapped in after the check reaches a file outside it.
 */
import fs from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';

/** Every name served: letters, digits, dot, dash, underscore; ends in lower-case `.log`. */
export const LOG_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.log$/;
/** The most bytes one view or tail answers with. */
export const VIEW_MAX_BYTES = 1024 * 1024;
export const TAIL_MAX_LINES = 10_000;

export interface LogFile {
  name: string;
  path: string;
  size_bytes: number;
  modified_at: string;
  mtime_ms: number;
  dev: number;
  ino: number;
}

/** Newest first: by modification time, then by name (a later rotation number sorts first). */
export function compareNewestFirst(
  a: { mtime_ms: number; name: string },
  b: { mtime_ms: number; name: string },
): number {
  if (a.mtime_ms !== b.mtime_ms) return b.mtime_ms - a.mtime_ms;
  return b.name < a.name ? -1 : b.name > a.name ? 1 : 0;
}

export async function listLogFiles(dir: string): Promise<LogFile[]> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const files: LogFile[] = [];
  for (const name of names) {
    if (!LOG_FILE_NAME.test(name)) continue;
    const p = path.join(dir, name);
    const st = await fsp.lstat(p).catch(() => undefined);
    if (!servable(st)) continue;
    files.push({
      name,
      path: p,
      size_bytes: st.size,
      modified_at: st.mtime.toISOString(),
      mtime_ms: st.mtimeMs,
      dev: st.dev,
      ino: st.ino,
    });
  }
  return files.sort(compareNewestFirst);
}

/** A log file as checked by lstat: what is later opened must be this very file. */
export interface CheckedLogFile {
  path: string;
  dev: number;
  ino: number;
}

/** A regular file with a single link (a hard link could be any file of the same file system). */
const servable = (st: fs.Stats | undefined): st is fs.Stats => st !== undefined && st.isFile() && st.nlink === 1;

async function checkPath(p: string): Promise<CheckedLogFile | undefined> {
  const st = await fsp.lstat(p).catch(() => undefined);
  return servable(st) ? { path: p, dev: st.dev, ino: st.ino } : undefined;
}

/** A listed file, checked, or undefined for any name that is not one. */
export async function resolveLogFile(dir: string, name: string): Promise<CheckedLogFile | undefined> {
  if (!LOG_FILE_NAME.test(name)) return undefined;
  const realDir = await fsp.realpath(dir).catch(() => undefined);
  if (!realDir) return undefined;
  const p = path.join(realDir, name);
  if (path.dirname(p) !== realDir) return undefined;
  return checkPath(p);
}

/** Thrown when the entry changed between the check and the open (a swapped symlink or file, a new hard link). */
export class LogFileChangedError extends Error {
  readonly code = 'ENOENT';
  constructor() {
    super('the log file changed after it was checked');
    this.name = 'LogFileChangedError';
  }
}

/**
 * Opens the checked entry without following a symlink (O_NOFOLLOW), then makes sure the handle is
 * the file that was checked (device and inode) and still has one link. Reading goes through this
 * handle only, so swapping the name for a link after the check reaches nothing.
 */
export async function openChecked(file: string | CheckedLogFile): Promise<FileHandle> {
  const checked = typeof file === 'string' ? await checkPath(file) : file;
  if (!checked) throw new LogFileChangedError();
  let fh: FileHandle;
  try {
    fh = await fsp.open(checked.path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new LogFileChangedError();
    throw err;
  }
  const st = await fh.stat();
  if (!servable(st) || st.dev !== checked.dev || st.ino !== checked.ino) {
    await fh.close();
    throw new LogFileChangedError();
  }
  return fh;
}

/** The last `lines` lines (each ending in "\n"), never more than VIEW_MAX_BYTES, cut at a line start. */
export async function tailLogFile(
  file: string | CheckedLogFile,
  lines: number,
): Promise<{ text: Buffer; truncated: boolean }> {
  const fh = await openChecked(file);
  try {
    const size = (await fh.stat()).size;
    const chunks: Buffer[] = [];
    let pos = size;
    let newlines = 0;
    let have = 0;
    let trailingNewline = true;
    const CHUNK = 64 * 1024;
    let start = 0;
    let found = false;
    while (pos > 0 && !found) {
      const len = Math.min(CHUNK, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, pos);
      chunks.unshift(buf);
      have += len;
      for (let i = len - 1; i >= 0; i--) {
        if (buf[i] !== 0x0a) continue;
        const abs = pos + i;
        if (abs === size - 1) continue; // the final newline closes the last line
        newlines++;
        if (newlines === lines) {
          start = abs + 1;
          found = true;
          break;
        }
      }
      if (have > VIEW_MAX_BYTES + CHUNK) break;
    }
    const last = chunks[chunks.length - 1];
    if (last !== undefined && last.length > 0) trailingNewline = last[last.length - 1] === 0x0a;
    let text = Buffer.concat(chunks).subarray(Math.max(0, start - pos));
    if (!found && pos > 0) {
      // Stopped by the byte cap before finding enough lines: start at the first whole line.
      const nl = text.indexOf(0x0a);
      text = nl < 0 ? Buffer.alloc(0) : text.subarray(nl + 1);
    }
    if (!trailingNewline && text.length > 0) text = Buffer.concat([text, Buffer.from('\n')]);
    let truncated = false;
    if (text.length > VIEW_MAX_BYTES) {
      const from = text.length - VIEW_MAX_BYTES;
      const nl = text.indexOf(0x0a, from - 1);
      text = nl < 0 ? Buffer.alloc(0) : text.subarray(nl + 1);
      truncated = true;
    } else if (!found && pos > 0) {
      truncated = true;
    }
    return { text, truncated };
  } finally {
    await fh.close();
  }
}

/** The whole file as a stream when it fits in VIEW_MAX_BYTES, else its last part from a line start. */
export async function openLogView(file: string | CheckedLogFile): Promise<{ stream: Readable; truncated: boolean }> {
  const fh = await openChecked(file);
  let start = 0;
  let end: number;
  try {
    const size = (await fh.stat()).size;
    end = size - 1;
    if (size > VIEW_MAX_BYTES) {
      const from = size - VIEW_MAX_BYTES;
      // The byte before `from` tells whether `from` already starts a line.
      const probe = Buffer.alloc(Math.min(VIEW_MAX_BYTES, 64 * 1024) + 1);
      let at = from - 1;
      start = -1;
      while (at < size && start < 0) {
        const { bytesRead } = await fh.read(probe, 0, probe.length, at);
        if (bytesRead === 0) break;
        const nl = probe.subarray(0, bytesRead).indexOf(0x0a);
        if (nl >= 0) start = at + nl + 1;
        else at += bytesRead;
      }
      if (start < 0) start = size;
    }
  } catch (err) {
    await fh.close();
    throw err;
  }
  if (end < start) {
    await fh.close();
    return { stream: Readable.from([]), truncated: start > 0 };
  }
  // The stream reads the checked handle and closes it when done (or destroyed).
  return { stream: fh.createReadStream({ start, end, autoClose: true }), truncated: start > 0 };
}
