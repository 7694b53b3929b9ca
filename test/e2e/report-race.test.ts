/**
 * Two different reports of one payment at the same moment. On PostgreSQL a report about a stored
 * transaction is read without a lock and written by one statement that takes the row lock only
 * while the row is the version read (`recordNewIfUnchanged`); a row written in between makes it
 * read and decide again. Whatever the interleaving: each report recorded once, one ERP event per
 * applied change with status versions 1, 2, … in order, the transaction's version the last event's,
 * and nothing lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { seedTransaction } from '../helpers/seed.js';
import { ingestGatewayReport, type IngestResult } from '../../src/domain/reports/ingest.js';
import { signedReport } from '../../src/domain/reports/trust.js';
import type { GatewayReport } from '../../src/gateway/report.js';
import type { PaymentStatus } from '../../src/model/payment.js';
import type { ReportWritesRepo } from '../../src/storage/contract.js';

const NOMINAL = 100_000;

function report(gatewayOrderId: string, words: Partial<GatewayReport>): GatewayReport {
  return {
    order_id: gatewayOrderId,
    status_code: '200',
    gross_amount: `${NOMINAL}.00`,
    transaction_id: `tx-${gatewayOrderId}`,
    transaction_time: '2026-11-20 10:00:00',
    payment_type: 'qris',
    ...words,
  };
}
const settlement = (id: string) => report(id, { transaction_status: 'settlement' });
const partialRefund = (id: string) => report(id, { transaction_status: 'partial_refund', refund_amount: '30000.00' });

describe.each(DATABASE_KINDS)('two reports of one payment at once (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => ctx.close());

  /** The order's events and notifications, and the transaction, checked against `results`. */
  async function expectConsistent(orderId: string, gatewayOrderId: string, results: IngestResult[]) {
    const t = await ctx.store.transactions.findByOrderId(orderId);
    const events = await ctx.store.console.eventsForOrder(orderId);
    const notifications = (await ctx.store.notifications.listForOrder(gatewayOrderId)).sort((a, b) => a.id - b.id);
    // Each report recorded once, with the result its ingest answered.
    expect(notifications).toHaveLength(results.length);
    expect(new Set(notifications.map((n) => n.dedupeKey)).size).toBe(results.length);
    for (const r of results)
      expect(notifications.find((n) => n.id === r.notificationId)?.result, `notification ${r.notificationId}`).toBe(
        r.result,
      );
    // One event per applied report, in the order they were applied, versions 1..n.
    const applied = results.filter((r) => r.result === 'applied').sort((a, b) => a.notificationId - b.notificationId);
    expect(events.map((e) => e.eventId)).toEqual(applied.map((r) => r.eventId));
    expect(events.map((e) => e.statusVersion)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => (JSON.parse(e.payload) as { status: PaymentStatus }).status)).toEqual(
      applied.map((r) => r.status),
    );
    expect(t?.statusVersion).toBe(events.length);
    return { t, events };
  }

  it.skipIf(kind !== 'postgres')(
    'a report written while another is decided: the other reads again, decides again, and both are applied',
    async () => {
      const t = await seedTransaction(ctx.store, { orderId: 'RACE-STEP-1', nominal: NOMINAL, kind: 'charge' });
      const repo = ctx.store.reports as ReportWritesRepo;
      const original = repo.recordNewIfUnchanged.bind(repo);
      let calls = 0;
      let inner: Promise<IngestResult> | undefined;
      repo.recordNewIfUnchanged = async (w) => {
        calls++;
        // The refund was decided over the pending row; the settlement is applied before it writes.
        if (calls === 1) {
          inner = ingestGatewayReport(ctx.services, signedReport(settlement(t.gatewayOrderId)), 'webhook');
          await inner;
        }
        return original(w);
      };
      try {
        const outer = await ingestGatewayReport(ctx.services, signedReport(partialRefund(t.gatewayOrderId)), 'webhook');
        const first = await inner;
        if (!first) throw new Error('the settlement was not sent');
        // Outer (moved), the settlement, outer again over the paid row.
        expect(calls).toBe(3);
        expect([first.result, first.status]).toEqual(['applied', 'paid']);
        expect([outer.result, outer.status]).toEqual(['applied', 'partially_refunded']);
        const { t: after, events } = await expectConsistent(t.orderId, t.gatewayOrderId, [first, outer]);
        expect(events.map((e) => e.statusVersion)).toEqual([1, 2]);
        expect(after?.status).toBe('partially_refunded');
        expect(after?.refundedAmount).toBe(30_000);
        expect(after?.paidAmount).toBe(NOMINAL);
      } finally {
        repo.recordNewIfUnchanged = original;
      }
    },
  );

  it.skipIf(kind !== 'postgres')(
    'a row that keeps moving: after the bounded tries the report takes the locked path, applied once',
    async () => {
      const t = await seedTransaction(ctx.store, { orderId: 'RACE-MOVING-1', nominal: NOMINAL, kind: 'charge' });
      const repo = ctx.store.reports as ReportWritesRepo;
      const original = repo.recordNewIfUnchanged.bind(repo);
      let calls = 0;
      // Another writer touches the row before every guarded write.
      repo.recordNewIfUnchanged = async (w) => {
        calls++;
        await ctx.store.transactions.markChecked(t.id, new Date().toISOString());
        return original(w);
      };
      try {
        const out = await ingestGatewayReport(ctx.services, signedReport(settlement(t.gatewayOrderId)), 'webhook');
        expect(calls).toBe(3);
        expect([out.result, out.status]).toEqual(['applied', 'paid']);
        const { events } = await expectConsistent(t.orderId, t.gatewayOrderId, [out]);
        expect(events).toHaveLength(1);
      } finally {
        repo.recordNewIfUnchanged = original;
      }
    },
  );

  it('many payments, a settlement and a partial refund of each sent at once: each recorded once, events in version order', async () => {
    const orders = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        seedTransaction(ctx.store, { orderId: `RACE-MANY-${i}`, nominal: NOMINAL, kind: 'charge' }),
      ),
    );
    const results = await Promise.all(
      orders.map((t) =>
        Promise.all(
          [settlement(t.gatewayOrderId), partialRefund(t.gatewayOrderId)].map((r) =>
            ingestGatewayReport(ctx.services, signedReport(r), 'webhook'),
          ),
        ),
      ),
    );
    for (const [i, t] of orders.entries()) {
      const both = results[i] ?? [];
      const { t: after } = await expectConsistent(t.orderId, t.gatewayOrderId, both);
      // The refund is applied whichever came first; the settlement only when it came first.
      expect(both[1]?.result).toBe('applied');
      expect(['applied', 'stale']).toContain(both[0]?.result);
      expect(after?.status).toBe('partially_refunded');
      expect(after?.refundedAmount).toBe(30_000);
    }
  });
});
