/**
 * The ERP circuit breaker and pace, against a real ERP receiver on loopback: while the ERP fails,
 * attempts stop after a few and become one probe per interval; once a probe succeeds, the backlog
 * is taken up again in the order written, at no more than `erp.max_rate_per_s`. Events of different
 * orders go out on parallel lanes, so the ERP may receive two of them in either order (only an
 * order's own events are promised in order): the order they are taken up in is read from their
 * attempts' start times, which the pace sets apart.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { FAILURES_TO_OPEN } from '../../src/workers/outbox/breaker.js';

const EVENTS = 100;
const RATE = 40;
/** Lanes: attempts already under way when the breaker opens still finish, at most one per lane. */
const LANES = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(DATABASE_KINDS)('ERP circuit breaker (%s)', (kind) => {
  let ctx: TestContext;
  let erp: ErpReceiver;

  beforeEach(async () => {
    erp = await startErpReceiver();
    // random 0: the shortest jittered probe waits (2.5 s, then 5 s, 10 s…).
    ctx = await makeTestApp(
      kind,
      {},
      {
        simulatorBaseUrl: 'http://127.0.0.1:9',
        runtimeConfigCacheMs: 0,
        outbox: { random: () => 0, concurrency: LANES },
      },
    );
    await patchRuntimeConfig(ctx.services.runtimeConfig, {
      erp: { notify_url: erp.url, timeout_ms: 2_000, max_rate_per_s: RATE },
    });
  });
  afterEach(async () => {
    await ctx.close();
    await erp.close();
  });

  it('a failing ERP gets a few attempts then one probe per interval; after a good probe the backlog follows in order, paced', async () => {
    erp.setMode({ kind: 'fail', status: 503 });
    for (let i = 0; i < EVENTS; i++)
      await ctx.services.store.outbox.enqueue({
        eventId: randomUUID(),
        eventType: 'payment.status_changed',
        orderKey: `O-${i}`,
        orderId: `O-${i}`,
        mercantId: 'M',
        statusVersion: 1,
        payload: JSON.stringify({ order_id: `O-${i}`, n: i }),
      });
    ctx.services.outbox.start();
    await sleep(2_000);
    const opened = erp.deliveries.length;
    // Without the breaker: every event once in these 2 s (80 at the pace alone).
    expect(opened).toBeGreaterThanOrEqual(FAILURES_TO_OPEN);
    expect(opened).toBeLessThanOrEqual(FAILURES_TO_OPEN + LANES - 1);
    // The events not tried were given back, not left leased.
    const leased = await ctx.store.db
      .selectFrom('outbox_events')
      .select('seq')
      .where('lease_until', 'is not', null)
      .where('state', '=', 'pending')
      .execute();
    expect(leased).toEqual([]);
    await sleep(4_000);
    // One probe (2.5 s after opening) in these 4 s.
    expect(erp.deliveries.length - opened).toBe(1);

    erp.setMode({ kind: 'ok' });
    const recoveredAt = Date.now();
    await erp.waitFor((r) => new Set(r.accepted().map((d) => d.webhookId)).size >= EVENTS, 30_000);
    const accepted = erp.accepted();
    expect(accepted).toHaveLength(EVENTS);
    // Taken up after the good probe: the events that had failed and those never tried, in the
    // order written (a claim between the probe's answer and its backlog being made due would take
    // those never tried first).
    // Each result is recorded after its answer: wait for the last ones.
    const delivered = () =>
      ctx.store.db
        .selectFrom('outbox_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('state', '=', 'delivered')
        .executeTakeFirstOrThrow();
    for (let i = 0; i < 200 && Number((await delivered()).n) < EVENTS; i++) await sleep(50);
    const started = await ctx.store.db
      .selectFrom('delivery_attempts')
      .innerJoin('outbox_events', 'outbox_events.seq', 'delivery_attempts.event_seq')
      .select(['outbox_events.payload', 'delivery_attempts.started_at'])
      .where('delivery_attempts.outcome', '=', 'delivered')
      .orderBy('delivery_attempts.started_at')
      .orderBy('outbox_events.seq')
      .execute();
    expect(started).toHaveLength(EVENTS);
    const takenUp = started.map((r) => Number((JSON.parse(r.payload) as { n: number }).n));
    const [probe, ...rest] = takenUp;
    expect(rest).toEqual(Array.from({ length: EVENTS }, (_, i) => i).filter((n) => n !== probe));
    // At least once: every event reached the ERP.
    expect(new Set(accepted.map((d) => Number(d.json?.n))).size).toBe(EVENTS);
    // Paced: never more than RATE in any second of the drain (two of slack for timer jitter).
    const times = accepted.map((d) => d.receivedAt);
    const busiest = Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 1_000).length));
    expect(busiest).toBeLessThanOrEqual(RATE + 2);
    const drainS = (Math.max(...times) - recoveredAt) / 1000;
    console.log(
      `breaker (${kind}): ${opened} attempts before opening, drain of ${EVENTS} after recovery ${drainS.toFixed(1)} s, busiest second ${busiest}`,
    );
  });
});
