/**
 * Crash safety by repetition: 1,000 gateway notifications (500 orders × pending + settlement, from
 * the real simulator, which resends what is not answered 2xx) and their ERP deliveries, while the
 * service process is SIGKILLed at 20+ seeded random moments and started again each time on the
 * same database and port. Afterwards: every notification the service answered 2xx is in its
 * database, every order is paid, every event reached the ERP in order, and a repeated delivery
 * only ever repeats an event's `webhook-id` (never the same change under a new id).
 */
import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { freePort, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { openStore } from '../../src/storage/kysely-store.js';
import { OP, SEED, chaosDatabase, postJson, reportFigures, scaled, seededRandom, sleep, waitUntil, type ChaosDatabase, START_MS, untilAllDelivered } from './support.js';

const SERVER_KEY = 'SB-Mid-server-chaos-kill-key';
const ERP_SECRET = 'chaos-erp-secret-0123456789abcdef';
const ORDERS = scaled(500, 10);
const KILLS = scaled(21, 3);

interface SimNotification {
  order_id: string;
  transaction_status: string;
  outcome: string;
  attempts: Array<{ status?: number; error?: string }>;
  payload: Record<string, unknown>;
}

/** Counts the lines containing `marker` the process writes from now on. */
function countLines(c: ServiceProcess, marker: string): () => number {
  let n = 0;
  let carry = '';
  c.proc.stdout?.on('data', (chunk: Buffer) => {
    const text = carry + chunk.toString('utf8');
    n += text.split(marker).length - 1;
    carry = text.slice(-marker.length + 1);
  });
  return () => n;
}

async function simNotifications(sim: RunningSimulator): Promise<SimNotification[]> {
  const res = await fetch(`${sim.baseUrl}/_sim/notifications`);
  const body = (await res.json()) as { notifications: SimNotification[] };
  return body.notifications;
}

async function gatewayPost(sim: RunningSimulator, p: string, body: unknown, auth = true): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (auth) headers.authorization = `Basic ${Buffer.from(`${SERVER_KEY}:`).toString('base64')}`;
  const res = await fetch(`${sim.baseUrl}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

interface Load {
  done(): boolean;
  sent(): number;
  errors: string[];
  finished: Promise<unknown>;
}

/** The gateway's side: orders charged and paid at the simulator (which notifies), while the service is up. */
function startLoad(sim: RunningSimulator, random: () => number, isUp: () => boolean): Load {
  let next = 0;
  let done = false;
  const errors: string[] = [];
  const lane = async () => {
    while (next < ORDERS) {
      while (!isUp()) await sleep(20);
      const i = next++;
      const orderId = `KILL-${i}`;
      const charged = await gatewayPost(sim, '/v2/charge', { payment_type: 'bank_transfer', transaction_details: { order_id: orderId, gross_amount: 10_000 + i }, bank_transfer: { bank: 'bca' } });
      if (charged !== 200 && charged !== 201) errors.push(`${orderId} charge ${charged}`);
      await sleep(random() * 60);
      const paid = await gatewayPost(sim, `/_sim/transactions/${orderId}/pay`, {}, false);
      if (paid !== 200) errors.push(`${orderId} pay ${paid}`);
    }
  };
  const finished = Promise.all(Array.from({ length: 4 }, lane)).finally(() => (done = true));
  return { done: () => done, sent: () => next, errors, finished };
}

/**
 * Each life ends at a seeded random moment: once the process has ingested a random number of
 * notifications and has been up for a random 0.6–1.4 × its own start-up time (so every life makes
 * progress and the service is up about half the time: the gateway's five resends mostly find it),
 * plus a random delay; once the load is done, after a second or two of deliveries.
 */
async function killRepeatedly(env: Record<string, string>, random: () => number, load: Load, life: { current(): ServiceProcess | undefined; down(): void; restarted(c: ServiceProcess): void }): Promise<number> {
  let kills = 0;
  let startedInMs = 2_000;
  const perLife = (2 * ORDERS) / (KILLS + 1);
  for (let k = 0; k < KILLS; k++) {
    const svc = life.current();
    if (!svc) throw new Error('no service process');
    const ingested = countLines(svc, '"msg":"gateway report processed"');
    const target = Math.max(1, Math.round(perLife * (0.3 + random())));
    const upUntil = Date.now() + startedInMs * (0.6 + 0.8 * random());
    await waitUntil('notifications ingested before the next kill', 120_000, () => (ingested() >= target || load.done()) && Date.now() >= upUntil, 10).catch((err: unknown) => {
      throw new Error(`${String(err)} (kill ${k}: ${ingested()} ingested, target ${target}, ${load.sent()} orders sent); service said: ${svc.output().slice(-4000)}`);
    });
    await sleep(load.done() ? 1_000 + random() * 1_000 : random() * 300);
    life.down();
    await stopServiceProcess(svc, 'SIGKILL');
    kills++;
    const t0 = Date.now();
    life.restarted(await startServiceProcess(env, START_MS));
    startedInMs = Date.now() - t0;
  }
  return kills;
}

/** What the database and the ERP hold at the end: the figures, and the offenders by kind. */
async function measure(db: ChaosDatabase, notes: SimNotification[], gaveUp: SimNotification[], erp: ErpReceiver) {
  const store = await openStore(db.config);
  try {
    // 1. Every notification the service answered 2xx (or took by hand) is in its database.
    const rows = await store.db.selectFrom('notifications').select(['gateway_order_id', 'payload']).execute();
    const received = new Set(rows.map((r) => `${r.gateway_order_id} ${String((JSON.parse(r.payload) as { transaction_status?: unknown }).transaction_status)}`));
    const answered = notes.filter((n) => n.attempts.some((a) => a.status !== undefined && a.status >= 200 && a.status < 300) || gaveUp.includes(n));
    const lostAfter200 = answered.filter((n) => !received.has(`${n.order_id} ${n.transaction_status}`)).map((n) => `${n.order_id} ${n.transaction_status}`);
    const fiveXX = notes.flatMap((n) => n.attempts).filter((a) => a.status !== undefined && a.status >= 500);

    // 2. Every order is paid; every event is delivered and reached the ERP, under a known id.
    const notPaid: string[] = [];
    for (let i = 0; i < ORDERS; i++) if ((await store.transactions.findByGatewayOrderId(`KILL-${i}`))?.status !== 'paid') notPaid.push(`KILL-${i}`);
    const events = await store.db.selectFrom('outbox_events').select(['seq', 'event_id', 'order_key', 'state']).orderBy('seq').execute();
    const accepted = erp.accepted().filter((d) => d.verified === true);
    const acceptedIds = new Set(accepted.map((d) => d.webhookId));
    const lostEvents = events.filter((e) => e.state !== 'delivered' || !acceptedIds.has(e.event_id)).map((e) => e.event_id);
    const eventIds = new Set(events.map((e) => e.event_id));
    const unknownIds = [...acceptedIds].filter((id) => id === undefined || !eventIds.has(id)).map(String);

    // 3. One id per change (an order's status never under two ids), and the ERP saw each order's
    // events first in the order they were written.
    const idsPerChange = new Map<string, Set<string>>();
    const firstSeen = new Map<string, string[]>();
    for (const d of accepted) {
      const key = `${String(d.json?.order_id)} ${String(d.json?.status)}`;
      idsPerChange.set(key, (idsPerChange.get(key) ?? new Set()).add(String(d.webhookId)));
      const seen = firstSeen.get(String(d.json?.order_id)) ?? [];
      if (!seen.includes(String(d.webhookId))) seen.push(String(d.webhookId));
      firstSeen.set(String(d.json?.order_id), seen);
    }
    const changesUnderTwoIds = [...idsPerChange.entries()].filter(([, ids]) => ids.size > 1).map(([k]) => k);
    const written = new Map<string, string[]>();
    for (const e of events) written.set(e.order_key, [...(written.get(e.order_key) ?? []), e.event_id]);
    const outOfOrder = [...written.entries()].filter(([order, ids]) => JSON.stringify(firstSeen.get(order)) !== JSON.stringify(ids)).map(([o]) => o);
    const unverified = erp.accepted().filter((d) => d.verified !== true).map((d) => String(d.webhookId));
    const http500 = fiveXX.filter((a) => a.status === 500).map((a) => JSON.stringify(a));
    return {
      figures: { notifications: notes.length, answered_2xx: answered.length, gateway_gave_up: gaveUp.length, lost_after_200: lostAfter200.length, events: events.length, lost: lostEvents.length, duplicates: erp.accepted().length - acceptedIds.size, duplicates_new_id: changesUnderTwoIds.length, out_of_order: outOfOrder.length, '5xx': fiveXX.length, http_500: http500.length, not_paid: notPaid.length },
      problems: { lostAfter200, notPaid, lostEvents, unknownIds, changesUnderTwoIds, outOfOrder, http500, unverified },
    };
  } finally {
    await store.close();
  }
}

describe.each(DATABASE_KINDS)('repeated SIGKILL under load (%s)', (kind) => {
  const opened: Array<{ close(): Promise<void> }> = [];
  let current: ServiceProcess | undefined;
  let db: ChaosDatabase | undefined;

  afterEach(async () => {
    if (current) await stopServiceProcess(current, 'SIGKILL');
    current = undefined;
    for (const o of opened.splice(0).reverse()) await o.close();
    await db?.dispose();
    db = undefined;
  });

  it(`${ORDERS * 2} notifications, ${KILLS} kills: nothing answered 200 is lost, every event delivered, duplicates only under a used id`, async () => {
    const random = seededRandom(SEED + (kind === 'sqlite' ? 1 : 2));
    db = await chaosDatabase(kind);
    const erp: ErpReceiver = await startErpReceiver({ secret: ERP_SECRET });
    opened.push(erp);
    // Slow enough that deliveries are in flight at most kills.
    erp.setMode({ kind: 'slow', delayMs: 30 });
    // Notification retry gaps 2, 10, 30, 90, 210 min × 0.004 ≈ 0.5 s … 50 s: about 80 s of
    // resending across many lives, far longer than a restart takes, even on a loaded machine.
    const sim = await startSimulator({ serverKey: SERVER_KEY, timeScale: 0.004, seed: SEED, notificationTimeoutMs: 10_000, logger: false });
    opened.push(sim);
    const port = await freePort();
    sim.setNotificationUrl(`http://127.0.0.1:${port}/webhook/midtrans`);
    const env = {
      ...db.env,
      PORT: String(port),
      DATA_DIR: db.dir,
      LOG_DIR: path.join(db.dir, 'logs'),
      log_user: OP.user,
      log_pass: OP.pass,
      // A real-mode gateway (status confirmation on) whose hosts are the simulator.
      MIDTRANS_MODE: 'sandbox',
      MIDTRANS_SERVER_KEY: SERVER_KEY,
      MIDTRANS_API_BASE_URL: sim.baseUrl,
      MIDTRANS_APP_BASE_URL: sim.baseUrl,
      ERP_NOTIFY_URL: erp.url,
      ERP_WEBHOOK_SECRET: ERP_SECRET,
    };

    current = await startServiceProcess(env, START_MS);
    // Short ERP timeout → short leases (PostgreSQL re-claims after the lease); unverified
    // notifications are rechecked every 5 s instead of 5 min.
    expect(await postJson(`${current.url}/api/config`, { erp: { timeout_ms: 1_000 }, reconcile: { interval_s: 5 } })).toBe(200);

    let up = true;
    const load = startLoad(sim, random, () => up);
    const kills = await killRepeatedly(env, random, load, {
      current: () => current,
      down: () => (up = false),
      restarted: (c) => {
        current = c;
        up = true;
      },
    });
    await load.finished;
    expect(load.errors).toEqual([]);

    // The gateway's resending settles every notification; then the outbox drains.
    await waitUntil('every notification answered 2xx by the service', 180_000, async () => (await simNotifications(sim)).every((n) => n.outcome === 'delivered' || n.outcome === 'failed'), 500);
    const notes = await simNotifications(sim);
    // What the gateway gave up on (its five resends all met a dead process) is resent by hand, as
    // from the gateway's dashboard: it was never answered 200, so the service owed nothing yet.
    const gaveUp = notes.filter((n) => n.outcome !== 'delivered');
    for (const n of gaveUp) {
      const svc = current;
      await waitUntil(`${n.order_id} ${n.transaction_status} resent by hand`, 60_000, async () => (await postJson(`${svc.url}/webhook/midtrans`, n.payload, {})) === 200, 500);
    }
    await waitUntil('a paid event accepted by the ERP for every order', 180_000, () => new Set(erp.accepted().filter((d) => d.json?.status === 'paid').map((d) => d.json?.order_id)).size >= ORDERS, 250);
    await untilAllDelivered(current.url, 120_000);
    expect(await stopServiceProcess(current, 'SIGTERM')).toEqual({ code: 0, signal: null });
    current = undefined;

    const m = await measure(db, notes, gaveUp, erp);
    reportFigures('repeated-kills', kind, { kills, ...m.figures });
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    expect(notes).toHaveLength(ORDERS * 2);
    expect(m.problems).toEqual({ lostAfter200: [], notPaid: [], lostEvents: [], unknownIds: [], changesUnderTwoIds: [], outOfOrder: [], http500: [], unverified: [] });
  }, 900_000);
});
