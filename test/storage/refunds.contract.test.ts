import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS, freshStoreEachTest } from '../helpers/stores.js';
import { seedTransaction } from '../helpers/seed.js';
import type { NewRefund, Store } from '../../src/storage/store.js';

const T0 = new Date('2026-11-22T03:00:00.000Z');

describe.each(DATABASE_KINDS)('storage contract: refunds (%s)', (kind) => {
  let store: Store;
  let now = T0;
  const tick = (ms: number) => {
    now = new Date(now.getTime() + ms);
  };
  freshStoreEachTest(
    kind,
    (_db, s) => {
      store = s;
    },
    {
      open: () => {
        now = T0;
        return { now: () => now };
      },
    },
  );

  const refund = (transactionRef: string, amount: number | null, over: Partial<NewRefund> = {}): NewRefund => ({
    id: randomUUID(),
    transactionRef,
    refundKey: `rf-${randomUUID().replace(/-/g, '')}`,
    amount,
    reason: null,
    actor: 'api',
    ...over,
  });

  it('inserts a request as requested, with its key, amount, reason, actor and times', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-1', status: 'paid' });
    const r = await store.refunds.insert(refund(tx.id, 25000, { reason: 'one item back', actor: 'operator:ops' }));
    expect(r).toMatchObject({ transactionRef: tx.id, amount: 25000, reason: 'one item back', state: 'requested', actor: 'operator:ops', gatewayCode: null, createdAt: T0.toISOString(), updatedAt: T0.toISOString() });
    expect(await store.refunds.listFor(tx.id)).toEqual([r]);
  });

  it('findOpen matches the transaction, the state and the amount (null = the rest), oldest first', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-2', status: 'paid' });
    const other = await seedTransaction(store, { orderId: 'RF-3', status: 'paid' });
    const first = await store.refunds.insert(refund(tx.id, 10000));
    tick(1000);
    await store.refunds.insert(refund(tx.id, 10000));
    const rest = await store.refunds.insert(refund(tx.id, null));
    await store.refunds.insert(refund(other.id, 5000));
    expect((await store.refunds.findOpen(tx.id, 10000))?.id).toBe(first.id);
    expect((await store.refunds.findOpen(tx.id, null))?.id).toBe(rest.id);
    expect(await store.refunds.findOpen(tx.id, 5000)).toBeUndefined();
    expect(await store.refunds.findOpen(tx.id, 20000)).toBeUndefined();
    expect(await store.refunds.findOpen(other.id, null)).toBeUndefined();
    expect((await store.refunds.findOpen(other.id, 5000))?.transactionRef).toBe(other.id);
  });

  it('settle closes a request with the gateway code; a settled request is no longer open', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-4', status: 'paid' });
    const a = await store.refunds.insert(refund(tx.id, 10000));
    const b = await store.refunds.insert(refund(tx.id, 10000));
    tick(5000);
    await store.refunds.settle(a.id, 'approved', '200');
    expect((await store.refunds.findOpen(tx.id, 10000))?.id).toBe(b.id);
    await store.refunds.settle(b.id, 'refused', null);
    expect(await store.refunds.findOpen(tx.id, 10000)).toBeUndefined();
    const [sa, sb] = await store.refunds.listFor(tx.id);
    expect(sa).toMatchObject({ id: a.id, state: 'approved', gatewayCode: '200', createdAt: T0.toISOString(), updatedAt: new Date(T0.getTime() + 5000).toISOString() });
    expect(sb).toMatchObject({ id: b.id, state: 'refused', gatewayCode: null });
  });

  it('a refund_key is unique across transactions', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-5', status: 'paid' });
    const other = await seedTransaction(store, { orderId: 'RF-6', status: 'paid' });
    await store.refunds.insert(refund(tx.id, 1000, { refundKey: 'rf-same' }));
    await expect(store.refunds.insert(refund(other.id, 1000, { refundKey: 'rf-same' }))).rejects.toThrow();
    expect(await store.refunds.listFor(other.id)).toEqual([]);
  });

  it('large amounts (beyond 32 bits) survive the round trip', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-7', status: 'paid', nominal: 900_000_000_000 });
    await store.refunds.insert(refund(tx.id, 800_000_000_000));
    expect((await store.refunds.findOpen(tx.id, 800_000_000_000))?.amount).toBe(800_000_000_000);
  });
});
