/**
 * The service as a real child process (`node --import tsx src/server.ts`), SIGKILLed while ERP
 * deliveries are in flight, then started again on the same database: every event reaches the ERP
 * (at least once; only events that were in flight at the kill may arrive twice); and SIGKILLed
 * while notifications are being ingested: once the gateway resends, every order has one event.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import fs from 'node:fs';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { DATABASE_KINDS, TEST_DATABASE_URL, tempDir } from '../helpers/stores.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { signedNotification } from '../helpers/notifications.js';
import { openStore } from '../../src/storage/kysely/store.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import type { DatabaseConfig } from '../../src/config/env.js';

const SECRET = 'crash-test-secret-0123456789abcdef';
const OP = { user: 'ops', pass: 'crash-test-operator-pass' };
const EVENTS = 60;

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

async function untilAllDelivered(
  url: string,
  auth: Record<string, string>,
  timeoutMs: number,
  expected = EVENTS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/api/deliveries?limit=500`, { headers: auth });
    const body = (await res.json()) as { items?: { status: string }[] };
    const items = body.items ?? [];
    if (items.length === expected && items.every((d) => d.status === 'delivered')) return;
    last = `${res.status}: ${items.filter((d) => d.status === 'delivered').length}/${items.length} delivered`;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`not every event was recorded as delivered within ${timeoutMs} ms (${last})`);
}

describe.each(DATABASE_KINDS)('SIGKILL during deliveries, then restart (%s)', (kind) => {
  let erp: ErpReceiver;
  let dir: string;
  let dbEnv: Record<string, string>;
  let dbConfig: DatabaseConfig;
  let pgName: string | undefined;
  const children: ServiceProcess[] = [];

  beforeEach(async () => {
    erp = await startErpReceiver({ secret: SECRET });
    dir = tempDir('paylink-crash-');
    if (kind === 'postgres' && TEST_DATABASE_URL) {
      pgName = `crash_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`create database ${pgName}`);
      await admin.end();
      const u = new URL(TEST_DATABASE_URL);
      u.pathname = `/${pgName}`;
      dbEnv = { DATABASE_URL: u.toString() };
      dbConfig = { kind: 'postgres', url: u.toString() };
    } else {
      dbEnv = {};
      dbConfig = { kind: 'sqlite', path: path.join(dir, 'paylink.db') };
    }
  });
  afterEach(async () => {
    for (const c of children.splice(0)) await stopServiceProcess(c, 'SIGKILL');
    await erp.close();
    fs.rmSync(dir, { recursive: true, force: true });
    if (pgName && TEST_DATABASE_URL) {
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`drop database if exists ${pgName} with (force)`);
      await admin.end();
    }
  });

  /** Both processes of a test share the database, the data directory and the ERP. */
  const serviceEnv = () => ({
    ...dbEnv,
    MIDTRANS_CONFIRM_NOTIFICATIONS: 'false',
    log_user: OP.user,
    log_pass: OP.pass,
    DATA_DIR: dir,
    LOG_DIR: path.join(dir, 'logs'),
    ERP_NOTIFY_URL: erp.url,
    ERP_WEBHOOK_SECRET: SECRET,
  });

  it('nothing is lost', async () => {
    const env = serviceEnv();
    // slow answers keep several deliveries in flight at the moment of the kill
    erp.setMode({ kind: 'slow', delayMs: 150 });
    const first = await startServiceProcess(env);
    children.push(first);
    const auth = { authorization: `Basic ${Buffer.from(`${OP.user}:${OP.pass}`).toString('base64')}` };
    expect(await post(`${first.url}/api/config`, { erp: { timeout_ms: 1_000 } }, auth)).toBe(200);
    for (let i = 0; i < EVENTS; i++) {
      expect(
        await post(
          `${first.url}/webhook/midtrans`,
          signedNotification({ order_id: `CRASH-${i}`, transaction_status: 'settlement' }),
        ),
      ).toBe(200);
    }
    await erp.waitFor((r) => r.deliveries.length >= 10, 15_000);
    await stopServiceProcess(first, 'SIGKILL');
    const atKill = erp.accepted().length;
    expect(atKill).toBeLessThan(EVENTS);

    const second = await startServiceProcess(env);
    children.push(second);
    await erp.waitFor((r) => new Set(r.accepted().map((d) => d.webhookId)).size >= EVENTS, 25_000);
    // The ERP can hold every id before the store does: an event the first process sent but never
    // recorded stays leased until its lease runs out, then it is delivered (again) and recorded.
    await untilAllDelivered(second.url, auth, 25_000);
    expect(await stopServiceProcess(second, 'SIGTERM')).toEqual({ code: 0, signal: null });

    const store = await openStore(dbConfig);
    try {
      const all = (await store.outbox.list({ limit: 500 })).items;
      expect(all).toHaveLength(EVENTS);
      expect(all.every((ev) => ev.state === 'delivered')).toBe(true);
      const acceptedIds = new Set(erp.accepted().map((d) => d.webhookId));
      expect(all.every((ev) => acceptedIds.has(ev.eventId))).toBe(true);
      const duplicates = erp.accepted().length - acceptedIds.size;
      // only what was in flight when the process died can arrive twice
      expect(duplicates).toBeLessThanOrEqual(16);
      expect(erp.accepted().every((d) => d.verified === true)).toBe(true);
      console.log(
        `[crash ${kind}] ${atKill} delivered before SIGKILL; ${duplicates} re-delivered after restart; ${EVENTS} events, none lost`,
      );
    } finally {
      await store.close();
    }
  }, 90_000);

  it('SIGKILL while notifications are being ingested: after the gateway resends, every order has exactly one event', async () => {
    const ORDERS = 150;
    const env = serviceEnv();
    const notifications = Array.from({ length: ORDERS }, (_, i) =>
      signedNotification({
        order_id: `INGEST-${i}`,
        transaction_status: 'settlement',
        transaction_id: `ingest-tx-${i}`,
      }),
    );
    const first = await startServiceProcess(env);
    children.push(first);
    const answered = new Set<number>();
    let next = 0;
    let killed: Promise<unknown> | undefined;
    const lane = async () => {
      while (next < ORDERS) {
        const i = next++;
        const status = await post(`${first.url}/webhook/midtrans`, notifications[i]).catch(() => 0);
        if (status === 200) answered.add(i);
        if (answered.size >= 40) killed ??= stopServiceProcess(first, 'SIGKILL');
      }
    };
    await Promise.all(Array.from({ length: 12 }, lane));
    await killed;
    expect(answered.size).toBeLessThan(ORDERS);

    // The gateway resends what was not answered 200 — and, being at least once, some of what was.
    const second = await startServiceProcess(env);
    children.push(second);
    for (const n of notifications) expect(await post(`${second.url}/webhook/midtrans`, n)).toBe(200);
    const auth = { authorization: `Basic ${Buffer.from(`${OP.user}:${OP.pass}`).toString('base64')}` };
    await untilAllDelivered(second.url, auth, 30_000, ORDERS);
    expect(await stopServiceProcess(second, 'SIGTERM')).toEqual({ code: 0, signal: null });

    const store = await openStore(dbConfig);
    try {
      const events = (await store.outbox.list({ limit: 500 })).items;
      const perOrder = new Map<string, number>();
      for (const ev of events) perOrder.set(String(ev.orderId), (perOrder.get(String(ev.orderId)) ?? 0) + 1);
      expect(perOrder.size).toBe(ORDERS);
      expect([...perOrder.values()].every((n) => n === 1)).toBe(true);
      for (let i = 0; i < ORDERS; i++)
        expect((await store.transactions.findByGatewayOrderId(`INGEST-${i}`))?.status, `INGEST-${i}`).toBe('paid');
      console.log(
        `[crash ${kind}] ingestion: ${answered.size} of ${ORDERS} answered before SIGKILL; after resending, ${events.length} events, one per order`,
      );
    } finally {
      await store.close();
    }
  }, 90_000);
});
