/**
 * Reading LOG_DIR for operators. Only regular `*.log` files directly inside LOG_DIR are ever
 * listed or opened: names are checked against one strict pattern, symlinks are refused (lstat),
 * and the resolved path must sit in the resolved directory — so no encoding trick reaches a file
 * outside it.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
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
}

/** Newest first: by modification time, then by name (a later rotation number sorts first). */
export function compareNewestFirst(a: { mtime_ms: number; name: string }, b: { mtime_ms: number; name: string }): number {
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
    if (!st?.isFile()) continue;
    files.push({ name, path: p, size_bytes: st.size, modified_at: st.mtime.toISOString(), mtime_ms: st.mtimeMs });
  }
  return files.sort(compareNewestFirst);
}

/** The absolute path of a listed file, or undefined for any name that is not one. */
export async function resolveLogFile(dir: string, name: string): Promise<string | undefined> {
  if (!LOG_FILE_NAME.test(name)) return undefined;
  const realDir = await fsp.realpath(dir).catch(() => undefined);
  if (!realDir) return undefined;
  const p = path.join(realDir, name);
  if (path.dirname(p) !== realDir) return undefined;
  const st = await fsp.lstat(p).catch(() => undefined);
  return st?.isFile() ? p : undefined;
}

/** The last `lines` lines (each ending in "\n"), never more than VIEW_MAX_BYTES, cut at a line start. */
export async function tailLogFile(file: string, lines: number): Promise<{ text: Buffer; truncated: boolean }> {
  const fh = await fsp.open(file, 'r');
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
export async function openLogView(file: string): Promise<{ stream: Readable; truncated: boolean }> {
  const fh = await fsp.open(file, 'r');
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
  } finally {
    await fh.close();
  }
  if (end < start) return { stream: Readable.from([]), truncated: start > 0 };
  return { stream: fs.createReadStream(file, { start, end }), truncated: start > 0 };
}
