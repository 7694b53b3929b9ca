/**
 * Log files are named by the Jakarta (WIB) date, like every other date paylink writes, whatever the
 * process's time zone: the day's file changes at Jakarta midnight (17:00 UTC).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeLogger, createLogger, flushLogger } from '../../src/platform/logging/logger.js';
import { msUntilNextJakartaDay, openDailyFile } from '../../src/platform/logging/daily-file.js';

const dirs: string[] = [];
const fresh = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-log-days-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A clock running at real speed from `start`. */
const clockFrom = (start: string) => {
  const offset = Date.parse(start) - Date.now();
  return () => new Date(Date.now() + offset);
};

describe('log file days', () => {
  it('the next Jakarta midnight is at 17:00 UTC', () => {
    expect(msUntilNextJakartaDay(new Date('2026-11-27T16:59:59.000Z'))).toBe(1000);
    expect(msUntilNextJakartaDay(new Date('2026-11-27T17:00:00.000Z'))).toBe(86_400_000);
    expect(msUntilNextJakartaDay(new Date('2026-11-27T00:00:00.000Z'))).toBe(17 * 3_600_000);
  });

  it('names the file by the Jakarta date when it differs from the UTC date', async () => {
    const dir = fresh();
    const log = await createLogger({
      level: 'info',
      logDir: dir,
      stdout: false,
      now: clockFrom('2026-11-27T18:30:00Z'),
    });
    log.info('late evening in UTC, early morning in Jakarta');
    await closeLogger(log);
    expect(fs.readdirSync(dir)).toEqual(['paylink.2026-11-28.1.log']);
  });

  it("moves to the next day's file at Jakarta midnight, each line in the file of its day", async () => {
    const dir = fresh();
    const log = await createLogger({
      level: 'info',
      logDir: dir,
      stdout: false,
      now: clockFrom('2026-11-27T16:59:59.800Z'),
    });
    log.info('before midnight');
    await flushLogger(log);
    await new Promise((r) => setTimeout(r, 600));
    log.info('after midnight');
    await closeLogger(log);
    const files = fs.readdirSync(dir).sort();
    expect(files).toEqual(['paylink.2026-11-27.1.log', 'paylink.2026-11-28.1.log']);
    const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
    expect(read('paylink.2026-11-27.1.log')).toContain('before midnight');
    expect(read('paylink.2026-11-27.1.log')).not.toContain('after midnight');
    expect(read('paylink.2026-11-28.1.log')).toContain('after midnight');
  });

  it('moves to the next day at once when midnight passed while the first file was being opened', async () => {
    const dir = fresh();
    // The first reading (the file's day) is before midnight; every later one after it, as on a
    // machine slow enough that opening the file and pruning the old ones took past midnight.
    let reads = 0;
    const late = clockFrom('2026-11-27T17:00:00.100Z');
    const log = await createLogger({
      level: 'info',
      logDir: dir,
      stdout: false,
      now: () => (reads++ === 0 ? new Date('2026-11-27T16:59:59.900Z') : late()),
    });
    await new Promise((r) => setTimeout(r, 100));
    log.info('after midnight');
    await closeLogger(log);
    const files = fs.readdirSync(dir).sort();
    expect(files).toEqual(['paylink.2026-11-27.1.log', 'paylink.2026-11-28.1.log']);
    expect(fs.readFileSync(path.join(dir, 'paylink.2026-11-28.1.log'), 'utf8')).toContain('after midnight');
  });

  it("a new day's file that cannot be opened is reported, the old file kept, and tried again after a pause", async () => {
    const dir = fresh();
    // A directory where the new day's file would go: opening it fails, even as root.
    const blocked = path.join(dir, 'paylink.2026-11-28.1.log');
    fs.mkdirSync(blocked);
    const errors: Error[] = [];
    const daily = await openDailyFile({
      dir,
      base: 'paylink',
      size: '20m',
      keep: 10,
      now: clockFrom('2026-11-27T16:59:59.900Z'),
      onError: (err) => errors.push(err),
      retryMs: 300,
    });
    const first = daily.current();
    const started = Date.now();
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 100 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
    };
    // Midnight at 100 ms, then one try per 300 ms: tried again, and not in a loop.
    await until(() => errors.length >= 2);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.length).toBeLessThanOrEqual(2 + Math.ceil((Date.now() - started) / 300));
    expect(daily.current()).toBe(first);
    fs.rmdirSync(blocked);
    await until(() => daily.current() !== first);
    expect(daily.current()).not.toBe(first);
    await daily.end();
    expect(fs.readdirSync(dir).sort()).toEqual(['paylink.2026-11-27.1.log', 'paylink.2026-11-28.1.log']);
  });
});
