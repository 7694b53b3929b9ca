/**
 * The pull feed across a restore, as docs/deploy.md describes it: a backup taken while the webhook
 * is busy and an ERP pulls; the ERP pulls and acknowledges past the backup; the copy is restored
 * (stop, replace, start); new payments arrive. The ERP, going on with its saved cursor, receives
 * every new event exactly once, sees nothing else but events it already holds (same event id), and
 * its acknowledgements mark nothing it did not pull. SQLite through `paylink backup` and a file swap;
 * PostgreSQL through the pg_dump line `paylink backup` prints and pg_restore into a fresh database.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/kysely/store.js';
import type { DatabaseConfig } from '../../src/config/env.js';
import type { OutboxEvent } from '../../src/model/delivery.js';
import { runCli } from '../helpers/cli.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { signedNotification } from '../helpers/notifications.js';
import { TEST_DATABASE_URL, tempDir } from '../helpers/stores.js';

const run = promisify(execFile);
const KEY = 'erp-key-restore-0123456789';
const ENV = {
  API_KEYS: KEY,
  log_user: 'ops',
  log_pass: 'restore-test-operator-pass',
  MIDTRANS_CONFIRM_NOTIFICATIONS: 'false',
};
const RATE_PER_S = 20;

interface Received {
  eventId: string;
  orderId: string;
  restored: boolean;
}

/** An ERP pulling like examples/erp-puller.mjs: a page, its events kept, the cursor saved, then acknowledged. */
function erpPuller() {
  let cursor: string | undefined;
  let restored = false;
  const received: Received[] = [];
  return {
    received,
    restoredNow: () => (restored = true),
    async step(url: string, waitS: number): Promise<number> {
      const q = new URLSearchParams({ limit: '100', wait: String(waitS), ...(cursor ? { after: cursor } : {}) });
      const res = await fetch(`${url}/api/erp-events?${q}`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(res.status, await res.clone().text()).toBe(200);
      const page = (await res.json()) as {
        data: Array<{ event: { event_id: string; order_id: string } }>;
        next_cursor: string;
      };
      for (const d of page.data) received.push({ eventId: d.event.event_id, orderId: d.event.order_id, restored });
      cursor = page.next_cursor;
      if (page.data.length > 0) {
        const ack = await fetch(`${url}/api/erp-events/ack`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ cursor }),
        });
        expect(ack.status).toBe(200);
      }
      return page.data.length;
    },
  };
}

