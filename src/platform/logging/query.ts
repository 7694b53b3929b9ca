/**
 * `/api/logs`: entries newest first across the rotated files of LOG_DIR, read backwards in chunks
 * (a page never loads a whole file), filtered, and paged with an opaque cursor that names a file and
 * a byte offset in it. Lines that are not JSON objects are skipped. A request scans at most
 * SCAN_BUDGET_BYTES; when a sparse filter exhausts it, the page comes back short with a cursor to
 * continue from.
 */
import { LOG_FILE_NAME, compareNewestFirst, listLogFiles, openChecked, type CheckedLogFile } from './files.js';

export const SCAN_BUDGET_BYTES = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

export interface LogCursor {
  /** File name. */
  f: string;
  /** Entries before this byte offset of the file remain. */
  o: number;
  /** The file's mtime when the cursor was made (to place it if the file has since been removed). */
  m: number;
}

export interface LogQuery {
  level?: string;
  since?: Date;
  until?: Date;
  q?: string;
  order_id?: string;
  request_id?: string;
  limit: number;
  cursor?: LogCursor;
  /** Entries left out whatever else matches (e.g. the console's own page loads). */
  skip?: (entry: Record<string, unknown>) => boolean;
}

export interface LogPage {
  entries: Array<Record<string, unknown>>;
  next_cursor?: string;
}

export function encodeLogCursor(c: LogCursor): string {
  return Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
}

/** The cursor, or undefined for anything this endpoint did not hand out. */
export function decodeLogCursor(s: string): LogCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(s)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { f, o, m } = v as Record<string, unknown>;
  if (typeof f !== 'string' || !LOG_FILE_NAME.test(f)) return undefined;
  if (typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0) return undefined;
  if (typeof m !== 'number' || !Number.isFinite(m) || m < 0) return undefined;
  if (Object.keys(v).length !== 3) return undefined;
  return { f, o, m };
}

interface Line {
  text: string;
  /** Byte offset of the line's first byte. */
  start: number;
  /** Byte offset just past the line (its newline included). */
  end: number;
}

/** Lines of bytes [0, upTo) of the file, last first. Stops early when the budget runs out. */
async function* linesBackwards(file: CheckedLogFile, upTo: number, budget: { left: number }): AsyncGenerator<Line> {
  // A file retention removed since the listing simply has no lines left; nor has one replaced by a link.
  const fh = await openChecked(file).catch((err: unknown) => {
    if ((err as { code?: unknown }).code === 'ENOENT') return undefined;
    throw err;
  });
  if (!fh) return;
  try {
    let pos = upTo;
    let tail = Buffer.alloc(0); // bytes [pos + buf.length, tailEnd) not yet known to be a whole line
    let tailEnd = upTo; // end of the pending line, its newline included
    while (pos > 0) {
      if (budget.left <= 0) return;
      const len = Math.min(CHUNK, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, pos);
      budget.left -= len;
      const data = tail.length > 0 ? Buffer.concat([buf, tail]) : buf;
      let cut = data.length;
      for (let i = data.length - 1; i >= 0; i--) {
        if (data[i] !== 0x0a) continue;
        if (i + 1 < cut) yield { text: data.subarray(i + 1, cut).toString('utf8'), start: pos + i + 1, end: tailEnd };
        cut = i;
        tailEnd = pos + i + 1;
      }
      tail = Buffer.from(data.subarray(0, cut));
    }
    if (tail.length > 0) yield { text: tail.toString('utf8'), start: 0, end: tailEnd };
  } finally {
    await fh.close();
  }
}

function timeOf(entry: Record<string, unknown>): number | undefined {
  const t = entry.time;
  if (typeof t === 'number') return t;
  if (typeof t === 'string') {
    const ms = Date.parse(t);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

function levelOf(entry: Record<string, unknown>): number | undefined {
  const l = entry.level;
  if (typeof l === 'number') return l;
  if (typeof l === 'string') return LEVELS[l];
  return undefined;
}

function matcher(query: LogQuery): (raw: string, entry: Record<string, unknown>) => boolean {
  const minLevel = query.level === undefined ? undefined : LEVELS[query.level];
  const since = query.since?.getTime();
  const until = query.until?.getTime();
  const needle = query.q?.toLowerCase();
  return (raw, entry) => {
    if (minLevel !== undefined && (levelOf(entry) ?? 0) < minLevel) return false;
    if (since !== undefined || until !== undefined) {
      const t = timeOf(entry);
      if (t === undefined) return false;
      if (since !== undefined && t < since) return false;
      if (until !== undefined && t > until) return false;
    }
    if (query.order_id !== undefined && entry.order_id !== query.order_id) return false;
    if (query.request_id !== undefined && entry.request_id !== query.request_id) return false;
    if (needle !== undefined && !raw.toLowerCase().includes(needle)) return false;
    return query.skip === undefined || !query.skip(entry);
  };
}

function parse(raw: string): Record<string, unknown> | undefined {
  if (!raw.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export async function queryLogs(dir: string, query: LogQuery): Promise<LogPage> {
  const files = await listLogFiles(dir);
  const matches = matcher(query);
  const since = query.since?.getTime();
  const budget = { left: SCAN_BUDGET_BYTES };
  const entries: Array<Record<string, unknown>> = [];

  let start = 0;
  let firstUpTo: number | undefined;
  if (query.cursor) {
    const c = query.cursor;
    const at = files.findIndex((f) => f.name === c.f);
    if (at >= 0) {
      start = at;
      firstUpTo = c.o;
    } else {
      start = files.findIndex((f) => compareNewestFirst(f, { mtime_ms: c.m, name: c.f }) > 0);
      if (start < 0) return { entries };
    }
  }

  for (let i = start; i < files.length; i++) {
    const file = files[i];
    if (!file) break;
    // Files are newest first: once one was last written before `since`, so were all that follow.
    if (since !== undefined && file.mtime_ms < since) break;
    const upTo = i === start && firstUpTo !== undefined ? Math.min(firstUpTo, file.size_bytes) : file.size_bytes;
    let position = upTo;
    for await (const line of linesBackwards(file, upTo, budget)) {
      const entry = parse(line.text);
      if (entry && matches(line.text, entry)) {
        if (entries.length === query.limit) {
          // One more match exists: the next page starts with it.
          return { entries, next_cursor: encodeLogCursor({ f: file.name, o: line.end, m: file.mtime_ms }) };
        }
        entries.push(entry);
      }
      position = line.start;
    }
    if (budget.left <= 0) {
      // Out of scan budget: hand back what we have and where to go on.
      return { entries, next_cursor: encodeLogCursor({ f: file.name, o: Math.max(0, position), m: file.mtime_ms }) };
    }
  }
  return { entries };
}
