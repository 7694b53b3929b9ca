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

describe.each(DATABASE_KINDS)('storage contract: a report written while its row is unchanged (%s)', (kind) => {
  let store: Store;
  freshStoreEachTest(kind, (_db, s) => {
    store = s;
  });
  const now = new Date('2026-11-20T03:00:00.000Z');

  it('writes the notification, the change and the event only while the row is the version read: written, duplicate, moved', async () => {
    const t = await seedTransaction(store, { orderId: 'GUARD-1', kind: 'charge' });
    const read = await store.reports.findCurrent(t.gatewayOrderId);
    expect(read?.transaction).toEqual(t);
    if (!read) throw new Error('not found');
    expect(await store.reports.findCurrent('NO-SUCH-ORDER')).toBeUndefined();
    const write = (dedupeKey: string, rowVersion: string, statusVersion: number) =>
      store.reports.recordNewIfUnchanged({
        notification: note({ dedupeKey, gatewayOrderId: t.gatewayOrderId, transactionRef: t.id, result: 'applied' }),
        transactionId: t.id,
        patch: { status: 'paid', statusVersion },
        event: {
          eventId: `ev-${dedupeKey}`,
          eventType: 'payment.status_changed',
          orderKey: t.orderId,
          orderId: t.orderId,
          mercantId: t.mercantId,
          statusVersion,
          payload: '{}',
          traceContext: null,
        },
        now,
        rowVersion,
      });

    const written = await write('g-1', read.rowVersion, 1);
    expect(written).toMatchObject({ outcome: 'written', transaction: { status: 'paid', statusVersion: 1 } });
    // The row was written by that: the version read before is gone, and nothing more is written.
    expect(await write('g-2', read.rowVersion, 1)).toEqual({ outcome: 'moved' });
    expect(await store.notifications.findByDedupeKey('g-2')).toBeUndefined();
    expect(await store.outbox.findByEventId('ev-g-2')).toBeUndefined();

    const again = await store.reports.findCurrent(t.gatewayOrderId);
    if (!again) throw new Error('not found');
    expect(again.rowVersion).not.toBe(read.rowVersion);
    // A known dedupe key writes nothing either, the row included.
    expect(await write('g-1', again.rowVersion, 2)).toEqual({ outcome: 'duplicate' });
    expect(await store.outbox.findByEventId('ev-g-1')).toMatchObject({ statusVersion: 1 });
    expect((await store.transactions.findById(t.id))?.statusVersion).toBe(1);
    // Any write of the row moves its version, one that leaves the status as it is too.
    await store.transactions.markChecked(t.id, now.toISOString());
    expect(await write('g-3', again.rowVersion, 2)).toEqual({ outcome: 'moved' });
    expect((await store.notifications.listForOrder(t.gatewayOrderId)).map((n) => n.dedupeKey)).toEqual(['g-1']);
  });

  it("reads a report's row with its version and the rows under other ids in one read, this account's only", async () => {
    const link = await seedTransaction(store, { orderId: 'SHOP-LINK' });
    const t = await seedTransaction(store, { orderId: 'SHOP-LINK-7', kind: 'charge' });
    await store.accounts.insert({ id: 'shop-b', name: 'B', merchantId: null }, now);
    await seedTransaction(store.forAccount('shop-b'), { orderId: 'SHOP' });
    const both = await store.reports.findCurrentWith(t.gatewayOrderId, ['SHOP-LINK', 'SHOP']);
    expect(both.current).toEqual(await store.reports.findCurrent(t.gatewayOrderId));
    expect([...both.others.entries()]).toEqual([['SHOP-LINK', link]]);
    // The version read is the one the guarded write checks: written once, then moved.
    const read = both.current;
    if (!read) throw new Error('not found');
    await store.transactions.markChecked(t.id, now.toISOString());
    const after = await store.reports.findCurrentWith(t.gatewayOrderId, []);
    expect(after.current?.rowVersion).not.toBe(read.rowVersion);
    expect(after.others.size).toBe(0);
    // Nothing under the id itself: no current, the others still found.
    const none = await store.reports.findCurrentWith('SHOP-LINK-8', ['SHOP-LINK']);
    expect(none.current).toBeUndefined();
    expect(none.others.get('SHOP-LINK')?.id).toBe(link.id);
    expect((await store.forAccount('shop-b').reports.findCurrentWith('SHOP', [])).current?.transaction.orderId).toBe(
      'SHOP',
    );
  });
});
