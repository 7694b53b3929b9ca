import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS, freshStoreEachTest } from '../helpers/stores.js';
import { seedTransaction } from '../helpers/seed.js';
import type { Store } from '../../src/storage/contract.js';
import type { NewReconciliationRow } from '../../src/model/reconciliation.js';
import type { TransactionRecord } from '../../src/model/payment.js';

const T0 = new Date('2026-11-26T05:00:00.000Z');

describe.each(DATABASE_KINDS)('storage contract: the fees of a reconciliation import (%s)', (kind) => {
  let store: Store;
  freshStoreEachTest(kind, (_d, s) => {
    store = s;
  });

  async function paid(orderId: string, amount: number): Promise<TransactionRecord> {
    const t = await seedTransaction(store, { orderId, nominal: amount, kind: 'charge' });
    return store.transactions.update(t.id, { status: 'paid', paidAmount: amount });
  }

  /** A staged row about `tx` as the import would keep it: `matched` rows carry what the payment held then. */
  const row = (
    importId: string,
    tx: TransactionRecord,
    o: { result?: NewReconciliationRow['result']; fee: number; line: number },
  ): NewReconciliationRow => ({
    importId,
    line: o.line,
    result: o.result ?? 'matched',
    gatewayOrderId: tx.gatewayOrderId,
    orderId: tx.orderId,
    transactionRef: tx.id,
    reportStatus: 'settlement',
    reportAmount: tx.nominal,
    feeAmount: o.fee,
    netAmount: tx.nominal - o.fee,
    paylinkStatus: tx.status,
    paylinkAmount: tx.paidAmount ?? tx.nominal,
    detail: null,
    ...((o.result ?? 'matched') === 'matched' ? { matchedOn: { nominal: tx.nominal, paidAmount: tx.paidAmount } } : {}),
  });

  it('writes the fee of the first matched row of each payment, never of other results, and only while the payment is as it was matched', async () => {
    const a = await paid('FEE-A', 150_000);
    const b = await paid('FEE-B', 100_000);
    const c = await paid('FEE-C', 80_000);
    const d = await paid('FEE-D', 60_000);
    const id = randomUUID();
    await store.reconciliation.begin({ id, createdBy: 'test', now: T0 });
    await store.reconciliation.addRows([
      row(id, a, { fee: 4000, line: 2 }),
      row(id, a, { fee: 9000, line: 3 }),
      row(id, b, { fee: 700, line: 4 }),
      row(id, c, { fee: 560, line: 5, result: 'amount_mismatch' }),
      row(id, d, { fee: 420, line: 6 }),
    ]);
    // D changed after it was matched: a refund arrived.
    await store.transactions.update(d.id, { status: 'partially_refunded', refundedAmount: 10_000 });

    expect(await store.reconciliation.keepMatchedFees(id)).toEqual({ expected: 3, written: 2 });
    expect(await store.transactions.findById(a.id)).toMatchObject({ feeAmount: 4000, netAmount: 146_000 });
    expect(await store.transactions.findById(b.id)).toMatchObject({ feeAmount: 700, netAmount: 99_300 });
    expect(await store.transactions.findById(c.id)).toMatchObject({ feeAmount: null, netAmount: null });
    expect(await store.transactions.findById(d.id)).toMatchObject({ feeAmount: null, netAmount: null });
  });

  it('a paid amount set after the match (same status, same order amount) is a change too', async () => {
    const t = await seedTransaction(store, { orderId: 'FEE-P', nominal: 50_000, kind: 'charge' });
    const matchedWhilePaidUnknown = await store.transactions.update(t.id, { status: 'paid' });
    const id = randomUUID();
    await store.reconciliation.begin({ id, createdBy: 'test', now: T0 });
    await store.reconciliation.addRows([row(id, matchedWhilePaidUnknown, { fee: 350, line: 2 })]);
    await store.transactions.update(t.id, { paidAmount: 49_000 });
    expect(await store.reconciliation.keepMatchedFees(id)).toEqual({ expected: 1, written: 0 });
    expect(await store.transactions.findById(t.id)).toMatchObject({ feeAmount: null });
  });
});