async function notify(url: string, orderId: string): Promise<number> {
  const body = JSON.stringify(signedNotification({ order_id: orderId, transaction_status: 'settlement' }));
  const res = await fetch(`${url}/webhook/midtrans`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Notifications at RATE_PER_S, each for its own order, from before `during` starts until shortly after it ends. */
async function loadAround(url: string, prefix: string, during: () => Promise<void>): Promise<number[]> {
  const answers: Array<Promise<number>> = [];
  const t0 = performance.now();
  let stop = false;
  const pacer = (async () => {
    while (!stop) {
      const due = Math.floor(((performance.now() - t0) / 1000) * RATE_PER_S);
      while (answers.length < due) answers.push(notify(url, `${prefix}-${answers.length}`).catch(() => 0));
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  await new Promise((r) => setTimeout(r, 1_000));
  await during();
  await new Promise((r) => setTimeout(r, 500));
  stop = true;
  await pacer;
  return Promise.all(answers);
}

async function allEvents(database: DatabaseConfig): Promise<OutboxEvent[]> {
  const store = await openStore(database);
  try {
    const out: OutboxEvent[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.outbox.list({ limit: 500, cursor });
      out.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return out;
  } finally {
    await store.close();
  }
}

interface Setup {
  /** Environment of the service before and after the restore. */
  before: Record<string, string>;
  after: Record<string, string>;
  backup(): Promise<void>;
  /** With the service stopped: the backup becomes the database `after` names. */
  restore(): Promise<void>;
  restoredDatabase: DatabaseConfig;
}

describe('the pull feed after a backup is restored', () => {
  let service: ServiceProcess | undefined;
  const dirs: string[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    if (service) await stopServiceProcess(service, 'SIGKILL');
    service = undefined;
    for (const c of cleanups.splice(0)) await c();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  async function scenario(s: Setup): Promise<void> {
    service = await startServiceProcess({ ...ENV, ...s.before });
    const url = service.url;
    const erp = erpPuller();
    let pulling = true;
    const puller = (async () => {
      while (pulling) await erp.step(url, 1);
    })();
    const load = await loadAround(url, 'BK', s.backup);
    // Events the copy cannot hold: the ERP pulls and acknowledges them, its cursor moves past the backup.
    for (let i = 0; i < 40; i++) expect(await notify(url, `AFTER-${i}`)).toBe(200);
    pulling = false;
    await puller;
    while ((await erp.step(url, 0)) > 0);
    expect(load.filter((st) => st !== 200)).toEqual([]);
    expect(new Set(erp.received.map((r) => r.orderId)).size).toBe(load.length + 40);
    expect(await stopServiceProcess(service, 'SIGTERM')).toEqual({ code: 0, signal: null });

    await s.restore();
    service = await startServiceProcess({ ...ENV, ...s.after });
    erp.restoredNow();
    const fresh = Array.from({ length: 20 }, (_, i) => `NEW-${i}`);
    for (const id of fresh) expect(await notify(service.url, id)).toBe(200);
    const deadline = Date.now() + 20_000;
    const newOnes = () => erp.received.filter((r) => r.restored && r.orderId.startsWith('NEW-'));
    while (newOnes().length < fresh.length && Date.now() < deadline) await erp.step(service.url, 1);
    expect(await erp.step(service.url, 0)).toBe(0);
    expect(await stopServiceProcess(service, 'SIGTERM')).toEqual({ code: 0, signal: null });
    service = undefined;

    // Every new event exactly once.
    expect(
      newOnes()
        .map((r) => r.orderId)
        .sort(),
    ).toEqual([...fresh].sort());
    expect(new Set(newOnes().map((r) => r.eventId)).size).toBe(fresh.length);
    // Anything else after the restore is an event the ERP already held, with the same event id (it drops it by id).
    const before = new Set(erp.received.filter((r) => !r.restored).map((r) => r.eventId));
    const again = erp.received.filter((r) => r.restored && !r.orderId.startsWith('NEW-'));
    expect(again.filter((r) => !before.has(r.eventId))).toEqual([]);
    expect(new Set(again.map((r) => r.eventId)).size).toBe(again.length);
    // Nothing counts as delivered that the ERP did not pull, and with it all pulled, nothing is left undelivered.
    const pulled = new Set(erp.received.map((r) => r.eventId));
    const events = await allEvents(s.restoredDatabase);
    expect(events.filter((ev) => ev.state === 'delivered' && !pulled.has(ev.eventId)).map((ev) => ev.orderId)).toEqual(
      [],
    );
    expect(events.filter((ev) => ev.state !== 'delivered').map((ev) => ev.orderId)).toEqual([]);
    console.log(
      `FEED-RESTORE ${JSON.stringify({ load: load.length, pulled_before: before.size, pulled_again: again.length, new: newOnes().length, events_in_restored: events.length })}`,
    );
  }

  it('SQLite: paylink backup, the file swapped back in', async () => {
    const data = tempDir('paylink-feed-restore-');
    dirs.push(data);
    const env = { DATA_DIR: data, LOG_DIR: path.join(data, 'logs') };
    const copy = path.join(data, 'backups', 'paylink-copy.db');
    // A backup never creates directories (a missing one is usually an unmounted volume).
    fs.mkdirSync(path.dirname(copy), { mode: 0o700 });
    const live = path.join(data, 'paylink.db');
    await scenario({
      before: env,
      after: env,
      async backup() {
        const r = await runCli(['backup', copy], { env });
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
      },
      async restore() {
        for (const f of [live, `${live}-wal`, `${live}-shm`]) fs.rmSync(f, { force: true });
        fs.copyFileSync(copy, live);
      },
      restoredDatabase: { kind: 'sqlite', path: live },
    });
  }, 120_000);

  it.skipIf(!TEST_DATABASE_URL)(
    'PostgreSQL: the printed pg_dump line, restored with pg_restore into a fresh database',
    async () => {
      const base = new URL(TEST_DATABASE_URL ?? '');
      const suffix = `${process.pid}_${Date.now()}`;
      const dbUrl = (name: string) => Object.assign(new URL(base.href), { pathname: `/${name}` }).href;
      const admin = new pg.Client({ connectionString: base.href });
      await admin.connect();
      const live = `paylink_fl_${suffix}`;
      const restored = `paylink_fr_${suffix}`;
      await admin.query(`create database ${live}`);
      await admin.query(`create database ${restored}`);
      cleanups.push(async () => {
        await admin.query(`drop database if exists ${live} with (force)`);
        await admin.query(`drop database if exists ${restored} with (force)`);
        await admin.end();
      });
      const data = tempDir('paylink-feed-restore-pg-');
      dirs.push(data);
      const dump = path.join(data, 'paylink.dump');
      const env = { DATA_DIR: data, LOG_DIR: path.join(data, 'logs') };
      const printed = await runCli(['backup', dump], { env: { ...env, DATABASE_URL: dbUrl(live) } });
      const line = printed.stdout.trim();
      expect(line).toMatch(/pg_dump --format=custom .*> /);
      await scenario({
        before: { ...env, DATABASE_URL: dbUrl(live) },
        after: { ...env, DATABASE_URL: dbUrl(restored) },
        async backup() {
          await run('sh', ['-c', line], { env: { PATH: process.env.PATH ?? '', DATABASE_URL: dbUrl(live) } });
        },
        async restore() {
          await run('pg_restore', ['--no-owner', '--exit-on-error', '-d', dbUrl(restored), dump]);
        },
        restoredDatabase: { kind: 'postgres', url: dbUrl(restored) },
      });
    },
    120_000,
  );
});
