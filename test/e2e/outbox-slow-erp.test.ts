/**
 * A healthy but slow ERP (a real receiver on loopback answering every event after 150 ms): the
 * account's lanes grow past the 16 a fixed number of lanes allowed (the receiver counts the most
 * requests it had in flight at once), every event arrives, and each order's events arrive in the
 * order written. When the ERP starts failing, it is backed off (a few attempts, then one probe at
 * a time), and once it answers again the rest follows, still in order.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { FAILURES_TO_OPEN } from '../../src/workers/outbox/breaker.js';
import { START_LANES } from '../../src/workers/outbox/window.js';
import { DEFAULT_MAX_LANES } from '../../src/workers/outbox/worker.js';

const SINGLE = 400;
/** Orders with several events each: theirs must arrive in the order written. */
const CHAINS = 20;
const PER_CHAIN = 5;
const ERP_MS = 150;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(DATABASE_KINDS)('delivery through a slow ERP (%s)', (kind) => {
  let ctx: TestContext;
  let erp: ErpReceiver;

  beforeEach(async () => {
    erp = await startErpReceiver();
    erp.setMode({ kind: 'slow', delayMs: ERP_MS });
    // random 0: the first probe 2.5 s after the breaker opens.
    ctx = await makeTestApp(
      kind,
      {},
      { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0, outbox: { random: () => 0 } },
    );
    await patchRuntimeConfig(ctx.services.runtimeConfig, { erp: { notify_url: erp.url, timeout_ms: 5_000 } });
  });
  afterEach(async () => {
    await ctx.close();
    await erp.close();
  });

  async function enqueue(tag: string): Promise<string[]> {
    const ids: string[] = [];
    const add = async (orderId: string, n: number) => {
      const eventId = randomUUID();
      ids.push(eventId);
      await ctx.services.store.outbox.enqueue({
        eventId,
        eventType: 'payment.status_changed',
        orderKey: orderId,
        orderId,
        mercantId: 'M',
        statusVersion: n + 1,
        payload: JSON.stringify({ order_id: orderId, n }),
      });
    };
    // The chains' events interleaved with the single ones, as a busy shop writes them.
    for (let i = 0; i < SINGLE; i++) {
      await add(`${tag}-S-${i}`, 0);
      if (i % 4 === 0) {
        const c = (i / 4) % CHAINS;
        const n = Math.floor(i / 4 / CHAINS);
        if (n < PER_CHAIN) await add(`${tag}-C-${c}`, n);
      }
    }
    return ids;
  }

  /** Each order's events, first acceptance of each, in the order the ERP had them. */
  function expectInOrderPerOrder(tag: string): void {
    const seen = new Map<string, number[]>();
    const firsts = new Set<string>();
    for (const d of erp.accepted()) {
      if (!d.webhookId || firsts.has(d.webhookId)) continue;
      firsts.add(d.webhookId);
      const { order_id, n } = d.json as { order_id: string; n: number };
      if (!order_id.startsWith(`${tag}-C-`)) continue;
      seen.set(order_id, [...(seen.get(order_id) ?? []), n]);
    }
    expect(seen.size).toBe(CHAINS);
    for (const ns of seen.values()) expect(ns).toEqual(Array.from({ length: PER_CHAIN }, (_, i) => i));
  }

  const acceptedIds = () => new Set(erp.accepted().map((d) => d.webhookId));

  it('takes more than the fixed lanes while the ERP answers as fast; backs off when it fails', async () => {
    const first = await enqueue('A');
    ctx.services.outbox.start();
    await erp.waitFor(() => first.every((id) => acceptedIds().has(id)), 60_000);
    // One account, one endpoint: a fixed number of lanes held it to START_LANES at once.
    const most = erp.maxInFlight();
    expect(most).toBeGreaterThan(START_LANES);
    expectInOrderPerOrder('A');

    // The ERP starts failing (after the same 150 ms): a few attempts, then one probe at a time.
    erp.setMode({ kind: 'slow', delayMs: ERP_MS, status: 503 });
    const before = erp.deliveries.length;
    const second = await enqueue('B');
    ctx.services.outbox.wake();
    // Settled: nothing in flight, and nothing new for half a second (the first probe waits 2.5 s).
    for (let seen = -1; seen !== erp.deliveries.length;) {
      seen = erp.deliveries.length;
      await erp.waitFor((r) => r.deliveries.length - before >= FAILURES_TO_OPEN && r.inFlight() === 0, 30_000);
      await sleep(500);
    }
    const failing = erp.deliveries.length - before;
    // What was under way when it started failing finishes (one per lane), and the lanes whose
    // failures came before the breaker opened start one more each; nothing else is started.
    expect(failing).toBeLessThanOrEqual(DEFAULT_MAX_LANES + FAILURES_TO_OPEN - 1);
    erp.resetMaxInFlight();
    await erp.waitFor((r) => r.deliveries.length > before + failing, 30_000);
    expect(erp.maxInFlight()).toBe(1);

    // It answers again: the backlog follows, each order still in order.
    erp.setMode({ kind: 'slow', delayMs: ERP_MS });
    await erp.waitFor(() => second.every((id) => acceptedIds().has(id)), 60_000);
    expectInOrderPerOrder('B');
    console.log(
      `slow ERP (${kind}): at most ${most} requests in flight at once; ${failing} attempts before the breaker opened`,
    );
  }, 180_000);
});
