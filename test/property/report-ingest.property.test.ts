/**
 * Every gateway report ends in one pipeline (`ingestGatewayReport`): for any sequence of trusted
 * reports of one order — two gateway transactions, every status word, partial refunds, replays and
 * any order of arrival — over the real store, the payment ends in the state the status machine
 * allows, with one ERP event per applied transition (status versions 1..n, no gap, no repeat), and
 * a replay of the whole sequence writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { seedTransaction } from '../helpers/seed.js';
import { ingestGatewayReport } from '../../src/domain/reports/ingest.js';
import { signedReport } from '../../src/domain/reports/trust.js';
import { decideTransition, statusRank } from '../../src/domain/reports/status-machine.js';
import type { GatewayReport } from '../../src/gateway/report.js';
import { dedupeKey } from '../../src/domain/reports/dedupe.js';
import { reportIsReversible } from '../../src/gateway/status.js';
import { gatewayTimeToIso } from '../../src/gateway/time.js';
import type { PaymentStatus } from '../../src/model/payment.js';

const NOMINAL = 100_000;
/** Two gateway transactions of one order: B was made after A (the order id used again). */
const TRANSACTIONS = [
  { id: 'tx-A', time: '2026-11-20 10:00:00' },
  { id: 'tx-B', time: '2026-11-20 11:00:00' },
] as const;
const WORDS = [
  { transaction_status: 'pending' },
  { transaction_status: 'settlement' },
  { transaction_status: 'capture', fraud_status: 'accept' },
  { transaction_status: 'capture', fraud_status: 'challenge' },
  { transaction_status: 'deny' },
  { transaction_status: 'cancel' },
  { transaction_status: 'expire' },
  { transaction_status: 'partial_refund', refund_amount: '10000.00' },
  { transaction_status: 'partial_refund', refund_amount: '30000.00' },
  { transaction_status: 'refund', refund_amount: '100000.00' },
  { transaction_status: 'chargeback' },
  { transaction_status: 'no_such_word' },
] as const;

const step = fc.record({
  tx: fc.nat({ max: TRANSACTIONS.length - 1 }),
  word: fc.nat({ max: WORDS.length - 1 }),
  channel: fc.constantFrom('qris', 'credit_card', 'echannel'),
});

function reportOf(gatewayOrderId: string, s: { tx: number; word: number; channel: string }): GatewayReport {
  const tx = TRANSACTIONS[s.tx] ?? TRANSACTIONS[0];
  return {
    order_id: gatewayOrderId,
    status_code: '200',
    gross_amount: `${NOMINAL}.00`,
    transaction_id: tx.id,
    transaction_time: tx.time,
    payment_type: s.channel,
    ...(WORDS[s.word] ?? WORDS[0]),
  };
}

interface Model {
  status: PaymentStatus;
  transactionStatus: string | null;
  gatewayTransactionId: string | null;
  transactionTime: string | null;
  refunded: number;
  /** The status of every event written, in order. */
  events: PaymentStatus[];
}

const REFUND_STATUSES = new Set<PaymentStatus>(['refunded', 'partially_refunded']);

