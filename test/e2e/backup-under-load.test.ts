/**
 * A backup taken while the webhook takes 200 notifications a second restores to a database that
 * opens, passes its integrity check and the store's reads, and holds every notification that was
 * answered 200 before the backup began. SQLite through `paylink backup`; PostgreSQL through the
 * pg_dump line `paylink backup` prints, restored with pg_restore.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/kysely/store.js';
import type { DatabaseConfig } from '../../src/config/env.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { signedNotification } from '../helpers/notifications.js';
import { TEST_DATABASE_URL, tempDir } from '../helpers/stores.js';

const run = promisify(execFile);
const RATE_PER_S = 200;

interface Sent {
  orderId: string;
  status?: number;
  answeredAt?: number;
}

/**
 * Sends signed notifications at RATE_PER_S to `url` until `until` resolves (at most `maxMs`), each
 * for its own order; `during` runs once `startAfterMs` of load has passed and its start is noted.
 */
async function loadAround(
  url: string,
  prefix: string,
  during: () => Promise<CliResult>,
  o = { startAfterMs: 1_500, tailMs: 500, maxMs: 20_000 },
) {
  const sent: Sent[] = [];
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  let stop = false;
  let i = 0;
  const fire = () => {
    const entry: Sent = { orderId: `${prefix}-${i++}` };
    sent.push(entry);
    const body = JSON.stringify(signedNotification({ order_id: entry.orderId, transaction_status: 'settlement' }));
    pending.push(
      fetch(`${url}/webhook/midtrans`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(10_000),
      })
        .then(async (res) => {
          await res.arrayBuffer();
          entry.status = res.status;
          entry.answeredAt = performance.now();
        })
        .catch(() => undefined),
    );
  };
  // Paced by elapsed time, not by timer ticks, so a late tick sends what is due.
  const pacer = (async () => {
    while (!stop && performance.now() - t0 < o.maxMs) {
      const due = Math.floor(((performance.now() - t0) / 1000) * RATE_PER_S);
      while (i < due) fire();
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  await new Promise((r) => setTimeout(r, o.startAfterMs));
  const backupStartedAt = performance.now();
  const result = await during();
  const backupEndedAt = performance.now();
  await new Promise((r) => setTimeout(r, o.tailMs));
  stop = true;
  await pacer;
  await Promise.all(pending);
  const elapsedS = (performance.now() - t0) / 1000;
  const ok = sent.filter((s) => s.status === 200);
  const before = ok.filter((s) => (s.answeredAt ?? Infinity) <= backupStartedAt);
  const during200 = ok.filter(
    (s) => (s.answeredAt ?? 0) > backupStartedAt && (s.answeredAt ?? 0) <= backupEndedAt,
  ).length;
  return {
    result,
    sent,
    ok,
    before,
    during200,
    backupMs: Math.round(backupEndedAt - backupStartedAt),
    rate: Math.round(ok.length / elapsedS),
  };
}

async function expectReadable(database: DatabaseConfig, orderIds: string[]) {
  const store = await openStore(database);
  try {
    await store.ping();
    expect(await store.migrationStatus()).toMatchObject({ pending: [] });
    const missing: string[] = [];
    for (const id of orderIds) {
      const found = await store.notifications.listForOrder(id);
      if (found.length === 0 || found[0]?.result !== 'applied') missing.push(id);
    }
    expect(missing, 'notifications answered 200 before the backup began, missing from the restored copy').toEqual([]);
  } finally {
    await store.close();
  }
}

const OPERATOR = { log_user: 'ops', log_pass: 'backup-test-operator-pass', MIDTRANS_CONFIRM_NOTIFICATIONS: 'false' };

describe('backup while the webhook is under load', () => {
  let service: ServiceProcess | undefined;
  const dirs: string[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    if (service) await stopServiceProcess(service, 'SIGKILL');
    service = undefined;
    for (const c of cleanups.splice(0)) await c();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('SQLite: paylink backup gives a copy that passes integrity_check and holds every notification answered before it began', async () => {
    const data = tempDir('paylink-backup-');
    dirs.push(data);
    const env = { DATA_DIR: data, LOG_DIR: path.join(data, 'logs') };
    service = await startServiceProcess({ ...env, ...OPERATOR });
    const url = service.url;
    const copy = path.join(data, 'backups', 'paylink-copy.db');
    // A backup never creates directories (a missing one is usually an unmounted volume).
    fs.mkdirSync(path.dirname(copy), { mode: 0o700 });
    const load = await loadAround(url, 'BK', () => runCli(['backup', copy], { env }));
    expect(load.result.stderr).toBe('');
    expect(load.result.code).toBe(0);
    expect(load.result.stdout).toMatch(/written \(\d+ bytes, integrity ok/);
    // Enough answered before the backup for the check to mean something, even on a loaded machine.
    expect(load.before.length).toBeGreaterThanOrEqual(50);
    expect(load.ok.length, 'every notification of the load answered 200').toBe(load.sent.length);

    const db = new SqliteDatabase(copy, { readonly: true, fileMustExist: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const inCopy = db.prepare('select count(*) as n from notifications').get() as { n: number };
    db.close();
    expect((fs.statSync(copy).mode & 0o777).toString(8)).toBe('600');

    // Restore: the copy becomes a fresh DATA_DIR's database.
    const restored = tempDir('paylink-restored-');
    dirs.push(restored);
    fs.copyFileSync(copy, path.join(restored, 'paylink.db'));
    await expectReadable(
      { kind: 'sqlite', path: path.join(restored, 'paylink.db') },
      load.before.map((s) => s.orderId),
    );
    console.log(
      `BACKUP-FIGURES sqlite ${JSON.stringify({ rate_per_s: load.rate, answered: load.ok.length, answered_before_backup: load.before.length, answered_during_backup: load.during200, rows_in_copy: inCopy.n, backup_command_ms: load.backupMs, copy_bytes: fs.statSync(copy).size })}`,
    );
  });

  it.skipIf(!TEST_DATABASE_URL)(
    'PostgreSQL: the pg_dump line paylink backup prints, restored with pg_restore, holds every notification answered before it began',
    async () => {
      const base = new URL(TEST_DATABASE_URL ?? '');
      const suffix = `${process.pid}_${Date.now()}`;
      const dbUrl = (name: string) => Object.assign(new URL(base.href), { pathname: `/${name}` }).href;
      const admin = new pg.Client({ connectionString: base.href });
      await admin.connect();
      const live = `paylink_bk_${suffix}`;
      const restoredDb = `paylink_rs_${suffix}`;
      await admin.query(`create database ${live}`);
      await admin.query(`create database ${restoredDb}`);
      cleanups.push(async () => {
        await admin.query(`drop database if exists ${live} with (force)`);
        await admin.query(`drop database if exists ${restoredDb} with (force)`);
        await admin.end();
      });
      const data = tempDir('paylink-backup-pg-');
      dirs.push(data);
      const env = { DATA_DIR: data, LOG_DIR: path.join(data, 'logs'), DATABASE_URL: dbUrl(live) };
      service = await startServiceProcess({ ...env, ...OPERATOR });
      const dump = path.join(data, 'paylink.dump');
      const printed = await runCli(['backup', dump], { env });
      expect(printed.code).toBe(1);
      const line = printed.stdout.trim();
      expect(line).toMatch(/^\(umask 077 && set -C && pg_dump /);
      const load = await loadAround(service.url, 'PGBK', async () => {
        const r = await run('sh', ['-c', line], { env: { PATH: process.env.PATH ?? '', DATABASE_URL: dbUrl(live) } });
        return { code: 0, stdout: r.stdout, stderr: r.stderr };
      });
      expect(load.before.length).toBeGreaterThanOrEqual(50);
      expect(load.ok.length).toBe(load.sent.length);
      await run('pg_restore', ['--no-owner', '--exit-on-error', '-d', dbUrl(restoredDb), dump]);
      await expectReadable(
        { kind: 'postgres', url: dbUrl(restoredDb) },
        load.before.map((s) => s.orderId),
      );
      console.log(
        `BACKUP-FIGURES postgres ${JSON.stringify({ rate_per_s: load.rate, answered: load.ok.length, answered_before_backup: load.before.length, answered_during_backup: load.during200, pg_dump_ms: load.backupMs, dump_bytes: fs.statSync(dump).size })}`,
      );
    },
  );
});
