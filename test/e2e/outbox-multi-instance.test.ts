/**
 * Two outbox workers on one PostgreSQL outbox, each with its own connection pool (as two instances
 * would have): every event is delivered exactly once, and a worker paused past its lease is fenced.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { TEST_DATABASE_URL } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { createOutbox, type Outbox, type OutboxDeps } from '../../src/workers/outbox/worker.js';
import type { Store } from '../../src/storage/contract.js';

const SECRET = 'multi-instance-secret-0123456789';

describe.runIf(TEST_DATABASE_URL)('multi-instance outbox on PostgreSQL', () => {
  let ctx: TestContext;
  let erp: ErpReceiver;
  let storeB: Store;
  const workers: Outbox[] = [];

  beforeEach(async () => {
    erp = await startErpReceiver({ secret: SECRET });
    ctx = await makeTestApp('postgres', {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    storeB = await ctx.db.open();
    await patchRuntimeConfig(ctx.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
    });
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    await storeB.close();
    await ctx.close();
    await erp.close();
  });

  const deps = (store: Store, clock = ctx.services.clock): OutboxDeps => ({
    store,
    runtimeConfig: ctx.services.runtimeConfig,
    clock,
    logger: ctx.services.logger,
    metrics: ctx.services.metrics,
  });

  async function enqueue(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = randomUUID();
      ids.push(id);
      await ctx.services.store.outbox.enqueue({
        eventId: id,
        eventType: 'payment.status_changed',
        orderKey: `ORDER-${i % 120}`,
        orderId: `ORDER-${i % 120}`,
        mercantId: 'M',
        statusVersion: Math.floor(i / 120) + 1,
        payload: JSON.stringify({ event_id: id, order_id: `ORDER-${i % 120}`, v: Math.floor(i / 120) + 1 }),
      });
    }
    return ids;
  }

  it('two running workers deliver every event exactly once, in order per order', async () => {
    const ids = await enqueue(300);
    erp.setMode({ kind: 'slow', delayMs: 5 });
    const a = createOutbox(deps(ctx.services.store), { instanceId: 'A', pollMs: 200 });
    const b = createOutbox(deps(storeB), { instanceId: 'B', pollMs: 200 });
    workers.push(a, b);
    a.start();
    b.start();
    await erp.waitFor((r) => r.accepted().length >= 300, 25_000);
    await new Promise((r) => setTimeout(r, 300));
    const got = erp.accepted().map((d) => d.webhookId);
    expect(got).toHaveLength(300);
    expect(new Set(got)).toEqual(new Set(ids));
    const perOrder = new Map<string, number>();
    for (const d of erp.accepted()) {
      const order = String(d.json?.order_id);
      const v = Number(d.json?.v);
      expect(v).toBeGreaterThan(perOrder.get(order) ?? 0);
      perOrder.set(order, v);
    }
    const attempts = await ctx.services.store.outbox.attemptsFor(
      (await ctx.services.store.outbox.list({ limit: 500 })).items.map((e) => e.seq),
    );
    const byInstance = new Set(attempts.map((x) => x.instance));
    expect(byInstance).toEqual(new Set(['A', 'B']));
    expect(attempts.every((x) => x.outcome === 'delivered')).toBe(true);
  });

  it('a worker paused past its lease is fenced: its late completion is rejected', async () => {
    let t = Date.now();
    const clock = { now: () => new Date(t) };
    let release: () => void = () => undefined;
    const paused = new Promise<void>((r) => (release = r));
    let reached: () => void = () => undefined;
    const atPause = new Promise<void>((r) => (reached = r));
    const a = createOutbox(deps(ctx.services.store, clock), {
      instanceId: 'A',
      leaseMs: 10_000,
      beforeComplete: async () => (reached(), paused),
    });
    const b = createOutbox(deps(storeB, clock), { instanceId: 'B', leaseMs: 10_000 });
    const [id] = await enqueue(1);
    // The event is stamped with the store's real clock: start the test clock no earlier than that.
    t = Date.now();
    const runA = a.runOnce();
    await atPause;
    expect(await b.runOnce()).toBe(0);
    t += 10_001;
    expect(await b.runOnce()).toBe(1);
    release();
    await runA;
    const ev = await ctx.services.store.outbox.findByEventId(id ?? '');
    expect(ev).toMatchObject({ state: 'delivered', attempts: 1, leaseToken: 2 });
    const attempts = await ctx.services.store.outbox.attemptsFor([ev?.seq ?? 0]);
    expect(attempts.map((x) => [x.instance, x.outcome])).toEqual([
      ['B', 'delivered'],
      ['A', 'rejected_stale_lease'],
    ]);
    expect(erp.accepted().map((d) => d.webhookId)).toEqual([id, id]);
  });
});
