/**
 * An ERP that only pulls (no webhook URL): 1,000 orders × 2 notifications from the gateway, the
 * service SIGKILLed once in the middle and started again on the same database. The puller keeps its
 * cursor once a page is handled, then acknowledges it (again after the next pull when the
 * acknowledgement was lost), and retries while the service is down. It must receive every
 * event exactly once, in order per order, and every event must end acknowledged (delivered).
 */
import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { signedNotification } from '../helpers/notifications.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { OP, chaosDatabase, reportFigures, scaled, sleep, waitUntil, type ChaosDatabase } from './support.js';

const KEY = 'erp-key-pull-chaos-0123456789';
const ORDERS = scaled(1000, 20);
const LANES = 8;

interface FeedEvent {
  event_id: string;
  order_id: string;
  status: string;
  status_version: number;
}

describe.each(DATABASE_KINDS)('an ERP that only pulls, across a kill and restart (%s)', (kind) => {
  let db: ChaosDatabase;
  const children: ServiceProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) await stopServiceProcess(c, 'SIGKILL');
    await db.dispose();
  });

  it('receives every event exactly once, in order per order, and acknowledges them all', async () => {
    db = await chaosDatabase(kind);
    const env = {
      ...db.env,
      API_KEYS: KEY,
      MIDTRANS_CONFIRM_NOTIFICATIONS: 'false',
      log_user: OP.user,
      log_pass: OP.pass,
      DATA_DIR: db.dir,
      LOG_DIR: path.join(db.dir, 'logs'),
    };
    let current = await startServiceProcess(env, 60_000);
    children.push(current);
    let down = false;
    const auth = { authorization: `Bearer ${KEY}` };

    // The gateway: each order's pending, then its settlement, resent until answered 2xx.
    let answered = 0;
    let resent = 0;
    const send = async (body: Record<string, unknown>) => {
      for (;;) {
        if (!down) {
          try {
            const res = await fetch(`${current.url}/webhook/midtrans`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
              signal: AbortSignal.timeout(10_000),
            });
            await res.arrayBuffer();
            if (res.status >= 200 && res.status < 300) {
              answered++;
              return;
            }
          } catch {
            // the service is being killed: resent below
          }
          resent++;
        }
        await sleep(100);
      }
    };
    let next = 0;
    const lane = async () => {
      while (next < ORDERS) {
        const i = next++;
        await send(
          signedNotification({
            order_id: `PULL-${i}`,
            transaction_status: 'pending',
            transaction_id: `pull-tx-${i}`,
            transaction_time: '2026-11-22 10:00:00',
          }),
        );
        await send(
          signedNotification({
            order_id: `PULL-${i}`,
            transaction_status: 'settlement',
            transaction_id: `pull-tx-${i}`,
            transaction_time: '2026-11-22 10:00:00',
          }),
        );
      }
    };

    // The ERP: pulls with its cursor, processes, acknowledges; retries while the service is away.
    const received: FeedEvent[] = [];
    let cursor: string | undefined;
    let unacknowledged = false;
    let acksRetried = 0;
    let stop = false;
    let pulls = 0;
    let acks = 0;
    const puller = (async () => {
      while (!stop) {
        try {
          const q = `?limit=200&wait=1${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`;
          const res = await fetch(`${current.url}/api/erp-events${q}`, {
            headers: auth,
            signal: AbortSignal.timeout(15_000),
          });
          if (res.status !== 200) throw new Error(`pull answered ${res.status}: ${await res.text()}`);
          const page = (await res.json()) as { data: Array<{ cursor: string; event: FeedEvent }>; next_cursor: string };
          pulls++;
          // Handled, then the cursor kept (as the ERP keeps it with its data); the acknowledgement
          // follows, and one lost to the kill is sent again after the next pull.
          received.push(...page.data.map((d) => d.event));
          cursor = page.next_cursor;
          if (page.data.length > 0) unacknowledged = true;
          if (unacknowledged) {
            const ack = await fetch(`${current.url}/api/erp-events/ack`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ cursor }),
              signal: AbortSignal.timeout(15_000),
            });
            if (ack.status !== 200) throw new Error(`ack answered ${ack.status}`);
            unacknowledged = false;
            acks++;
          }
        } catch (err) {
          if (unacknowledged) acksRetried++;
          if (!down && err instanceof Error && /answered 4/.test(err.message)) throw err;
          await sleep(200);
        }
      }
    })();

    const load = Promise.all(Array.from({ length: LANES }, lane));
    await waitUntil('half the notifications answered', 300_000, () => answered >= ORDERS);
    down = true;
    await stopServiceProcess(current, 'SIGKILL');
    current = await startServiceProcess(env, 60_000);
    children.push(current);
    down = false;
    await load;
    await waitUntil('every event pulled', 300_000, () => received.length >= 2 * ORDERS, 250);
    // Anything more would be a repeat: give it a moment to show up.
    await sleep(1_500);
    stop = true;
    await puller;

    const ids = received.map((e) => e.event_id);
    const repeats = ids.length - new Set(ids).size;
    const byOrder = new Map<string, FeedEvent[]>();
    for (const e of received) byOrder.set(e.order_id, [...(byOrder.get(e.order_id) ?? []), e]);
    const wrong = [...byOrder]
      .filter(
        ([, evs]) =>
          evs.map((e) => e.status).join(',') !== 'pending,paid' ||
          (evs[0]?.status_version ?? 0) >= (evs[1]?.status_version ?? 0),
      )
      .map(([id]) => id);
    const res = await fetch(`${current.url}/api/deliveries?limit=500&status=pending`, {
      headers: { authorization: `Basic ${Buffer.from(`${OP.user}:${OP.pass}`).toString('base64')}` },
    });
    const stillPending = ((await res.json()) as { items: unknown[] }).items.length;
    reportFigures('pull-feed', kind, {
      orders: ORDERS,
      notifications: 2 * ORDERS,
      answered,
      resent,
      events: received.length,
      repeats,
      wrong_order: wrong.length,
      pulls,
      acks,
      acks_retried: acksRetried,
      still_pending: stillPending,
    });
    expect(repeats).toBe(0);
    expect(received).toHaveLength(2 * ORDERS);
    expect(byOrder.size).toBe(ORDERS);
    expect(wrong).toEqual([]);
    expect(stillPending).toBe(0);
  });
});
