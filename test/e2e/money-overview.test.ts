/** The console overview's money figures, from real stored payments. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { seedPaymentAt } from '../helpers/seed.js';
import { moneyOverview } from '../../src/domain/queries/money-overview.js';

const NOW = new Date('2026-11-24T05:00:00.000Z'); // 12:00 in Jakarta

describe.each(DATABASE_KINDS)('money at a glance (%s)', (kind) => {
  let ctx: TestContext;
  beforeEach(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', clock: { now: () => NOW } });
  });
  afterEach(async () => ctx.close());

  const payment = (orderId: string, o: Parameters<typeof seedPaymentAt>[3]) =>
    seedPaymentAt(ctx.store, NOW, orderId, o);

  it('sums today, 7 and 30 days by when it was paid; per type, how many got paid and the median time to pay', async () => {
    await payment('M-1', { status: 'paid', type: 'qris', createdHoursAgo: 2, paidMinutesAfter: 4, amount: 100_000 });
    await payment('M-2', {
      status: 'paid',
      type: 'qris',
      createdHoursAgo: 3 * 24,
      paidMinutesAfter: 10,
      amount: 50_000,
    });
    await payment('M-3', { status: 'expired', type: 'qris', createdHoursAgo: 5 * 24, amount: 70_000 });
    await payment('M-4', {
      status: 'refunded',
      type: 'bank_transfer',
      createdHoursAgo: 20 * 24,
      paidMinutesAfter: 120,
      amount: 30_000,
    });
    await payment('M-5', { status: 'pending', type: 'gopay', createdHoursAgo: 1, amount: 10_000 });
    await payment('M-6', { status: 'paid', type: 'qris', createdHoursAgo: 45 * 24, paidMinutesAfter: 1, amount: 999 });
    const m = await moneyOverview(ctx.services, 'Asia/Jakarta');
    expect(m.paid).toEqual({ today: 100_000, last7Days: 150_000, last30Days: 180_000 });
    expect(m.perDay).toHaveLength(30);
    expect(m.perDay.at(-1)).toEqual({ date: '2026-11-24', amount: 100_000, count: 1 });
    expect(m.perType).toEqual([
      { paymentType: 'qris', started: 3, paid: 2, successRate: 2 / 3, medianMinutesToPay: 7 },
      { paymentType: 'bank_transfer', started: 1, paid: 1, successRate: 1, medianMinutesToPay: 120 },
    ]);
  });
});
