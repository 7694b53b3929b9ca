/**
 * Crash safety by repetition: 500 orders, each notified by the real simulator as pending and then
 * settlement (about 1,000 gateway notifications; the simulator resends what is not answered 2xx)
 * and their ERP deliveries, while the service process is SIGKILLed at 20+ seeded random moments
 * and started again each time on the same database and port. Afterwards: every notification the
 * service answered 2xx is in its database, every order is paid, every event reached the ERP in
 * order, no order's status moved backwards, each order was announced paid exactly once, and a
 * repeated delivery only ever repeats an event's `webhook-id` (never the same change under a new
 * id). The counts (notifications, events, repeated deliveries) depend on where the kills fell and
 * are reported, not asserted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { startGatewayLoad, type GatewayLoad } from './gateway-load.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { freePort, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { openStore } from '../../src/storage/kysely/store.js';
import { PAYMENT_STATUSES, statusRank } from '../../src/domain/reports/status-machine.js';
import {
  OP,
  SEED,
  chaosDatabase,
  postJson,
  reportFigures,
  scaled,
  seededRandom,
  sleep,
  waitUntil,
  type ChaosDatabase,
  START_MS,
  untilAllDelivered,
} from './support.js';

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

/**
 * Each life ends at a seeded random moment: once the process has ingested a random number of
 * notifications and has been up for a random 0.6–1.4 × its own start-up time (so every life makes
 * progress and the service is up about half the time: the gateway's five resends mostly find it),
 * plus a random delay; once the load is done, after a second or two of deliveries.
 */
