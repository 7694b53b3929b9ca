import { describe, expect, it } from 'vitest';
import { DATABASE_KINDS, freshStoreEachTest } from '../helpers/stores.js';
import { seedTransaction } from '../helpers/seed.js';
import type { Store } from '../../src/storage/contract.js';
import type { NewNotification } from '../../src/model/notification.js';

const note = (over: Partial<NewNotification> = {}): NewNotification => ({
  dedupeKey: 'k1',
  gatewayOrderId: 'SO-1',
  transactionRef: null,
  gatewayTransactionId: 'g1',
  transactionStatus: 'settlement',
  statusCode: '200',
  source: 'webhook',
  result: 'received',
  payload: '{}',
  ...over,
});

describe.each(DATABASE_KINDS)('storage contract: notifications (%s)', (kind) => {
  let store: Store;
  freshStoreEachTest(kind, (_db, s) => {
    store = s;
  });

  it('records once per dedupe key; a repeat returns the earlier record, inside a transaction too', async () => {
    const first = await store.notifications.record(note());
    expect(first.inserted).toBe(true);
    const again = await store.transaction(async (tx) => {
      const r = await tx.notifications.record(note({ source: 'replay' }));
      // the transaction must still be usable after the conflict (PostgreSQL aborts on a raised unique violation)
      await tx.notifications.record(note({ dedupeKey: 'k2' }));
      return r;
    });
    expect(again).toMatchObject({
      inserted: false,
      existing: { dedupeKey: 'k1', source: 'webhook', result: 'received' },
    });
    expect((await store.notifications.listForOrder('SO-1')).map((n) => n.dedupeKey)).toEqual(['k1', 'k2']);
  });

  it('results, lookups by result and by applied gateway transaction', async () => {
    const tx = await seedTransaction(store, { orderId: 'SO-1' });
    const a = await store.notifications.record(note({ transactionRef: tx.id }));
    const b = await store.notifications.record(note({ dedupeKey: 'k2', result: 'unverified' }));
    if (!a.inserted || !b.inserted) throw new Error('inserts expected');
    expect(await store.notifications.transactionSeen(tx.id, 'g1')).toBe(false);
    await store.notifications.setResult(a.id, { result: 'applied', transactionRef: tx.id });
    expect(await store.notifications.transactionSeen(tx.id, 'g1')).toBe(true);
    expect(await store.notifications.transactionSeen(tx.id, 'g2')).toBe(false);
    expect((await store.notifications.listByResult('unverified', 10)).map((n) => n.id)).toEqual([b.id]);
    expect(await store.notifications.findById(a.id)).toMatchObject({
      result: 'applied',
      transactionRef: tx.id,
      source: 'webhook',
      gatewayTransactionId: 'g1',
    });
  });

  it('the duplicate check: a record with the transaction it names, in its account only', async () => {
    const tx = await seedTransaction(store, { orderId: 'SO-1' });
    const a = await store.notifications.record(note({ transactionRef: tx.id, result: 'applied' }));
    const b = await store.notifications.record(note({ dedupeKey: 'k2', result: 'unverified' }));
    if (!a.inserted || !b.inserted) throw new Error('inserts expected');
    expect(await store.notifications.findWithTransaction('k1')).toEqual({
      notificationId: a.id,
      result: 'applied',
      transactionRef: tx.id,
      transaction: await store.transactions.findById(tx.id),
    });
    expect(await store.notifications.findWithTransaction('k2')).toEqual({
      notificationId: b.id,
      result: 'unverified',
      transactionRef: null,
      transaction: undefined,
    });
    expect(await store.notifications.findWithTransaction('k3')).toBeUndefined();
    expect(await store.forAccount('shop-b').notifications.findWithTransaction('k1')).toBeUndefined();
  });
});
