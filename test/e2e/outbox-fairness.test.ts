/**
 * Fairness between accounts: account A's ERP is down (connection refused) or slow (answers after
 * 2 s) with a backlog of A's events due, while account B's orders are paid at a steady rate through
 * the report pipeline. B's events reach B's ERP (a real receiver on loopback) within a second or
 * two, whatever A's ERP does. The figures (p50/p99 of B's delay) are printed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig, seedTransaction } from '../helpers/seed.js';
import { ingestGatewayReport } from '../../src/domain/reports/ingest.js';
import { signedReport } from '../../src/domain/reports/trust.js';

const BACKLOG = 200;
const B_ORDERS = 20;
const B_EVERY_MS = 150;

/** A loopback port nobody listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

describe.each(DATABASE_KINDS)('outbox fairness between accounts (%s)', (kind) => {
  let ctx: TestContext;
  let erpA: ErpReceiver;
  let erpB: ErpReceiver;

  beforeEach(async () => {
    erpA = await startErpReceiver();
    erpB = await startErpReceiver();
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    for (const id of ['shop-a', 'shop-b'])
      await ctx.services.store.accounts.insert({ id, name: id, merchantId: null }, new Date());
    await patchRuntimeConfig(ctx.services.runtimeConfig.forAccount('shop-b'), {
      erp: { notify_url: erpB.url, timeout_ms: 5_000 },
    });
  });
  afterEach(async () => {
    await ctx.close();
    await erpA.close();
    await erpB.close();
  });

  /** A's backlog: events due now, each of its own order, written as the report pipeline writes them. */
  async function backlogOfA(): Promise<void> {
    const a = ctx.services.store.forAccount('shop-a');
    for (let i = 0; i < BACKLOG; i++)
      await a.outbox.enqueue({
        eventId: randomUUID(),
        eventType: 'payment.status_changed',
        orderKey: `A-${i}`,
        orderId: `A-${i}`,
        mercantId: 'A',
        statusVersion: 1,
        payload: JSON.stringify({ account: 'shop-a', order_id: `A-${i}` }),
      });
  }

  /** B's orders paid one every B_EVERY_MS; resolves with each order's delay until B's ERP had its event, ms. */
  async function payB(): Promise<number[]> {
    const services = {
      ...ctx.services,
      store: ctx.services.store.forAccount('shop-b'),
      runtimeConfig: ctx.services.runtimeConfig.forAccount('shop-b'),
    };
    const paidAt = new Map<string, number>();
    for (let i = 0; i < B_ORDERS; i++) {
      const orderId = `B-${i}`;
      const t = await seedTransaction(services.store, { orderId });
      paidAt.set(orderId, Date.now());
      await ingestGatewayReport(
        services,
        signedReport({
          order_id: t.gatewayOrderId,
          status_code: '200',
          gross_amount: '150000.00',
          transaction_status: 'settlement',
          transaction_id: `tx-${orderId}`,
        }),
        'webhook',
      );
      await new Promise((r) => setTimeout(r, B_EVERY_MS));
    }
    await erpB.waitFor((r) => r.accepted().length >= B_ORDERS, 30_000);
    return erpB.accepted().map((d) => d.receivedAt - (paidAt.get(String(d.json?.order_id)) ?? Number.NaN));
  }

  for (const trouble of ['down', 'slow'] as const)
    it(`B's deliveries stay prompt while A's ERP is ${trouble}`, async () => {
      const aUrl = trouble === 'down' ? `http://127.0.0.1:${await closedPort()}/erp/events` : erpA.url;
      if (trouble === 'slow') erpA.setMode({ kind: 'slow', delayMs: 2_000 });
      await patchRuntimeConfig(ctx.services.runtimeConfig.forAccount('shop-a'), {
        erp: { notify_url: aUrl, timeout_ms: 5_000 },
      });
      await backlogOfA();
      ctx.services.outbox.start();
      const delays = await payB();
      const [p50, p99] = [pct(delays, 50), pct(delays, 99)];
      console.log(`fairness (${kind}, A ${trouble}): B's delay p50 ${p50} ms, p99 ${p99} ms over ${delays.length}`);
      expect(delays).toHaveLength(B_ORDERS);
      expect(p50).toBeLessThan(500);
      expect(p99).toBeLessThan(2_000);
      // A's ERP was being tried all along (the trouble was real, not idle).
      const attemptsOfA = await ctx.store.db
        .selectFrom('delivery_attempts')
        .innerJoin('outbox_events', 'outbox_events.seq', 'delivery_attempts.event_seq')
        .select('delivery_attempts.outcome')
        .where('outbox_events.account', '=', 'shop-a')
        .execute();
      if (trouble === 'down') expect(attemptsOfA.filter((a) => a.outcome === 'failed').length).toBeGreaterThan(0);
      else expect(erpA.deliveries.length).toBeGreaterThan(0);
    });
});
