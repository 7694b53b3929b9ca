import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { seedTransaction } from '../helpers/seed.js';
import { ingestGatewayReport } from '../../src/domain/reports/ingest.js';
import { signedReport } from '../../src/domain/reports/trust.js';
import { createOutbox } from '../../src/workers/outbox/worker.js';
import type { OutboxEvent } from '../../src/model/delivery.js';

const SECRET = `whsec_${Buffer.from('paylink-test-secret-0123456789ab').toString('base64')}`;

class FakeClock {
  t = new Date('2026-11-22T03:00:00.000Z').getTime();
  now = () => new Date(this.t);
  set(d: Date | string) {
    this.t = new Date(d).getTime();
  }
  advance(ms: number) {
    this.t += ms;
  }
}

describe.each(DATABASE_KINDS)('outbox worker (%s)', (kind) => {
  let ctx: TestContext;
  let erp: ErpReceiver;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    erp = await startErpReceiver({ secret: SECRET });
    ctx = await makeTestApp(
      kind,
      {},
      {
        clock,
        simulatorBaseUrl: 'http://127.0.0.1:9',
        runtimeConfigCacheMs: 0,
        outbox: { instanceId: 'w1', random: () => 0.5 },
      },
    );
    await ctx.services.runtimeConfig.save(
      { erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 } },
      0,
      'test',
    );
  });
  afterEach(async () => {
    await ctx.close();
    await erp.close();
  });

  async function paidEvent(orderId: string, txId = `tx-${orderId}`): Promise<string> {
    const t = await seedTransaction(ctx.services.store, { orderId });
    const r = await ingestGatewayReport(
      ctx.services,
      signedReport({
        order_id: t.gatewayOrderId,
        status_code: '200',
        gross_amount: '150000.00',
        transaction_status: 'settlement',
        transaction_id: txId,
      }),
      'webhook',
    );
    if (!r.eventId) throw new Error('event expected');
    return r.eventId;
  }
  const event = async (id: string) => {
    const e = await ctx.services.store.outbox.findByEventId(id);
    if (!e) throw new Error('no event');
    return e;
  };

  it('delivers with Standard Webhooks headers the ERP verifies', async () => {
    const id = await paidEvent('SO:1');
    expect(await ctx.services.outbox.runOnce()).toBe(1);
    expect(erp.deliveries).toHaveLength(1);
    const d = erp.deliveries[0];
    expect(d).toMatchObject({ webhookId: id, verified: true, answered: 200 });
    expect(d?.json).toMatchObject({ event_id: id, mercant_id: 'SO', order_id: 'SO:1', status: 'paid' });
    expect(await event(id)).toMatchObject({ state: 'delivered', attempts: 1, lastStatusCode: 200 });
    const [a] = await ctx.services.store.outbox.attemptsFor([(await event(id)).seq]);
    expect(a).toMatchObject({ attemptNo: 1, statusCode: 200, outcome: 'delivered', instance: 'w1' });
  });

  it('ERP down for days: retried with backoff on the injected clock, same id and bytes each time, dead after 72 h, then retried by hand', async () => {
    erp.setMode({ kind: 'refuse' });
    const id = await paidEvent('SO:2');
    const start = clock.t;
    let e: OutboxEvent = await event(id);
    const gaps: number[] = [];
    while (e.state !== 'dead') {
      clock.set(e.nextAttemptAt);
      const before = clock.t;
      expect(await ctx.services.outbox.runOnce()).toBe(1);
      e = await event(id);
      if (e.state === 'failed') gaps.push(Date.parse(e.nextAttemptAt) - before);
      expect(e.attempts).toBeLessThan(200);
    }
    expect(gaps.slice(0, 4)).toEqual([7_500, 15_000, 30_000, 60_000]);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(3_600_000);
    expect(clock.t - start).toBe(72 * 3_600_000);
    expect(erp.deliveries).toHaveLength(e.attempts);
    expect(new Set(erp.deliveries.map((d) => d.webhookId))).toEqual(new Set([id]));
    expect(new Set(erp.deliveries.map((d) => d.body)).size).toBe(1);
    // nothing is attempted any more on its own
    clock.advance(24 * 3_600_000);
    expect(await ctx.services.outbox.runOnce()).toBe(0);
    // by hand, same event id; the ERP is back
    erp.setMode({ kind: 'ok' });
    await ctx.services.store.outbox.retryNow(id, clock.now());
    expect(await ctx.services.outbox.runOnce()).toBe(1);
    expect(await event(id)).toMatchObject({ state: 'delivered' });
    expect(erp.accepted().map((d) => [d.webhookId, d.verified])).toEqual([[id, true]]);
  });

  it('a dead event holds its order: the later event waits (other orders go on) until the dead one is retried by hand and delivered, then follows with a fresh retry window', async () => {
    const first = await paidEvent('SO:H');
    const tx = await ctx.services.store.transactions.findByOrderId('SO:H');
    if (!tx) throw new Error('transaction expected');
    const later = (
      await ingestGatewayReport(
        ctx.services,
        signedReport({
          order_id: tx.gatewayOrderId,
          status_code: '200',
          gross_amount: '150000.00',
          transaction_status: 'refund',
          transaction_id: 'tx-SO:H',
        }),
        'webhook',
      )
    ).eventId;
    if (!later) throw new Error('refund event expected');
    const other = await paidEvent('SO:O');
    // The ERP refuses the first event of SO:H only.
    erp.setScript((d) => (d.webhookId === first ? { kind: 'fail', status: 500 } : undefined));
    let e = await event(first);
    while (e.state !== 'dead') {
      clock.set(e.nextAttemptAt);
      await ctx.services.outbox.runOnce();
      e = await event(first);
    }
    expect(erp.accepted().map((d) => d.webhookId)).toEqual([other]);
    expect(await event(later)).toMatchObject({ state: 'pending', attempts: 0 });
    clock.advance(24 * 3_600_000);
    expect(await ctx.services.outbox.runOnce()).toBe(0);
    // By hand, days later: the dead event goes first, the held one follows; the ERP fails it once
    // and it is retried (its window starts now, not when it was written four days ago).
    erp.setScript((d, i) =>
      d.webhookId === later && erp.deliveries.slice(0, i).every((x) => x.webhookId !== later)
        ? { kind: 'fail', status: 503 }
        : undefined,
    );
    await ctx.services.store.outbox.retryNow(first, clock.now());
    expect(await ctx.services.outbox.runOnce()).toBe(1);
    expect(await ctx.services.outbox.runOnce()).toBe(1);
    expect(await event(later)).toMatchObject({ state: 'failed', attempts: 1 });
    clock.set((await event(later)).nextAttemptAt);
    await ctx.services.outbox.runOnce();
    expect(await event(later)).toMatchObject({ state: 'delivered' });
    expect(erp.accepted().map((d) => d.webhookId)).toEqual([other, first, later]);
  });

  it('honours Retry-After; a refusal of the body (410, 422) is retried like any failure, not dropped', async () => {
    erp.setMode({ kind: 'fail', status: 503, retryAfter: '120' });
    const id = await paidEvent('SO:3');
    await ctx.services.outbox.runOnce();
    expect(await event(id)).toMatchObject({
      state: 'failed',
      nextAttemptAt: new Date(clock.t + 120_000).toISOString(),
      lastStatusCode: 503,
    });
    clock.advance(120_000);
    erp.setMode({ kind: 'fail', status: 410 });
    await ctx.services.outbox.runOnce();
    expect(await event(id)).toMatchObject({ state: 'failed', lastStatusCode: 410, attempts: 2 });
    const id2 = await paidEvent('SO:4');
    erp.setMode({ kind: 'fail', status: 422 });
    await ctx.services.outbox.runOnce();
    expect(await event(id2)).toMatchObject({ state: 'failed', lastStatusCode: 422, attempts: 1 });
    // once the receiver accepts again, both arrive
    erp.setMode({ kind: 'ok' });
    clock.advance(3_600_000);
    await ctx.services.outbox.drain();
    expect(await event(id)).toMatchObject({ state: 'delivered' });
    expect(await event(id2)).toMatchObject({ state: 'delivered' });
  });

  it('with no ERP URL events wait in the outbox', async () => {
    await ctx.services.runtimeConfig.save({ erp: { timeout_ms: 2_000 } }, 1, 'test');
    const id = await paidEvent('SO:5');
    expect(await ctx.services.outbox.runOnce()).toBe(0);
    expect(await event(id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(erp.deliveries).toHaveLength(0);
  });

  it('in order per order: a later event waits while an earlier one of the same order is undelivered', async () => {
    const t = await seedTransaction(ctx.services.store, { orderId: 'SO:6' });
    const report = (ts: string) => ({
      order_id: t.gatewayOrderId,
      status_code: '200',
      gross_amount: '150000.00',
      transaction_status: ts,
      transaction_id: 'x',
    });
    const first = await ingestGatewayReport(ctx.services, signedReport(report('settlement')), 'webhook');
    const second = await ingestGatewayReport(ctx.services, signedReport(report('refund')), 'webhook');
    const other = await paidEvent('SO:7');
    erp.setScript((d) => (d.webhookId === first.eventId ? { kind: 'fail', status: 500 } : undefined));
    expect(await ctx.services.outbox.runOnce()).toBe(2);
    expect(erp.deliveries.map((d) => d.webhookId)).toEqual([first.eventId, other]);
    erp.setScript(undefined);
    clock.advance(3_600_000);
    await ctx.services.outbox.drain();
    expect(erp.accepted().map((d) => d.webhookId)).toEqual([other, first.eventId, second.eventId]);
    expect(
      erp
        .accepted()
        .slice(1)
        .map((d) => d.json?.status_version),
    ).toEqual([1, 2]);
  });

  it('is woken at once when an event is written (no poll delay)', async () => {
    const w = createOutbox(
      {
        store: ctx.services.store,
        runtimeConfig: ctx.services.runtimeConfig,
        clock: ctx.services.clock,
        logger: ctx.services.logger,
        metrics: ctx.services.metrics,
      },
      { pollMs: 600_000, instanceId: 'w-wake' },
    );
    ctx.services.outbox = w;
    w.start();
    try {
      await new Promise((r) => setTimeout(r, 50));
      const id = await paidEvent('SO:8');
      await erp.waitFor((r) => r.accepted().length === 1, 5_000);
      expect(erp.accepted()[0]?.webhookId).toBe(id);
    } finally {
      await w.stop();
    }
  });

  it('production guard: ERP URLs that are or resolve to private addresses are refused, 0 sockets to them', async () => {
    const deps = {
      store: ctx.services.store,
      runtimeConfig: ctx.services.runtimeConfig,
      clock: ctx.services.clock,
      logger: ctx.services.logger,
      metrics: ctx.services.metrics,
    };
    const guarded = createOutbox(deps, { instanceId: 'G', blockPrivateAddresses: true });
    const id = await paidEvent('SO:10');
    await guarded.runOnce();
    expect(await event(id)).toMatchObject({ state: 'failed', lastError: 'refused: private address' });
    await ctx.services.runtimeConfig.save(
      { erp: { notify_url: erp.url.replace('127.0.0.1', 'localhost'), timeout_ms: 2_000 } },
      1,
      'test',
    );
    clock.advance(3_600_000);
    await guarded.runOnce();
    expect(await event(id)).toMatchObject({ state: 'failed', attempts: 2, lastError: 'refused: private address' });
    expect(erp.deliveries).toHaveLength(0);
    await guarded.stop();
  });

  it('a worker stalled past its lease while its attempts were under way: their late failures do not open the breaker, the rest of its claim is attempted', async () => {
    const deps = {
      store: ctx.services.store,
      runtimeConfig: ctx.services.runtimeConfig,
      clock: ctx.services.clock,
      logger: ctx.services.logger,
      metrics: ctx.services.metrics,
    };
    // Eight lanes, sixteen events: the first eight are under way (answered 503, late) when the
    // stall happens; enough failures to open the breaker were they taken as the endpoint's.
    const a = createOutbox(deps, { instanceId: 'A', leaseMs: 30_000, concurrency: 8, batchSize: 16 });
    erp.setScript((_d, i) => (i < 8 ? { kind: 'slow', delayMs: 1_000, status: 503 } : undefined));
    for (let i = 0; i < 16; i++) await paidEvent(`STALL:${i}`);
    const run = a.runOnce();
    await erp.waitFor((r) => r.deliveries.length >= 8);
    clock.advance(30_001);
    expect(await run).toBe(16);
    // Every event of the claim was attempted: eight late failures, eight delivered.
    expect(erp.deliveries).toHaveLength(16);
    const page = await ctx.services.store.outbox.list({ limit: 50 });
    const attempts = await ctx.services.store.outbox.attemptsFor(page.items.map((e) => e.seq));
    expect(attempts.filter((x) => x.outcome === 'failed')).toHaveLength(8);
    expect(attempts.filter((x) => x.outcome === 'delivered')).toHaveLength(8);
  });

  it('fencing: a worker stalled past its lease cannot record its late result', async () => {
    let release: () => void = () => undefined;
    const stalled = new Promise<void>((r) => (release = r));
    let reachedStall: () => void = () => undefined;
    const atStall = new Promise<void>((r) => (reachedStall = r));
    const deps = {
      store: ctx.services.store,
      runtimeConfig: ctx.services.runtimeConfig,
      clock: ctx.services.clock,
      logger: ctx.services.logger,
      metrics: ctx.services.metrics,
    };
    const a = createOutbox(deps, {
      instanceId: 'A',
      leaseMs: 30_000,
      beforeComplete: async () => (reachedStall(), stalled),
    });
    const b = createOutbox(deps, { instanceId: 'B', leaseMs: 30_000 });
    const id = await paidEvent('SO:9');
    const runA = a.runOnce();
    await atStall;
    expect(await b.runOnce()).toBe(0);
    clock.advance(30_001);
    expect(await b.runOnce()).toBe(1);
    release();
    await runA;
    const e = await event(id);
    expect(e).toMatchObject({ state: 'delivered', attempts: 1 });
    const attempts = await ctx.services.store.outbox.attemptsFor([e.seq]);
    expect(attempts.map((x) => [x.instance, x.outcome])).toEqual([
      ['B', 'delivered'],
      ['A', 'rejected_stale_lease'],
    ]);
    const metric = await ctx.services.metrics.deliveries.get();
    expect(metric.values.find((v) => v.labels.outcome === 'rejected_stale_lease')?.value).toBe(1);
  });
});
