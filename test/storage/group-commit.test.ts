/**
 * SQLite group commit: concurrent transactions share commits, yet each caller learns of its
 * transaction only once it is committed, and a failing transaction takes nothing else with it.
 * A `write` method called on the store outside a transaction joins a group too; an `autocommit` one
 * commits on its own (the rule the contract states on `Store` and `STORE_ACCESS`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import SqliteDatabase from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { freshDatabase, type TestDatabase } from '../helpers/stores.js';
import { STORE_ACCESS, UniqueViolationError, type Store } from '../../src/storage/contract.js';

function charge(orderId: string) {
  return {
    id: randomUUID(),
    orderId,
    gatewayOrderId: orderId,
    mercantId: 'M1',
    kind: 'charge' as const,
    attempt: 1,
    nominal: 10_000,
    status: 'pending' as const,
    paymentUrl: null,
    paymentLinkId: null,
    snapToken: null,
    requestHash: null,
    requestJson: null,
    gatewayJson: null,
    expireAt: null,
  };
}

describe('SQLite group commit', () => {
  let db: TestDatabase | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    await db?.dispose();
    store = undefined;
    db = undefined;
  });

  it('each of many concurrent transactions resolves only when another connection already sees its writes', async () => {
    db = freshDatabase('sqlite');
    const s = (store = await db.open());
    if (db.config.kind !== 'sqlite') throw new Error('sqlite expected');
    const reader = new SqliteDatabase(db.config.path, { readonly: true });
    try {
      const seen = reader.prepare('select count(*) as n from transactions where order_id = ?');
      const visibleOnResolve = await Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          await s.transaction(async (tx) => {
            await tx.transactions.insert(charge(`GC-${i}`));
          });
          // Synchronously, before anything else runs: committed means visible to a separate connection.
          return (seen.get(`GC-${i}`) as { n: number }).n;
        }),
      );
      expect(visibleOnResolve).toEqual(Array.from({ length: 60 }, () => 1));
    } finally {
      reader.close();
    }
  });

  it('a transaction that throws is undone alone; the others of its group are kept and see their own writes', async () => {
    db = freshDatabase('sqlite');
    const s = (store = await db.open());
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        s.transaction(async (tx) => {
          await tx.transactions.insert(charge(`GF-${i}`));
          const mine = await tx.transactions.findByOrderId(`GF-${i}`);
          if (i % 3 === 0) throw new Error(`refused ${i}`);
          return mine?.orderId;
        }),
      ),
    );
    outcomes.forEach((o, i) => {
      if (i % 3 === 0) expect(o).toEqual({ status: 'rejected', reason: new Error(`refused ${i}`) });
      else expect(o).toEqual({ status: 'fulfilled', value: `GF-${i}` });
    });
    for (let i = 0; i < 30; i++)
      expect((await s.transactions.findByOrderId(`GF-${i}`)) !== undefined).toBe(i % 3 !== 0);
  });

  it('a unique violation in one transaction does not affect the others, and a retry succeeds in a later group', async () => {
    db = freshDatabase('sqlite');
    const s = (store = await db.open());
    const results = await Promise.allSettled([
      s.transaction((tx) => tx.transactions.insert(charge('DUP-1'))),
      s.transaction((tx) => tx.transactions.insert(charge('DUP-1'))),
      s.transaction((tx) => tx.transactions.insert(charge('DUP-2'))),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const page = await s.transactions.list({ limit: 10 });
    expect(page.items.map((t) => t.orderId).sort()).toEqual(['DUP-1', 'DUP-2']);
  });

  it('a write called outside a transaction joins a group commit and fails alone; an autocommit write commits on its own', async () => {
    expect(STORE_ACCESS.transactions.insert).toBe('write');
    expect(STORE_ACCESS.authFailures.fail).toBe('autocommit');
    db = freshDatabase('sqlite');
    const s = (store = await db.open());
    if (db.config.kind !== 'sqlite') throw new Error('sqlite expected');
    const file = db.config.path;
    // Every commit appends at least one frame to the write-ahead log, so fewer frames than writes
    // means the writes shared commits.
    const side = new SqliteDatabase(file);
    try {
      const frameSize = Number(side.pragma('page_size', { simple: true })) + 24;
      const framesOf = async (writes: () => Promise<unknown>): Promise<number> => {
        side.pragma('wal_checkpoint(TRUNCATE)');
        await writes();
        return Math.max(0, (fs.statSync(`${file}-wal`).size - 32) / frameSize);
      };
      const n = 40;
      const grouped = await framesOf(() =>
        Promise.all(Array.from({ length: n }, (_, i) => s.transactions.insert(charge(`SW-${i}`)))),
      );
      expect(grouped).toBeGreaterThan(0);
      expect(grouped).toBeLessThan(n);
      const policy = { maxFailures: 5, windowMs: 60_000, lockMs: 60_000 };
      const alone = await framesOf(() =>
        Promise.all(Array.from({ length: n }, (_, i) => s.authFailures.fail('api', `client-${i}`, new Date(), policy))),
      );
      expect(alone).toBeGreaterThanOrEqual(n);
    } finally {
      side.close();
    }
    const results = await Promise.allSettled([
      s.transactions.insert(charge('SD-1')),
      s.transactions.insert(charge('SD-1')),
      s.transactions.insert(charge('SD-2')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[1]?.status === 'rejected' ? results[1].reason : undefined).toBeInstanceOf(UniqueViolationError);
    expect((await s.transactions.findByOrderId('SD-2'))?.orderId).toBe('SD-2');
  });

  it('a read outside a transaction waits while a transaction is open: it never sees writes that are then undone', async () => {
    db = freshDatabase('sqlite');
    const s = (store = await db.open());
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const undone = s.transaction(async (tx) => {
      await tx.transactions.insert(charge('OPEN-1'));
      await gate;
      throw new Error('undone');
    });
    // The transaction holds the connection with its insert not committed.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const read = s.transactions.findByOrderId('OPEN-1');
    release();
    await expect(undone).rejects.toThrow('undone');
    expect(await read).toBeUndefined();
  });
});
