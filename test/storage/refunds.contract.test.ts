import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS, freshStoreEachTest } from '../helpers/stores.js';
import { seedTransaction } from '../helpers/seed.js';
import type { Store } from '../../src/storage/contract.js';
import type { NewRefund } from '../../src/model/refund.js';

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
    leaseUntil: null,
    requestKey: null,
    ...over,
  });
  const at = (ms: number) => new Date(T0.getTime() + ms);

  it('inserts a request as requested, with its key, amount, reason, actor, lease, request key and times', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-1', status: 'paid' });
    const r = await store.refunds.insert(
      refund(tx.id, 25000, {
        reason: 'one item back',
        actor: 'operator:ops',
        leaseUntil: at(30_000).toISOString(),
        requestKey: 'k1',
      }),
    );
    expect(r).toMatchObject({
      transactionRef: tx.id,
      amount: 25000,
      reason: 'one item back',
      state: 'requested',
      actor: 'operator:ops',
      gatewayCode: null,
      leaseUntil: at(30_000).toISOString(),
      requestKey: 'k1',
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
    });
    expect(await store.refunds.listFor(tx.id)).toEqual([r]);
    expect(await store.refunds.findById(r.id)).toEqual(r);
  });

  it('listOpen lists the requests of one transaction whose outcome is unknown, oldest first', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-2', status: 'paid' });
    const other = await seedTransaction(store, { orderId: 'RF-3', status: 'paid' });
    const first = await store.refunds.insert(refund(tx.id, 10000));
    tick(1000);
    const second = await store.refunds.insert(refund(tx.id, 20000));
    const done = await store.refunds.insert(refund(tx.id, 5000));
    await store.refunds.settle(done.id, 'approved', '200');
    await store.refunds.insert(refund(other.id, 5000));
    expect((await store.refunds.listOpen(tx.id)).map((r) => r.id)).toEqual([first.id, second.id]);
    expect((await store.refunds.listOpen(other.id)).map((r) => r.transactionRef)).toEqual([other.id]);
  });

  it('findByRequestKey finds the refund a caller asked for with that key, on that transaction only', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-8', status: 'paid' });
    const other = await seedTransaction(store, { orderId: 'RF-9', status: 'paid' });
    const r = await store.refunds.insert(refund(tx.id, 1000, { requestKey: 'client:key-1' }));
    expect((await store.refunds.findByRequestKey(tx.id, 'client:key-1'))?.id).toBe(r.id);
    expect(await store.refunds.findByRequestKey(other.id, 'client:key-1')).toBeUndefined();
    expect(await store.refunds.findByRequestKey(tx.id, 'client:key-2')).toBeUndefined();
  });

  it('getApprovedTotal sums the approved refunds only', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-10', status: 'paid' });
    expect(await store.refunds.getApprovedTotal(tx.id)).toBe(0);
    const a = await store.refunds.insert(refund(tx.id, 10000));
    const b = await store.refunds.insert(refund(tx.id, 2500));
    const c = await store.refunds.insert(refund(tx.id, 700));
    await store.refunds.insert(refund(tx.id, 9));
    await store.refunds.settle(a.id, 'approved', '200');
    await store.refunds.settle(b.id, 'approved', '200');
    await store.refunds.settle(c.id, 'refused', '414');
    expect(await store.refunds.getApprovedTotal(tx.id)).toBe(12500);
  });

  it('a lease is claimed only while nobody holds it; released, it can be claimed again; a settled request cannot be', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-11', status: 'paid' });
    const r = await store.refunds.insert(refund(tx.id, 1000, { leaseUntil: at(30_000).toISOString() }));
    expect(await store.refunds.claimLease(r.id, at(10_000), at(40_000))).toBe(false);
    expect(await store.refunds.claimLease(r.id, at(30_000), at(60_000))).toBe(true);
    expect((await store.refunds.findById(r.id))?.leaseUntil).toBe(at(60_000).toISOString());
    await store.refunds.releaseLease(r.id);
    expect((await store.refunds.findById(r.id))?.leaseUntil).toBeNull();
    expect(await store.refunds.claimLease(r.id, at(31_000), at(61_000))).toBe(true);
    await store.refunds.settle(r.id, 'approved', '200');
    expect(await store.refunds.claimLease(r.id, at(100_000), at(130_000))).toBe(false);
    expect(await store.refunds.findById(r.id)).toMatchObject({ state: 'approved', leaseUntil: null });
  });

  it('settleIdle settles only a request nobody holds and that is still open', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-12', status: 'paid' });
    const held = await store.refunds.insert(refund(tx.id, 1000, { leaseUntil: at(30_000).toISOString() }));
    const idle = await store.refunds.insert(refund(tx.id, 2000));
    expect(await store.refunds.settleIdle(held.id, 'not_made', '200', at(1_000))).toBe(false);
    expect(await store.refunds.settleIdle(idle.id, 'not_made', '200', at(1_000))).toBe(true);
    expect(await store.refunds.settleIdle(idle.id, 'approved', '200', at(2_000))).toBe(false);
    expect(await store.refunds.settleIdle(held.id, 'approved', '200', at(30_000))).toBe(true);
    expect((await store.refunds.findById(held.id))?.state).toBe('approved');
    expect((await store.refunds.findById(idle.id))?.state).toBe('not_made');
  });

  it('settle closes a request with the gateway code and gives up its lease; a settled request is no longer open', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-4', status: 'paid' });
    const a = await store.refunds.insert(refund(tx.id, 10000, { leaseUntil: at(30_000).toISOString() }));
    const b = await store.refunds.insert(refund(tx.id, 10000));
    tick(5000);
    await store.refunds.settle(a.id, 'approved', '200');
    expect((await store.refunds.listOpen(tx.id)).map((r) => r.id)).toEqual([b.id]);
    await store.refunds.settle(b.id, 'refused', null);
    expect(await store.refunds.listOpen(tx.id)).toEqual([]);
    const [sa, sb] = await store.refunds.listFor(tx.id);
    expect(sa).toMatchObject({
      id: a.id,
      state: 'approved',
      gatewayCode: '200',
      leaseUntil: null,
      createdAt: T0.toISOString(),
      updatedAt: new Date(T0.getTime() + 5000).toISOString(),
    });
    expect(sb).toMatchObject({ id: b.id, state: 'refused', gatewayCode: null });
  });

  it('a refund_key is unique across transactions', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-5', status: 'paid' });
    const other = await seedTransaction(store, { orderId: 'RF-6', status: 'paid' });
    await store.refunds.insert(refund(tx.id, 1000, { refundKey: 'rf-same' }));
    await expect(store.refunds.insert(refund(other.id, 1000, { refundKey: 'rf-same' }))).rejects.toThrow();
    expect(await store.refunds.listFor(other.id)).toEqual([]);
  });

  it('large amounts (beyond 32 bits) survive the round trip and the sum', async () => {
    const tx = await seedTransaction(store, { orderId: 'RF-7', status: 'paid', nominal: 900_000_000_000 });
    const r = await store.refunds.insert(refund(tx.id, 800_000_000_000));
    expect((await store.refunds.listOpen(tx.id))[0]?.amount).toBe(800_000_000_000);
    await store.refunds.settle(r.id, 'approved', '200');
    expect(await store.refunds.getApprovedTotal(tx.id)).toBe(800_000_000_000);
  });
});