async function killRepeatedly(
  env: Record<string, string>,
  random: () => number,
  load: GatewayLoad,
  life: { current(): ServiceProcess | undefined; down(): void; restarted(c: ServiceProcess): void },
): Promise<number> {
  let kills = 0;
  let startedInMs = 2_000;
  const perLife = (2 * ORDERS) / (KILLS + 1);
  for (let k = 0; k < KILLS; k++) {
    const svc = life.current();
    if (!svc) throw new Error('no service process');
    const ingested = countLines(svc, '"msg":"gateway report processed"');
    const target = Math.max(1, Math.round(perLife * (0.3 + random())));
    const upUntil = Date.now() + startedInMs * (0.6 + 0.8 * random());
    await waitUntil(
      'notifications ingested before the next kill',
      120_000,
      () => (ingested() >= target || load.done()) && Date.now() >= upUntil,
      10,
    ).catch((err: unknown) => {
      throw new Error(
        `${String(err)} (kill ${k}: ${ingested()} ingested, target ${target}, ${load.sent()} orders sent); service said: ${svc.output().slice(-4000)}`,
      );
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

/** The orders the load makes: `KILL-0` … `KILL-<ORDERS-1>`. */
const LOAD_ORDERS = Array.from({ length: ORDERS }, (_, i) => `KILL-${i}`);

function rankOf(status: string): number | undefined {
  const known = PAYMENT_STATUSES.find((p) => p === status);
  return known === undefined ? undefined : statusRank(known);
}

/** An order's events as the ERP first saw them, e.g. `pending@1 → paid@2`. */
const trail = (seen: Array<{ status: string; version: number }>) =>
  seen.length === 0 ? 'no event' : seen.map((s) => `${s.status}@${s.version}`).join(' → ');

/**
 * What the gateway, the database and the ERP hold at the end: the figures, and the offenders of
 * each guarantee by kind. How many notifications, events and repeated deliveries there are depends
 * on where the kills fell; the guarantees do not.
 */
async function measure(db: ChaosDatabase, notes: SimNotification[], gaveUp: SimNotification[], erp: ErpReceiver) {
  const store = await openStore(db.config);
  try {
    // 0. The scenario ran as designed: the gateway notified both changes of every order the load made.
    const notified = new Set(notes.map((n) => `${n.order_id} ${n.transaction_status}`));
    const notNotified = LOAD_ORDERS.flatMap((o) => [`${o} pending`, `${o} settlement`]).filter((k) => !notified.has(k));

    // 1. Every notification the service answered 2xx (or took by hand) is in its database.
    const rows = await store.db.selectFrom('notifications').select(['gateway_order_id', 'payload']).execute();
    const received = new Set(
      rows.map(
        (r) =>
          `${r.gateway_order_id} ${String((JSON.parse(r.payload) as { transaction_status?: unknown }).transaction_status)}`,
      ),
    );
    const answered = notes.filter(
      (n) => n.attempts.some((a) => a.status !== undefined && a.status >= 200 && a.status < 300) || gaveUp.includes(n),
    );
    const lostAfter200 = answered
      .filter((n) => !received.has(`${n.order_id} ${n.transaction_status}`))
      .map((n) => `${n.order_id} ${n.transaction_status}`);
    const fiveXX = notes.flatMap((n) => n.attempts).filter((a) => a.status !== undefined && a.status >= 500);

    // 2. Every order is paid; every event is delivered and reached the ERP, under a known id.
    const notPaid: string[] = [];
    for (const o of LOAD_ORDERS)
      if ((await store.transactions.findByGatewayOrderId(o))?.status !== 'paid') notPaid.push(o);
    const events = await store.db
      .selectFrom('outbox_events')
      .select(['seq', 'event_id', 'order_key', 'state'])
      .orderBy('seq')
      .execute();
    const accepted = erp.accepted().filter((d) => d.verified === true);
    const acceptedIds = new Set(accepted.map((d) => d.webhookId));
    const lostEvents = events
      .filter((e) => e.state !== 'delivered' || !acceptedIds.has(e.event_id))
      .map((e) => e.event_id);
    const eventIds = new Set(events.map((e) => e.event_id));
    const unknownIds = [...acceptedIds].filter((id) => id === undefined || !eventIds.has(id)).map(String);

    // 3. One id per change (an order's status never under two ids), and the ERP saw each order's
    // events first in the order they were written.
    const idsPerChange = new Map<string, Set<string>>();
    const firstSeen = new Map<string, Array<{ id: string; status: string; version: number }>>();
    for (const d of accepted) {
      const order = String(d.json?.order_id);
      const key = `${order} ${String(d.json?.status)}`;
      idsPerChange.set(key, (idsPerChange.get(key) ?? new Set()).add(String(d.webhookId)));
      const seen = firstSeen.get(order) ?? [];
      if (!seen.some((s) => s.id === String(d.webhookId)))
        seen.push({ id: String(d.webhookId), status: String(d.json?.status), version: Number(d.json?.status_version) });
      firstSeen.set(order, seen);
    }
    const changesUnderTwoIds = [...idsPerChange.entries()].filter(([, ids]) => ids.size > 1).map(([k]) => k);
    const written = new Map<string, string[]>();
    for (const e of events) written.set(e.order_key, [...(written.get(e.order_key) ?? []), e.event_id]);
    const outOfOrder = [...written.entries()]
      .filter(([order, ids]) => JSON.stringify(firstSeen.get(order)?.map((s) => s.id)) !== JSON.stringify(ids))
      .map(([o]) => o);

    // 4. An order's status never moves backwards: each event the ERP saw first has a higher rank
    // and a higher status_version than the one before (one gateway transaction per order here, so
    // none of the status machine's documented exceptions applies); and a paid order is announced
    // paid exactly once, under one event id.
    const backwards: string[] = [];
    const paidNotOnce: string[] = [];
    for (const [order, seen] of firstSeen) {
      const forward = seen.every((s, i) => {
        const before = seen[i - 1];
        const rank = rankOf(s.status);
        return (
          rank !== undefined &&
          (before === undefined || (rank > (rankOf(before.status) ?? Infinity) && s.version > before.version))
        );
      });
      if (!forward) backwards.push(`${order}: ${trail(seen)}`);
    }
    for (const o of LOAD_ORDERS) {
      const seen = firstSeen.get(o) ?? [];
      if (seen.filter((s) => s.status === 'paid').length !== 1) paidNotOnce.push(`${o}: ${trail(seen)}`);
    }

    const unverified = erp
      .accepted()
      .filter((d) => d.verified !== true)
      .map((d) => String(d.webhookId));
    const http500 = fiveXX.filter((a) => a.status === 500).map((a) => JSON.stringify(a));
    const otherOrders = new Set(notes.map((n) => n.order_id).filter((o) => !LOAD_ORDERS.includes(o)));
    return {
      figures: {
        orders: LOAD_ORDERS.length,
        notifications: notes.length,
        other_orders: otherOrders.size,
        answered_2xx: answered.length,
        gateway_gave_up: gaveUp.length,
        lost_after_200: lostAfter200.length,
        events: events.length,
        lost: lostEvents.length,
        duplicates: erp.accepted().length - acceptedIds.size,
        duplicates_new_id: changesUnderTwoIds.length,
        out_of_order: outOfOrder.length,
        backwards: backwards.length,
        paid_not_once: paidNotOnce.length,
        '5xx': fiveXX.length,
        http_500: http500.length,
        not_paid: notPaid.length,
      },
      problems: {
        notNotified,
        lostAfter200,
        notPaid,
        lostEvents,
        unknownIds,
        changesUnderTwoIds,
        outOfOrder,
        backwards,
        paidNotOnce,
        http500,
        unverified,
      },
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

  it(`${ORDERS} orders, ${KILLS} kills: nothing answered 200 is lost, every event delivered in order, statuses only forward, duplicates only under a used id`, async () => {
    const random = seededRandom(SEED + (kind === 'sqlite' ? 1 : 2));
    db = await chaosDatabase(kind);
    const erp: ErpReceiver = await startErpReceiver({ secret: ERP_SECRET });
    opened.push(erp);
    // Slow enough that deliveries are in flight at most kills.
    erp.setMode({ kind: 'slow', delayMs: 30 });
    // Notification retry gaps 2, 10, 30, 90, 210 min × 0.004 ≈ 0.5 s … 50 s: about 80 s of
    // resending across many lives, far longer than a restart takes, even on a loaded machine.
    const sim = await startSimulator({
      serverKey: SERVER_KEY,
      timeScale: 0.004,
      seed: SEED,
      notificationTimeoutMs: 10_000,
      logger: false,
    });
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
    expect(
      await postJson(`${current.url}/api/config`, { erp: { timeout_ms: 1_000 }, reconcile: { interval_s: 5 } }),
    ).toBe(200);

    let up = true;
    const load = startGatewayLoad({
      simBaseUrl: sim.baseUrl,
      serverKey: SERVER_KEY,
      orders: ORDERS,
      prefix: 'KILL',
      random,
      isUp: () => up,
    });
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
    await waitUntil(
      'every notification answered 2xx by the service',
      180_000,
      async () => (await simNotifications(sim)).every((n) => n.outcome === 'delivered' || n.outcome === 'failed'),
      500,
    );
    const notes = await simNotifications(sim);
    // What the gateway gave up on (its five resends all met a dead process) is resent by hand, as
    // from the gateway's dashboard: it was never answered 200, so the service owed nothing yet.
    const gaveUp = notes.filter((n) => n.outcome !== 'delivered');
    for (const n of gaveUp) {
      const svc = current;
      await waitUntil(
        `${n.order_id} ${n.transaction_status} resent by hand`,
        60_000,
        async () => (await postJson(`${svc.url}/webhook/midtrans`, n.payload, {})) === 200,
        500,
      );
    }
    await waitUntil(
      'a paid event accepted by the ERP for every order',
      180_000,
      () => {
        const paid = new Set(
          erp
            .accepted()
            .filter((d) => d.json?.status === 'paid')
            .map((d) => d.json?.order_id),
        );
        return LOAD_ORDERS.every((o) => paid.has(o));
      },
      250,
    );
    await untilAllDelivered(current.url, 120_000);
    expect(await stopServiceProcess(current, 'SIGTERM')).toEqual({ code: 0, signal: null });
    current = undefined;

    const m = await measure(db, notes, gaveUp, erp);
    reportFigures('repeated-kills', kind, { kills, ...m.figures });
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    expect(m.problems).toEqual({
      notNotified: [],
      lostAfter200: [],
      notPaid: [],
      lostEvents: [],
      unknownIds: [],
      changesUnderTwoIds: [],
      outOfOrder: [],
      backwards: [],
      paidNotOnce: [],
      http500: [],
      unverified: [],
    });
  }, 900_000);
});
