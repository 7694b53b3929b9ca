import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { DATABASE_KINDS, freshStoreEachTest, type TestDatabase } from '../helpers/stores.js';
import { UniqueViolationError, type Store } from '../../src/storage/contract.js';
import { type NewTransaction } from '../../src/model/payment.js';
import type { KyselyBackedStore } from '../../src/storage/kysely/store.js';

function newTx(over: Partial<NewTransaction> = {}): NewTransaction {
  const orderId = over.orderId ?? `SO-${randomUUID().slice(0, 8)}`;
  return {
    id: randomUUID(),
    orderId,
    gatewayOrderId: orderId.replace(/[^A-Za-z0-9\-_~.]/g, '.'),
    mercantId: orderId.split(':')[0] ?? orderId,
    kind: 'payment_link',
    attempt: 1,
    nominal: 150_000,
    status: 'pending',
    paymentUrl: 'http://127.0.0.1/pay/x',
    paymentLinkId: 'x',
    snapToken: null,
    requestHash: 'h',
    requestJson: '{}',
    gatewayJson: null,
    expireAt: '2030-01-01T00:00:00.000Z',
    ...over,
  };
}

describe.each(DATABASE_KINDS)('storage contract: transactions and config (%s)', (kind) => {
  let db: TestDatabase;
  let store: Store;
  freshStoreEachTest(
    kind,
    (d, s) => {
      db = d;
      store = s;
    },
    { current: () => store },
  );

  it('inserts and finds by order id, gateway order id, id and gateway transaction id', async () => {
    const t = newTx({
      orderId: 'SO/2026:17',
      gatewayOrderId: 'SO.2026.17',
      mercantId: 'SO/2026',
      nominal: 9_007_199_254_740_991,
    });
    await store.transactions.insert(t);
    const byOrder = await store.transactions.findByOrderId('SO/2026:17');
    expect(byOrder).toMatchObject({
      orderId: 'SO/2026:17',
      gatewayOrderId: 'SO.2026.17',
      mercantId: 'SO/2026',
      nominal: 9_007_199_254_740_991,
      status: 'pending',
      statusVersion: 0,
    });
    expect(await store.transactions.findByGatewayOrderId('SO.2026.17')).toEqual(byOrder);
    expect(await store.transactions.findById(t.id)).toEqual(byOrder);
    await store.transactions.update(t.id, { gatewayTransactionId: 'gw-1' });
    expect((await store.transactions.findByGatewayTransactionId('gw-1'))?.id).toBe(t.id);
    expect(await store.transactions.findByOrderId('nope')).toBeUndefined();
  });

  it('keeps the API that carried a payment: legacy unless told, and for a row written without it', async () => {
    const legacy = newTx();
    const snap = newTx({ carrier: 'snap_bi' });
    await store.transactions.insert(legacy);
    await store.transactions.insert(snap);
    expect((await store.transactions.findById(legacy.id))?.carrier).toBe('legacy');
    expect((await store.transactions.findByOrderId(snap.orderId))?.carrier).toBe('snap_bi');
    await store.transactions.update(snap.id, { status: 'paid', gatewayTransactionId: 'gw-carrier' });
    expect((await store.transactions.findByGatewayTransactionId('gw-carrier'))?.carrier).toBe('snap_bi');
    // A row as a writer from before the column wrote it: the column's default.
    const k = (store as KyselyBackedStore).db;
    const row = await k.selectFrom('transactions').selectAll().where('id', '=', snap.id).executeTakeFirstOrThrow();
    const { carrier: _c, ...old } = row;
    const oldId = randomUUID();
    await k
      .insertInto('transactions')
      .values({ ...old, id: oldId, order_id: 'OLD-1', gateway_order_id: 'OLD-1' })
      .execute();
    expect((await store.transactions.findById(oldId))?.carrier).toBe('legacy');
  });

  it('rejects a second transaction with the same order id or gateway order id', async () => {
    await store.transactions.insert(newTx({ orderId: 'A:1', gatewayOrderId: 'A.1' }));
    await expect(store.transactions.insert(newTx({ orderId: 'A:1', gatewayOrderId: 'A.1x' }))).rejects.toBeInstanceOf(
      UniqueViolationError,
    );
    await expect(store.transactions.insert(newTx({ orderId: 'A/1', gatewayOrderId: 'A.1' }))).rejects.toBeInstanceOf(
      UniqueViolationError,
    );
  });

  it("tells a unique violation, in its own words or the database's, from other errors", async () => {
    await store.transactions.insert(newTx({ orderId: 'U:1' }));
    const own = await store.transactions.insert(newTx({ orderId: 'U:1' })).catch((err: unknown) => err);
    expect(own).toBeInstanceOf(UniqueViolationError);
    expect(store.isUniqueViolation(own)).toBe(true);
    const raw = (store as KyselyBackedStore).db;
    const driver = await sql`insert into paylink_meta (key, value) values ('database_id', 'again')`
      .execute(raw)
      .catch((err: unknown) => err);
    expect(driver).not.toBeInstanceOf(UniqueViolationError);
    expect(store.isUniqueViolation(driver)).toBe(true);
    expect(store.isUniqueViolation(await sql`selec 1`.execute(raw).catch((err: unknown) => err))).toBe(false);
    expect(store.isUniqueViolation('23505')).toBe(false);
  });

  it('tells the list cursors it hands out from other text', async () => {
    for (let i = 0; i < 3; i++) await store.transactions.insert(newTx());
    const { nextCursor } = await store.transactions.list({ limit: 1 });
    expect(nextCursor).toBeDefined();
    expect(store.isListCursor(nextCursor ?? '')).toBe(true);
    for (const other of [
      '',
      'nope',
      Buffer.from('{"at":"x","id":"y"}').toString('base64url'),
      Buffer.from('[1,2]').toString('base64url'),
    ])
      expect(store.isListCursor(other)).toBe(false);
  });

  it('updates a patch and bumps updated_at, leaving other fields', async () => {
    const t = await store.transactions.insert(newTx());
    const after = await store.transactions.update(t.id, {
      status: 'paid',
      statusVersion: 1,
      transactionStatus: 'settlement',
    });
    expect(after).toMatchObject({
      status: 'paid',
      statusVersion: 1,
      transactionStatus: 'settlement',
      nominal: t.nominal,
      paymentUrl: t.paymentUrl,
    });
    expect(after.updatedAt >= t.updatedAt).toBe(true);
  });

  it('a conditional update applies only while the stored status is one of those given', async () => {
    const t = await store.transactions.insert(newTx());
    await store.transactions.update(t.id, { status: 'paid', transactionStatus: 'settlement' });
    const kept = await store.transactions.update(
      t.id,
      { status: 'pending', transactionStatus: 'pending' },
      { ifStatusIn: ['pending', 'failed'] },
    );
    expect(kept).toMatchObject({ status: 'paid', transactionStatus: 'settlement' });
    const moved = await store.transactions.update(t.id, { status: 'refunded' }, { ifStatusIn: ['paid'] });
    expect(moved.status).toBe('refunded');
    expect((await store.transactions.update(t.id, { status: 'pending' }, { ifStatusIn: [] })).status).toBe('refunded');
  });

  it('an update can carry a part applied only while the stored status is one of those given, in the same statement', async () => {
    const t = await store.transactions.insert(newTx());
    const revive = {
      statuses: ['pending', 'failed'] as const,
      patch: { status: 'pending' as const, transactionStatus: 'pending' },
    };
    // Still pending: both parts apply.
    const first = await store.transactions.update(
      t.id,
      { paymentUrl: 'https://pay.example/1', gatewayJson: '{"a":1}' },
      { whileStatusIn: revive },
    );
    expect(first).toMatchObject({
      paymentUrl: 'https://pay.example/1',
      gatewayJson: '{"a":1}',
      status: 'pending',
      transactionStatus: 'pending',
    });
    // Paid meanwhile: the unconditional part applies, the status is left as it is.
    await store.transactions.update(t.id, { status: 'paid', transactionStatus: 'settlement' });
    const later = await store.transactions.update(
      t.id,
      { paymentUrl: 'https://pay.example/2' },
      { whileStatusIn: revive },
    );
    expect(later).toMatchObject({
      paymentUrl: 'https://pay.example/2',
      status: 'paid',
      transactionStatus: 'settlement',
    });
    // A column in both parts: the conditional value while the status matches, else the unconditional one.
    const both = await store.transactions.update(t.id, { transactionStatus: 'capture' }, { whileStatusIn: revive });
    expect(both).toMatchObject({ status: 'paid', transactionStatus: 'capture' });
  });

  it('finds the latest attempt for a mercant id', async () => {
    await store.transactions.insert(newTx({ orderId: 'INV-9:1', mercantId: 'INV-9', attempt: 1 }));
    await store.transactions.insert(newTx({ orderId: 'INV-9:2', mercantId: 'INV-9', attempt: 2 }));
    expect((await store.transactions.latestForMercant('INV-9'))?.orderId).toBe('INV-9:2');
    expect(await store.transactions.latestForMercant('INV-0')).toBeUndefined();
  });

  it('lists newest first with filters and a cursor that walks every row once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push((await store.transactions.insert(newTx({ status: i % 2 ? 'paid' : 'pending' }))).orderId);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.transactions.list({ limit: 3, cursor });
      seen.push(...page.items.map((t) => t.orderId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
    const paid = await store.transactions.list({ status: 'paid' });
    expect(paid.items).toHaveLength(3);
    expect(paid.items.every((t) => t.status === 'paid')).toBe(true);
  });

  it('lists overdue pending transactions: past expiry, or old without an event', async () => {
    const expired = await store.transactions.insert(newTx({ expireAt: '2020-01-01T00:00:00.000Z' }));
    await store.transactions.insert(newTx({ expireAt: '2999-01-01T00:00:00.000Z' }));
    await store.transactions.insert(newTx({ expireAt: '2020-01-01T00:00:00.000Z', status: 'paid' }));
    const due = await store.transactions.listOverduePending(new Date().toISOString(), '2000-01-01T00:00:00.000Z', 10);
    expect(due.map((t) => t.id)).toEqual([expired.id]);
    const old = await store.transactions.listOverduePending('2000-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z', 10);
    expect(old).toHaveLength(2);
  });

  it('overdue transactions take turns: never checked first, then the least recently checked', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push((await store.transactions.insert(newTx({ expireAt: '2020-01-01T00:00:00.000Z' }))).id);
    const now = new Date().toISOString();
    const first = (await store.transactions.listOverduePending(now, '2000-01-01T00:00:00.000Z', 2)).map((t) => t.id);
    expect(first).toHaveLength(2);
    await store.transactions.markChecked(first[0] ?? '', '2026-11-23T10:00:00.000Z');
    await store.transactions.markChecked(first[1] ?? '', '2026-11-23T10:00:01.000Z');
    const second = (await store.transactions.listOverduePending(now, '2000-01-01T00:00:00.000Z', 2)).map((t) => t.id);
    const never = ids.find((id) => !first.includes(id));
    expect(second).toEqual([never, first[0]]);
  });

  it('commits a transaction as a whole, or rolls it back as a whole', async () => {
    const a = newTx();
    await expect(
      store.transaction(async (tx) => {
        await tx.transactions.insert(a);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.transactions.findById(a.id)).toBeUndefined();
    await store.transaction(async (tx) => {
      await tx.transactions.insert(a);
      await tx.transactions.update(a.id, { status: 'paid' });
    });
    expect((await store.transactions.findById(a.id))?.status).toBe('paid');
  });

  it('keeps runtime config with optimistic versions', async () => {
    expect(await store.config.get()).toBeUndefined();
    expect(await store.config.put({ erp: { timeout_ms: 5000 } }, 0, 'ops')).toMatchObject({ version: 1 });
    expect(await store.config.put({ erp: { timeout_ms: 6000 } }, 0, 'ops')).toBeUndefined();
    expect(await store.config.put({ erp: { timeout_ms: 7000 } }, 1, 'ops')).toMatchObject({ version: 2 });
    expect(await store.config.get()).toMatchObject({
      document: { erp: { timeout_ms: 7000 } },
      version: 2,
      updatedBy: 'ops',
    });
  });

  it('reopens an existing database without re-running migrations', async () => {
    await store.transactions.insert(newTx({ orderId: 'KEEP-1' }));
    await store.close();
    store = await db.open();
    expect(await store.transactions.findByOrderId('KEEP-1')).toBeDefined();
  });

  it('answers ping, and fails it once closed', async () => {
    await store.ping();
    await store.close();
    await expect(store.ping()).rejects.toBeDefined();
    store = await db.open();
  });
});
