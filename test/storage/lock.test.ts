/** `findForUpdate`, the one way to lock a payment: a second ingest of the same transaction reads it only after the first one committed, whichever key each uses. */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS, freshStoreEachTest } from '../helpers/stores.js';
import type { Store } from '../../src/storage/contract.js';

describe.each(DATABASE_KINDS)('transactions.findForUpdate (%s)', (kind) => {
  let store: Store;
  freshStoreEachTest(kind, (_d, s) => {
    store = s;
  });

  it('serializes two transactions on the same record: the second sees what the first committed', async () => {
    const t = await store.transactions.insert({
      id: randomUUID(),
      orderId: 'LOCK-1',
      gatewayOrderId: 'LOCK-1',
      mercantId: 'M',
      kind: 'charge',
      attempt: 1,
      nominal: 1000,
      status: 'pending',
      paymentUrl: null,
      paymentLinkId: null,
      snapToken: null,
      requestHash: null,
      requestJson: null,
      gatewayJson: null,
      expireAt: null,
    });
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let locked: () => void = () => undefined;
    const isLocked = new Promise<void>((r) => (locked = r));
    const first = store.transaction(async (tx) => {
      const mine = await tx.transactions.findForUpdate({ id: t.id });
      locked();
      await held;
      await tx.transactions.update(t.id, { statusVersion: (mine?.statusVersion ?? 0) + 1 });
    });
    await isLocked;
    const second = store.transaction(
      async (tx) => (await tx.transactions.findForUpdate({ gatewayOrderId: 'LOCK-1' }))?.statusVersion,
    );
    // The second is issued while the first holds the record; it may only read once the first is done.
    await new Promise((r) => setTimeout(r, 50));
    release();
    await first;
    expect(await second).toBe(1);
  });
});