/** The oracle: the pure status machine folded over the reports, a report counted once by its dedupe key. */
function expected(reports: GatewayReport[]): Model {
  const m: Model = {
    status: 'pending',
    transactionStatus: null,
    gatewayTransactionId: null,
    transactionTime: null,
    refunded: 0,
    events: [],
  };
  const seen = new Set<string>();
  for (const r of reports) {
    if (seen.has(dedupeKey(r))) continue;
    seen.add(dedupeKey(r));
    let d = decideTransition(m, {
      transactionStatus: r.transaction_status ?? null,
      fraudStatus: r.fraud_status ?? null,
      transactionId: r.transaction_id ?? null,
      transactionTime: gatewayTimeToIso(r.transaction_time),
      superseded: false,
      reversible: reportIsReversible(r),
    });
    const refund = r.refund_amount === undefined ? undefined : Number(r.refund_amount);
    if (d.kind === 'duplicate' && !d.adoptTransaction && REFUND_STATUSES.has(d.status) && (refund ?? 0) > m.refunded)
      d = { kind: 'apply', status: d.status, newTransaction: false };
    if (d.kind === 'apply') {
      m.status = d.status;
      m.transactionStatus = r.transaction_status ?? null;
      m.gatewayTransactionId = r.transaction_id ?? null;
      m.transactionTime = gatewayTimeToIso(r.transaction_time);
      if (REFUND_STATUSES.has(d.status))
        m.refunded = Math.max(m.refunded, refund ?? (d.status === 'refunded' ? NOMINAL : 0));
      m.events.push(d.status);
    } else if (d.kind === 'duplicate' && (d.adoptTransaction || m.gatewayTransactionId === null)) {
      m.gatewayTransactionId = r.transaction_id ?? null;
      m.transactionStatus = r.transaction_status ?? m.transactionStatus;
      m.transactionTime = gatewayTimeToIso(r.transaction_time) ?? m.transactionTime;
    }
  }
  return m;
}

describe.each(DATABASE_KINDS)('gateway reports into the status machine, property (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => ctx.close());
  let run = 0;

  it('any sequence of reports, replays and late arrivals: the allowed final state, one ERP event per transition, a replay writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 14 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (steps, replays) => {
          run++;
          const orderId = `PROP-INGEST-${run}`;
          const t = await seedTransaction(ctx.store, { orderId, nominal: NOMINAL, kind: 'charge' });
          const reports = steps.map((s) => reportOf(t.gatewayOrderId, s));
          // Resends of earlier reports arrive in between.
          for (const r of replays) {
            const resent = reports[r % reports.length];
            if (resent) reports.splice(r % (reports.length + 1), 0, resent);
          }
          for (const r of reports) await ingestGatewayReport(ctx.services, signedReport(r), 'webhook');

          const want = expected(reports);
          const got = await ctx.store.transactions.findByOrderId(orderId);
          const events = await ctx.store.console.eventsForOrder(orderId);
          const statuses = events.map((e) => (JSON.parse(e.payload) as { status: PaymentStatus }).status);
          expect(got?.status).toBe(want.status);
          expect(got?.gatewayTransactionId).toBe(want.gatewayTransactionId);
          expect(got?.refundedAmount).toBe(want.refunded);
          expect(got?.refundedAmount).toBeLessThanOrEqual(NOMINAL);
          expect(statuses).toEqual(want.events);
          // One event per transition: versions 1..n, each once, in the order written.
          expect(events.map((e) => e.statusVersion)).toEqual(events.map((_, i) => i + 1));
          expect(got?.statusVersion).toBe(events.length);
          // Never backwards, but for the documented ways: a reversal of a settlement or capture, a newer
          // gateway transaction replacing an unpaid order, a further partial refund.
          for (let i = 1; i < statuses.length; i++) {
            const [a, b] = [statuses[i - 1] ?? 'pending', statuses[i] ?? 'pending'];
            const allowed =
              statusRank(b) > statusRank(a) ||
              (a === 'paid' && (b === 'failed' || b === 'cancelled')) ||
              statusRank(a) < statusRank('paid') ||
              (a === 'partially_refunded' && b === 'partially_refunded');
            expect(allowed, `${a} → ${b}`).toBe(true);
          }

          const row = await ctx.store.transactions.findById(t.id);
          for (const r of reports) {
            const again = await ingestGatewayReport(ctx.services, signedReport(r), 'webhook');
            expect(again.eventId).toBeUndefined();
          }
          expect((await ctx.store.console.eventsForOrder(orderId)).length).toBe(events.length);
          const after = await ctx.store.transactions.findById(t.id);
          expect({ ...after, lastEventAt: null, updatedAt: null }).toEqual({
            ...row,
            lastEventAt: null,
            updatedAt: null,
          });
        },
      ),
      { numRuns: 40 },
    );
    expect(run).toBe(40);
  }, 60_000);
});
