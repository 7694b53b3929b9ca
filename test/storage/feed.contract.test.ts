import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { DATABASE_KINDS, freshStoreEachTest, type TestDatabase } from '../helpers/stores.js';
import type { Store } from '../../src/storage/contract.js';
import type { KyselyBackedStore } from '../../src/storage/kysely/store.js';
import type { NewOutboxEvent } from '../../src/model/delivery.js';

const T0 = new Date('2026-11-22T03:00:00.000Z');
/** A clock floor as the feed derives it (milliseconds × 1000): beyond 32 bits, as real positions now are. */
const FLOOR = T0.getTime() * 1000;
const event = (orderKey: string, n: number): NewOutboxEvent => ({
  eventId: randomUUID(),
  eventType: 'payment.status_changed',
  orderKey,
  orderId: orderKey,
  mercantId: 'M',
  statusVersion: n,
  payload: JSON.stringify({ order_id: orderKey, n }),
});

describe.each(DATABASE_KINDS)('storage contract: the ERP event feed (%s)', (kind) => {
  let store: Store;
  let db: TestDatabase;
  freshStoreEachTest(kind, (d, s) => {
    db = d;
    store = s;
  });

  it('has an identity of its own: stable across reopening, different per database', async () => {
    const a = await store.feed.identity();
    expect(a.databaseId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.cursorKey).toMatch(/^[0-9a-f]{64}$/);
    const again = await db.open();
    try {
      expect(await again.feed.identity()).toEqual(a);
    } finally {
      await again.close();
    }
  });

  it('gives positions in outbox order to what is visible, once; reads after a position in that order', async () => {
    for (let i = 1; i <= 3; i++) await store.outbox.enqueue(event(`F-${i}`, 1), T0);
    expect(await store.feed.sequence(0)).toBe(3);
    expect(await store.feed.sequence(0)).toBe(0);
    await store.outbox.enqueue(event('F-1', 2), T0);
    expect(await store.feed.sequence(0)).toBe(1);
    const all = await store.feed.after(0, 10);
    expect(all.map((e) => [e.position, JSON.parse(e.payload)])).toEqual([
      [1, { order_id: 'F-1', n: 1 }],
      [2, { order_id: 'F-2', n: 1 }],
      [3, { order_id: 'F-3', n: 1 }],
      [4, { order_id: 'F-1', n: 2 }],
    ]);
    expect((await store.feed.after(2, 1)).map((e) => e.position)).toEqual([3]);
    expect(await store.feed.after(4, 10)).toEqual([]);
  });

  it('acknowledging marks the events up to a position delivered, records it as an attempt, and is a no-op the second time', async () => {
    const evs = [];
    for (let i = 1; i <= 3; i++) evs.push(await store.outbox.enqueue(event(`A-${i}`, 1), T0));
    await store.feed.sequence(0);
    await store.feed.handedOut(3);
    const [claimed] = await store.outbox.claimDue('push-1', T0, 30_000, 1);
    expect(await store.feed.acknowledge(2, T0, 'erp-feed')).toBe(2);
    expect(await store.feed.acknowledge(2, T0, 'erp-feed')).toBe(0);
    const states = await Promise.all(evs.map(async (e) => (await store.outbox.findByEventId(e.eventId))?.state));
    expect(states).toEqual(['delivered', 'delivered', 'pending']);
    const attempts = await store.outbox.attemptsFor(evs.map((e) => e.seq));
    expect(attempts.map((a) => [a.eventSeq, a.outcome, a.instance])).toEqual([
      [evs[0]?.seq, 'acknowledged', 'erp-feed'],
      [evs[1]?.seq, 'acknowledged', 'erp-feed'],
    ]);
    // A push that was in flight meanwhile is fenced off: its result does not undo the acknowledgement.
    expect(claimed).toBeDefined();
    expect(
      await store.outbox.complete(claimed?.seq ?? 0, claimed?.leaseToken ?? 0, 'push-1', {
        state: 'failed',
        nextAttemptAt: T0.toISOString(),
        startedAt: T0.toISOString(),
        statusCode: 500,
        latencyMs: 3,
        error: 'HTTP 500',
      }),
    ).toBe(false);
    expect((await store.outbox.findByEventId(evs[0]?.eventId ?? ''))?.state).toBe('delivered');
  });

  it('never gives a position below the floor nor below one already given, and small positions stay as they were', async () => {
    for (let i = 1; i <= 2; i++) await store.outbox.enqueue(event(`N-${i}`, 1), T0);
    await store.feed.sequence(0);
    for (let i = 3; i <= 4; i++) await store.outbox.enqueue(event(`N-${i}`, 1), T0);
    expect(await store.feed.sequence(FLOOR)).toBe(2);
    // A floor lower than what was given (a clock set back, another instance's clock behind) never takes positions back.
    await store.outbox.enqueue(event('N-5', 1), T0);
    expect(await store.feed.sequence(FLOOR - 5_000_000)).toBe(1);
    const all = await store.feed.after(0, 10);
    expect(all.map((e) => [e.position, JSON.parse(e.payload).order_id])).toEqual([
      [1, 'N-1'],
      [2, 'N-2'],
      [FLOOR, 'N-3'],
      [FLOOR + 1, 'N-4'],
      [FLOOR + 2, 'N-5'],
    ]);
    expect((await store.feed.after(FLOOR, 10)).map((e) => e.position)).toEqual([FLOOR + 1, FLOOR + 2]);
  });

  it('an acknowledgement never reaches past the highest position handed out, which only grows', async () => {
    const evs = [];
    for (let i = 1; i <= 4; i++) evs.push(await store.outbox.enqueue(event(`H-${i}`, 1), T0));
    await store.feed.sequence(FLOOR);
    expect(await store.feed.acknowledge(FLOOR + 3, T0, 'erp-feed')).toBe(0);
    await store.feed.handedOut(FLOOR + 1);
    await store.feed.handedOut(FLOOR);
    expect(await store.feed.acknowledge(FLOOR + 3, T0, 'erp-feed')).toBe(2);
    const states = await Promise.all(evs.map(async (e) => (await store.outbox.findByEventId(e.eventId))?.state));
    expect(states).toEqual(['delivered', 'delivered', 'pending', 'pending']);
    expect((await store.outbox.attemptsFor(evs.map((e) => e.seq))).map((a) => a.eventSeq)).toEqual([
      evs[0]?.seq,
      evs[1]?.seq,
    ]);
    await store.feed.handedOut(FLOOR + 3);
    expect(await store.feed.acknowledge(FLOOR + 2, T0, 'erp-feed')).toBe(1);
  });

  it('a database from before the handed-out mark counts every position it gave as handed out', async () => {
    const evs = [];
    for (let i = 1; i <= 3; i++) evs.push(await store.outbox.enqueue(event(`M-${i}`, 1), T0));
    await store.feed.sequence(0);
    const raw = (store as KyselyBackedStore).db;
    await sql`drop table feed_positions`.execute(raw);
    await sql`delete from kysely_migration where name = '025_feed_positions'`.execute(raw);
    const again = await db.open();
    try {
      expect(await again.feed.acknowledge(3, T0, 'erp-feed')).toBe(3);
    } finally {
      await again.close();
    }
  });

  it.runIf(kind === 'postgres')(
    'an event committed after a later one gets the later position: a reader past the first never misses it',
    async () => {
      const other = await db.open();
      try {
        let release: () => void = () => undefined;
        const held = new Promise<void>((r) => (release = r));
        let written: () => void = () => undefined;
        const isWritten = new Promise<void>((r) => (written = r));
        // The first event's transaction stays open while a second event commits.
        const slow = other.transaction(async (tx) => {
          await tx.outbox.enqueue(event('SLOW', 1), T0);
          written();
          await held;
        });
        await isWritten;
        await store.outbox.enqueue(event('FAST', 1), T0);
        expect(await store.feed.sequence(0)).toBe(1);
        const first = await store.feed.after(0, 10);
        expect(first.map((e) => JSON.parse(e.payload).order_id)).toEqual(['FAST']);
        release();
        await slow;
        expect(await store.feed.sequence(0)).toBe(1);
        const next = await store.feed.after(first.at(-1)?.position ?? 0, 10);
        expect(next.map((e) => JSON.parse(e.payload).order_id)).toEqual(['SLOW']);
      } finally {
        await other.close();
      }
    },
  );
});
