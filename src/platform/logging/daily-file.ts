/**
 * The log file of the current Jakarta day, `paylink.<yyyy-MM-dd>.<n>.log`: pino-roll opens it and
 * rolls it by size (a higher <n>); the day is switched here at Jakarta midnight, because
 * pino-roll's own daily rolling follows the process's time zone (UTC on most servers, which would
 * put the day's boundary at 07:00 WIB). Retention is here too, over every day's files: pino-roll's
 * counts files of one name only, and here each day has its own.
 *
 * pino-roll numbers a new day's first file on from the highest <n> in LOG_DIR, so a day after one
 * that rolled by size may begin at .3 rather than .1; the date is what tells the days apart.
 */
import fs from 'node:fs';
import path from 'node:path';
import roll, { type RollStream } from 'pino-roll';
import { jakartaDay, jakartaDayStart } from '../time.js';
import { PRIVATE_FILE_MODE } from '../private-files.js';

const DAY_MS = 86_400_000;
const FILE = /^(.+)\.(\d{4}-\d{2}-\d{2})\.(\d+)\.log$/;

export interface DailyFileOptions {
  dir: string;
  base: string;
  /** pino-roll size syntax (`20m`). */
  size: string;
  /** Files kept beside the one being written. */
  keep: number;
  now: () => Date;
  onError: (err: Error) => void;
  /** How long after a day's file failed to open it is tried again, ms (default a minute). */
  retryMs?: number;
}

/** Milliseconds from `now` to the next Jakarta midnight (never 0: at midnight itself, a full day). */
export function msUntilNextJakartaDay(now: Date): number {
  const next = Date.parse(jakartaDayStart(jakartaDay(now.toISOString()))) + DAY_MS;
  return next - now.getTime();
}

/** Removes all but the newest `keep` + 1 of `base`'s log files (by day, then number). */
export async function pruneLogFiles(dir: string, base: string, keep: number): Promise<void> {
  const files = (await fs.promises.readdir(dir))
    .map((name) => ({ name, m: FILE.exec(name) }))
    .filter((f) => f.m?.[1] === base)
    .sort((a, b) => (a.m?.[2] ?? '').localeCompare(b.m?.[2] ?? '') || Number(a.m?.[3]) - Number(b.m?.[3]));
  const old = files.slice(0, Math.max(0, files.length - keep - 1));
  await Promise.allSettled(old.map((f) => fs.promises.unlink(path.join(dir, f.name))));
}

export interface DailyFile {
  /** The stream of the current day. */
  current(): RollStream;
  /** Stops switching days and ends the current stream. */
  end(): Promise<void>;
}

async function openDay(o: DailyFileOptions, day: string): Promise<RollStream> {
  const file = await roll({
    // pino-roll takes the last dotted part of the name as the extension and puts <n> before it.
    file: path.join(o.dir, `${o.base}.${day}.log`),
    size: o.size,
    mkdir: true,
    mode: PRIVATE_FILE_MODE,
  });
  await new Promise<void>((resolve, reject) => {
    if (!(file as unknown as { _opening: boolean })._opening) resolve();
    file.once('ready', () => resolve());
    file.once('error', reject);
  });
  file.on('error', o.onError);
  // A size roll reopens the stream: a good moment to drop what is beyond retention.
  file.on('ready', () => void pruneLogFiles(o.dir, o.base, o.keep));
  return file;
}

function endStream(file: RollStream): Promise<void> {
  return new Promise((resolve) => {
    if (file.destroyed) {
      resolve();
      return;
    }
    file.once('close', () => resolve());
    file.end();
  });
}

export async function openDailyFile(o: DailyFileOptions): Promise<DailyFile> {
  let day = jakartaDay(o.now().toISOString());
  let file = await openDay(o, day);
  await pruneLogFiles(o.dir, o.base, o.keep);
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  // From the open file's day, not from when the timer is set: opening and pruning can take long
  // enough (a loaded machine) to cross midnight, and the next midnight would then be a day late. A
  // switch that failed is tried again after a minute, not at once over and over.
  const schedule = (afterMs?: number) => {
    const now = o.now();
    const ms = afterMs ?? (jakartaDay(now.toISOString()) === day ? msUntilNextJakartaDay(now) : 0);
    timer = setTimeout(() => void switchDay(), ms);
    timer.unref();
  };
  const report = (err: unknown) => o.onError(err instanceof Error ? err : new Error(String(err)));
  const switchDay = async () => {
    const nextDay = jakartaDay(o.now().toISOString());
    let next: RollStream;
    try {
      next = await openDay(o, nextDay);
    } catch (err) {
      report(err);
      if (!ended) schedule(o.retryMs ?? 60_000);
      return;
    }
    if (ended) {
      await endStream(next).catch(report);
      return;
    }
    const previous = file;
    file = next;
    day = nextDay;
    schedule();
    try {
      await endStream(previous);
      await pruneLogFiles(o.dir, o.base, o.keep);
    } catch (err) {
      report(err);
    }
  };
  schedule();
  return {
    current: () => file,
    async end() {
      ended = true;
      clearTimeout(timer);
      await endStream(file);
    },
  };
}
