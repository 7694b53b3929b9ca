/**
 * PostgreSQL goes away under load and comes back (through a loopback TCP proxy that cuts every
 * connection and drops new ones, so the shared cluster is never restarted): while it is away the
 * webhook answers 503 (the gateway retries), never 500; it recovers by itself, without a restart;
 * every notification the gateway resent until it got its 200 becomes a delivered event.
 */
import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { startSimulator } from '../../simulator/index.js';
import { startErpReceiver } from '../helpers/erp-receiver.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { TEST_DATABASE_URL } from '../helpers/stores.js';
import { openStore } from '../../src/storage/kysely/store.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import {
  CHAOS_SERVER_KEY,
  OP,
  SEED,
  chaosDatabase,
  gatewayEnv,
  notificationFor,
  paidOrder,
  postJson,
  postNotification,
  reportFigures,
  scaled,
  seededRandom,
  sleep,
  waitUntil,
  START_MS,
  untilAllDelivered,
} from './support.js';

const ERP_SECRET = 'chaos-outage-erp-secret-0123456789';
const ORDERS = scaled(300, 20);
const OUTAGES = scaled(3, 2);

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL restarted under load (through a proxy)', () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });

  it(`${ORDERS} notifications across ${OUTAGES} outages: 503 while down, never 500, recovers by itself, no event lost`, async () => {
    const random = seededRandom(SEED + 3);
    const db = await chaosDatabase('postgres');
    closers.push(() => db.dispose());
    const pgUrl = new URL(db.config.kind === 'postgres' ? db.config.url : '');
    const proxy = await startTcpProxy(pgUrl.hostname, Number(pgUrl.port || 5432));
    closers.push(() => proxy.close());
    pgUrl.host = `127.0.0.1:${proxy.port}`;
    const erp = await startErpReceiver({ secret: ERP_SECRET });
    closers.push(() => erp.close());
    const sim = await startSimulator({ serverKey: CHAOS_SERVER_KEY, logger: false, seed: SEED });
    closers.push(() => sim.close());
    let svc: ServiceProcess | undefined = await startServiceProcess(
      {
        ...gatewayEnv(sim.baseUrl),
        DATABASE_URL: pgUrl.toString(),
        DATA_DIR: db.dir,
        LOG_DIR: path.join(db.dir, 'logs'),
        log_user: OP.user,
        log_pass: OP.pass,
        ERP_NOTIFY_URL: erp.url,
        ERP_WEBHOOK_SECRET: ERP_SECRET,
      },
      START_MS,
    );
    closers.push(async () => svc && stopServiceProcess(svc, 'SIGKILL'));
    const url = svc.url;
    expect(await postJson(`${url}/api/config`, { erp: { timeout_ms: 1_000 }, reconcile: { interval_s: 5 } })).toBe(200);

    // The gateway: each order paid, then its notification sent until it is answered 200.
    const answers = new Map<number, number>();
    const answersWhileDown = new Map<number, number>();
    let isDown = false;
    let next = 0;
    const lane = async () => {
      while (next < ORDERS) {
        const i = next++;
        const orderId = `PGOUT-${i}`;
        await paidOrder(sim.baseUrl, orderId, 20_000 + i);
        const body = await notificationFor(sim.baseUrl, orderId);
        for (;;) {
          const down = isDown;
          const status = await postNotification(url, body);
          answers.set(status, (answers.get(status) ?? 0) + 1);
          if (down && isDown) answersWhileDown.set(status, (answersWhileDown.get(status) ?? 0) + 1);
          if (status === 200) break;
          await sleep(100 + random() * 200);
        }
      }
    };
    const load = Promise.all(Array.from({ length: 4 }, lane));

    let outages = 0;
    for (let k = 0; k < OUTAGES; k++) {
      const target = Math.round(((k + 1) * ORDERS) / (OUTAGES + 2));
      await waitUntil('load progress before the outage', 120_000, () => next >= target, 20).catch((err: unknown) => {
        throw new Error(
          `${String(err)}; answers ${JSON.stringify([...answers])}; service said: ${svc?.output().slice(-3000)}`,
        );
      });
      isDown = true;
      proxy.down();
      outages++;
      // Down long enough for the webhook, the outbox and the reconciler to meet it.
      const downSince = Date.now();
      await waitUntil(
        'answers seen while down',
        60_000,
        () =>
          [...answersWhileDown.values()].reduce((a, b) => a + b, 0) >= 4 * (k + 1) &&
          Date.now() - downSince > 1_500 + random() * 2_500,
        50,
      );
      proxy.up();
      isDown = false;
    }
    await load;

    await waitUntil(
      'a paid event for every order at the ERP',
      180_000,
      () => new Set(erp.accepted().map((d) => d.json?.order_id)).size >= ORDERS,
      250,
    );
    // Recovered by itself: the same process, never restarted, answers health and records deliveries.
    await untilAllDelivered(url, 120_000);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect(await stopServiceProcess(svc, 'SIGTERM')).toEqual({ code: 0, signal: null });
    svc = undefined;

    const store = await openStore(db.config);
    try {
      const events = await store.db.selectFrom('outbox_events').select(['event_id', 'order_key', 'state']).execute();
      const acceptedIds = new Set(erp.accepted().map((d) => d.webhookId));
      const lost = events.filter((e) => e.state !== 'delivered' || !acceptedIds.has(e.event_id));
      const perOrder = new Map<string, number>();
      for (const e of events) perOrder.set(e.order_key, (perOrder.get(e.order_key) ?? 0) + 1);
      const notPaid: string[] = [];
      for (let i = 0; i < ORDERS; i++)
        if ((await store.transactions.findByGatewayOrderId(`PGOUT-${i}`))?.status !== 'paid')
          notPaid.push(`PGOUT-${i}`);
      const fiveXX = [...answers.entries()].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
      const otherThan503 = [...answers.entries()].filter(([s]) => s >= 500 && s !== 503);
      reportFigures('postgres-outage', 'postgres', {
        outages,
        connections_dropped: proxy.dropped,
        notifications: ORDERS,
        answers: [...answers.values()].reduce((a, b) => a + b, 0),
        http_503: answers.get(503) ?? 0,
        '5xx': fiveXX,
        http_500: answers.get(500) ?? 0,
        no_answer: answers.get(0) ?? 0,
        events: events.length,
        lost: lost.length,
        duplicates: erp.accepted().length - acceptedIds.size,
        not_paid: notPaid.length,
      });
      expect(outages).toBe(OUTAGES);
      // The outages were real: the webhook met them and said so with 503.
      expect(answersWhileDown.get(503) ?? 0).toBeGreaterThan(0);
      expect(otherThan503).toEqual([]);
      expect(answers.get(0) ?? 0).toBe(0);
      expect(notPaid).toEqual([]);
      expect(lost.map((e) => e.event_id)).toEqual([]);
      // One change per order (each is notified only once it is paid): exactly one event each.
      expect([...perOrder.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect(events).toHaveLength(ORDERS);
    } finally {
      await store.close();
    }
  }, 300_000);
});
