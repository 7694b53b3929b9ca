import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS, freshStoreEachTest, type TestDatabase } from '../helpers/stores.js';
import type { Store } from '../../src/storage/contract.js';
import { seedTransaction } from '../helpers/seed.js';
import { outboxEvent } from '../helpers/outbox.js';

const T0 = new Date('2026-11-22T03:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

const ev = outboxEvent;

const result = (state: 'delivered' | 'failed' | 'dead', nextAttemptAt?: Date) => ({
  state,
  nextAttemptAt: nextAttemptAt?.toISOString(),
  startedAt: T0.toISOString(),
  statusCode: state === 'delivered' ? 200 : 500,
  latencyMs: 5,
  error: state === 'delivered' ? null : 'HTTP 500',
});

describe.each(DATABASE_KINDS)('storage contract: outbox (%s)', (kind) => {
  let db: TestDatabase;
  let store: Store;
  let clock = T0;
  freshStoreEachTest(
    kind,
    (d, s) => {
      db = d;
      store = s;
    },
    {
      open: () => {
        clock = T0;
        return { now: () => clock };
      },
    },
  );

  it('keeps the trace context an event was written with, through enqueue, a report write and a claim; null without one', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const plain = await store.outbox.enqueue(ev('A'));
    expect(plain.traceContext).toBeNull();
    const traced = await store.outbox.enqueue(ev('B', { traceContext: traceparent }));
    expect(traced.traceContext).toBe(traceparent);
    // The report write (one statement of its own on PostgreSQL) keeps it too.
    const t = await seedTransaction(store, { orderId: 'TRACE:1' });
    const reported = ev('TRACE:1', { traceContext: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00' });
    const written = await store.transaction((tx) =>
      tx.reports.recordNew({
        notification: {
          dedupeKey: `trace-${randomUUID()}`,
          gatewayOrderId: t.gatewayOrderId,
          transactionRef: t.id,
          gatewayTransactionId: null,
          transactionStatus: 'settlement',
          statusCode: '200',
          source: 'webhook',
          result: 'applied',
          payload: '{}',
        },
        transactionId: t.id,
        patch: { status: 'paid' },
        event: reported,
        now: T0,
      }),
    );
    expect(written.inserted).toBe(true);
    expect((await store.outbox.findByEventId(reported.eventId))?.traceContext).toBe(reported.traceContext);
    const claimed = await store.outbox.claimDue('i1', T0, 30_000, 10);
    expect(Object.fromEntries(claimed.map((e) => [e.orderKey, e.traceContext]))).toEqual({
      A: null,
      B: traceparent,
      'TRACE:1': reported.traceContext,
    });
  });

  it('enqueues pending events with the exact payload and a retry window starting now', async () => {
    const e = await store.outbox.enqueue(ev('A'));
    expect(e).toMatchObject({
      state: 'pending',
      attempts: 0,
      leaseToken: 0,
      payload: '{"order":"A"}',
      retryFrom: T0.toISOString(),
      nextAttemptAt: T0.toISOString(),
    });
    expect(await store.outbox.findByEventId(e.eventId)).toEqual(e);
    expect(await store.outbox.countByState()).toEqual({ pending: 1, delivered: 0, failed: 0, dead: 0 });
    expect(await store.outbox.nextDueAt()).toBe(T0.toISOString());
  });

  it('the oldest undelivered event: pending or failed, oldest by creation; delivered and dead ones do not count', async () => {
    expect(await store.outbox.oldestUndeliveredAt()).toBeUndefined();
    const a = await store.outbox.enqueue(ev('A'), at(0));
    const b = await store.outbox.enqueue(ev('B'), at(1_000));
    const c = await store.outbox.enqueue(ev('C'), at(2_000));
    expect(await store.outbox.oldestUndeliveredAt()).toBe(at(0).toISOString());
    const claimed = await store.outbox.claimDue('i', at(3_000), 30_000, 3);
    const lease = (seq: number) => claimed.find((e) => e.seq === seq)?.leaseToken ?? -1;
    expect(await store.outbox.complete(a.seq, lease(a.seq), 'i', result('dead'))).toBe(true);
    expect(await store.outbox.complete(b.seq, lease(b.seq), 'i', result('failed', at(60_000)))).toBe(true);
    // A is dead (waiting for a person), B failed and will be retried: B is the oldest to deliver.
    expect(await store.outbox.oldestUndeliveredAt()).toBe(at(1_000).toISOString());
    expect(await store.outbox.complete(c.seq, lease(c.seq), 'i', result('delivered'))).toBe(true);
    expect(await store.outbox.oldestUndeliveredAt()).toBe(at(1_000).toISOString());
    const [again] = await store.outbox.claimDue('i', at(60_000), 30_000, 1);
    expect(again?.seq).toBe(b.seq);
    await store.outbox.complete(b.seq, again?.leaseToken ?? -1, 'i', result('delivered'));
    expect(await store.outbox.oldestUndeliveredAt()).toBeUndefined();
  });

  it('the next due time counts only what can be claimed: not an event behind its predecessor, not before a lease ends', async () => {
    await store.outbox.enqueue(ev('A'));
    await store.outbox.enqueue(ev('A'));
    const [first] = await store.outbox.claimDue('i', T0, 30_000, 1);
    // the first is leased for 30 s; the second waits behind it although it is "due" now
    expect(await store.outbox.nextDueAt()).toBe(at(30_000).toISOString());
    if (!first) throw new Error('claimed nothing');
    await store.outbox.complete(first.seq, first.leaseToken, 'i', result('failed', at(60_000)));
    expect(await store.outbox.nextDueAt()).toBe(at(60_000).toISOString());
    await store.outbox.enqueue(ev('B'));
    expect(await store.outbox.nextDueAt()).toBe(T0.toISOString());
  });

  it('claims lease events and bump the fencing token; a leased event is not claimed again until the lease expires', async () => {
    const e = await store.outbox.enqueue(ev('A'));
    const [c1] = await store.outbox.claimDue('i1', T0, 30_000, 10);
    expect(c1).toMatchObject({ seq: e.seq, leaseOwner: 'i1', leaseToken: 1, leaseUntil: at(30_000).toISOString() });
    expect(await store.outbox.claimDue('i2', at(29_999), 30_000, 10)).toEqual([]);
    const [c2] = await store.outbox.claimDue('i2', at(30_000), 30_000, 10);
    expect(c2).toMatchObject({ seq: e.seq, leaseOwner: 'i2', leaseToken: 2 });
  });

  it('several completions in one go: each fenced and recorded exactly as alone, in the order given', async () => {
    for (const k of ['A', 'B', 'C', 'D']) await store.outbox.enqueue(ev(k));
    const first = await store.outbox.claimDue('i1', T0, 1_000, 10);
    // The leases run out and i2 claims all four again: i1's lease on B is stale.
    const again = await store.outbox.claimDue('i2', at(1_000), 30_000, 10);
    const [a, b, c, d] = ['A', 'B', 'C', 'D'].map((k) => again.find((e) => e.orderKey === k));
    const staleB = first.find((e) => e.orderKey === 'B');
    if (!a || !b || !c || !d || !staleB) throw new Error('claims expected');
    // D recorded before, alone: the batch's D is then stale too (its state moved on).
    expect(await store.outbox.complete(d.seq, d.leaseToken, 'i2', result('delivered'))).toBe(true);
    const kept = await store.outbox.completeMany('i2', [
      { seq: c.seq, leaseToken: c.leaseToken, result: result('failed', at(60_000)) },
      { seq: staleB.seq, leaseToken: staleB.leaseToken, result: result('delivered') },
      { seq: a.seq, leaseToken: a.leaseToken, result: result('delivered') },
      { seq: d.seq, leaseToken: d.leaseToken, result: result('dead') },
    ]);
    expect(kept).toEqual([true, false, true, false]);
    expect(await store.outbox.findByEventId(a.eventId)).toMatchObject({
      state: 'delivered',
      attempts: 1,
      leaseOwner: null,
      lastStatusCode: 200,
    });
    expect(await store.outbox.findByEventId(b.eventId)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await store.outbox.findByEventId(c.eventId)).toMatchObject({
      state: 'failed',
      attempts: 1,
      nextAttemptAt: at(60_000).toISOString(),
      lastError: 'HTTP 500',
    });
    expect(await store.outbox.findByEventId(d.eventId)).toMatchObject({ state: 'delivered', attempts: 1 });
    const attempts = await store.outbox.attemptsFor([a.seq, b.seq, c.seq, d.seq]);
    expect(attempts.map((x) => [x.eventSeq, x.attemptNo, x.outcome, x.instance, x.statusCode])).toEqual(
      expect.arrayContaining([
        [a.seq, 1, 'delivered', 'i2', 200],
        [b.seq, 1, 'rejected_stale_lease', 'i2', 200],
        [c.seq, 1, 'failed', 'i2', 500],
        [d.seq, 1, 'delivered', 'i2', 200],
        [d.seq, 2, 'rejected_stale_lease', 'i2', 500],
      ]),
    );
    expect(attempts).toHaveLength(5);
    // An event given twice is refused before anything is written.
    await expect(
      store.outbox.completeMany('i2', [
        { seq: b.seq, leaseToken: b.leaseToken, result: result('delivered') },
        { seq: b.seq, leaseToken: b.leaseToken, result: result('delivered') },
      ]),
    ).rejects.toThrow(/twice/);
    expect(await store.outbox.findByEventId(b.eventId)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await store.outbox.completeMany('i2', [])).toEqual([]);
  });

  it('a completion under a lost lease is rejected and recorded as rejected_stale_lease', async () => {
    await store.outbox.enqueue(ev('A'));
    const [stale] = await store.outbox.claimDue('i1', T0, 1_000, 10);
    const [fresh] = await store.outbox.claimDue('i2', at(1_000), 30_000, 10);
    if (!stale || !fresh) throw new Error('claims expected');
    expect(await store.outbox.complete(fresh.seq, fresh.leaseToken, 'i2', result('delivered'))).toBe(true);
    expect(await store.outbox.complete(stale.seq, stale.leaseToken, 'i1', result('failed', at(60_000)))).toBe(false);
    const after = await store.outbox.findByEventId(fresh.eventId);
    expect(after).toMatchObject({ state: 'delivered', attempts: 1, leaseOwner: null, lastStatusCode: 200 });
    const attempts = await store.outbox.attemptsFor([fresh.seq]);
    expect(attempts.map((a) => [a.attemptNo, a.outcome, a.instance])).toEqual([
      [1, 'delivered', 'i2'],
      [2, 'rejected_stale_lease', 'i1'],
    ]);
  });

  it('delivers strictly in order per order key; other orders are not held up', async () => {
    const a1 = await store.outbox.enqueue(ev('A'));
    const a2 = await store.outbox.enqueue(ev('A'));
    const b1 = await store.outbox.enqueue(ev('B'));
    const first = await store.outbox.claimDue('i', T0, 30_000, 10);
    expect(first.map((e) => e.seq)).toEqual([a1.seq, b1.seq]);
    const c = first[0];
    if (!c) throw new Error('claim expected');
    // a failed first event still holds the second back
    await store.outbox.complete(c.seq, c.leaseToken, 'i', result('failed', at(10_000)));
    expect(await store.outbox.claimDue('i', at(5_000), 30_000, 10)).toEqual([]);
    const again = await store.outbox.claimDue('i', at(10_000), 30_000, 10);
    expect(again.map((e) => e.seq)).toEqual([a1.seq]);
    const c2 = again[0];
    if (!c2) throw new Error('claim expected');
    await store.outbox.complete(c2.seq, c2.leaseToken, 'i', result('delivered'));
    expect((await store.outbox.claimDue('i', at(10_000), 30_000, 10)).map((e) => e.seq)).toEqual([a2.seq]);
  });

  it("the oldest undelivered event of one account: another account's older backlog does not count", async () => {
    await store.accounts.insert({ id: 'shop-b', name: 'B', merchantId: null }, T0);
    const b = store.forAccount('shop-b');
    await store.outbox.enqueue(ev('A0'), at(0));
    await store.outbox.enqueue(ev('A1'), at(1_000));
    expect(await store.outbox.oldestUndeliveredAt('shop-b')).toBeUndefined();
    const b1 = await b.outbox.enqueue(ev('B1'), at(5_000));
    expect(await store.outbox.oldestUndeliveredAt('shop-b')).toBe(at(5_000).toISOString());
    expect(await store.outbox.oldestUndeliveredAt('default')).toBe(at(0).toISOString());
    expect(await store.outbox.oldestUndeliveredAt()).toBe(at(0).toISOString());
    const [claimed] = await store.outbox.claimDue('i', at(6_000), 30_000, 1, 'shop-b');
    expect(claimed?.seq).toBe(b1.seq);
    await store.outbox.complete(b1.seq, claimed?.leaseToken ?? -1, 'i', result('delivered'));
    expect(await store.outbox.oldestUndeliveredAt('shop-b')).toBeUndefined();
    expect(await store.outbox.oldestUndeliveredAt('default')).toBe(at(0).toISOString());
  });

  it("an account's claim takes only that account's due events, however many of another's are due first", async () => {
    await store.accounts.insert({ id: 'shop-b', name: 'B', merchantId: null }, T0);
    const b = store.forAccount('shop-b');
    for (let i = 0; i < 5; i++) await store.outbox.enqueue(ev(`A${i}`));
    const b1 = await b.outbox.enqueue(ev('B1'), at(1_000));
    const onlyB = await store.outbox.claimDue('i', at(2_000), 30_000, 2, 'shop-b');
    expect(onlyB.map((e) => [e.seq, e.account])).toEqual([[b1.seq, 'shop-b']]);
    const onlyDefault = await store.outbox.claimDue('i', at(2_000), 30_000, 10, 'default');
    expect(onlyDefault).toHaveLength(5);
    expect(new Set(onlyDefault.map((e) => e.account))).toEqual(new Set(['default']));
  });

  it("release gives back an unused lease (a stale token does nothing); dueNow makes an account's waiting events due in the order written", async () => {
    const e1 = await store.outbox.enqueue(ev('A'));
    const e2 = await store.outbox.enqueue(ev('B'), at(1_000));
    const [c1, c2] = await store.outbox.claimDue('i', at(2_000), 30_000, 10);
    if (!c1 || !c2) throw new Error('claims expected');
    expect(await store.outbox.release(c1.seq, c1.leaseToken - 1)).toBe(false);
    expect(await store.outbox.release(c1.seq, c1.leaseToken)).toBe(true);
    const [again1] = await store.outbox.claimDue('i', at(2_000), 30_000, 10);
    expect(again1?.seq).toBe(e1.seq);
    if (!again1) throw new Error('claim expected');
    // A failed, retried at 2.9 s (already due again when the ERP answers at 3 s); B failed, retried
    // in ten minutes. C and D, written later, were never tried; A2 waits behind A.
    await store.outbox.complete(again1.seq, again1.leaseToken, 'i', result('failed', at(2_900)));
    await store.outbox.complete(c2.seq, c2.leaseToken, 'i', result('failed', at(600_000)));
    const e3 = await store.outbox.enqueue(ev('C'), at(2_500));
    const a2 = await store.outbox.enqueue(ev('A'), at(2_600));
    const e4 = await store.outbox.enqueue(ev('D'), at(2_700));
    await store.accounts.insert({ id: 'shop-b', name: 'B', merchantId: null }, T0);
    const shopB = store.forAccount('shop-b').outbox;
    const other = await shopB.enqueue(ev('X'), at(500));
    const [x] = await shopB.claimDue('i', at(2_000), 30_000, 10, 'shop-b');
    if (!x) throw new Error('claim expected');
    await shopB.complete(x.seq, x.leaseToken, 'i', result('failed', at(600_000)));
    // The failed A and B move back to the times they were written; another account's do not.
    expect(await store.outbox.dueNow('default', at(3_000))).toBe(2);
    const taken = await store.outbox.claimDue('i', at(3_000), 30_000, 10, 'default');
    expect(taken.map((e) => e.seq)).toEqual([e1.seq, e2.seq, e3.seq, e4.seq]);
    expect(taken.map((e) => e.nextAttemptAt)).toEqual([
      T0.toISOString(),
      at(1_000).toISOString(),
      at(2_500).toISOString(),
      at(2_700).toISOString(),
    ]);
    expect((await store.outbox.findByEventId(a2.eventId))?.nextAttemptAt).toBe(at(2_600).toISOString());
    expect((await shopB.findByEventId(other.eventId))?.nextAttemptAt).toBe(at(600_000).toISOString());
  });

  it('dueNow leaves a failed event while it is leased, and one written after the moment given is due at that moment', async () => {
    const e1 = await store.outbox.enqueue(ev('A'));
    const [c1] = await store.outbox.claimDue('i', at(1_000), 30_000, 10);
    if (!c1) throw new Error('claim expected');
    await store.outbox.complete(c1.seq, c1.leaseToken, 'i', result('failed', at(1_500)));
    const [leased] = await store.outbox.claimDue('i', at(2_000), 30_000, 10);
    expect(leased).toMatchObject({ seq: e1.seq, state: 'failed' });
    const e2 = await store.outbox.enqueue(ev('B'), at(2_000));
    const [c2] = await store.outbox.claimDue('i', at(2_000), 30_000, 10);
    expect(c2?.seq).toBe(e2.seq);
    if (!c2) throw new Error('claim expected');
    await store.outbox.complete(c2.seq, c2.leaseToken, 'i', result('failed', at(600_000)));
    // B's row says it was written after the moment given (another instance's clock ahead).
    expect(await store.outbox.dueNow('default', at(1_000))).toBe(1);
    expect(await store.outbox.findByEventId(e2.eventId)).toMatchObject({ nextAttemptAt: at(1_000).toISOString() });
    // A is leased until 32 s: it keeps its lease and its time.
    expect(await store.outbox.findByEventId(e1.eventId)).toMatchObject({
      leaseUntil: at(32_000).toISOString(),
      nextAttemptAt: at(1_500).toISOString(),
    });
  });

  it('a dead event holds its order: later events wait (other orders go on) until it is retried by hand and delivered, then follow with a fresh retry window', async () => {
    const a1 = await store.outbox.enqueue(ev('A'));
    const a2 = await store.outbox.enqueue(ev('A'));
    const b1 = await store.outbox.enqueue(ev('B'));
    const [c] = await store.outbox.claimDue('i', T0, 30_000, 1);
    if (!c) throw new Error('claim expected');
    await store.outbox.complete(c.seq, c.leaseToken, 'i', result('dead'));
    expect((await store.outbox.claimDue('i', T0, 30_000, 10)).map((e) => e.seq)).toEqual([b1.seq]);
    // the held event does not make the worker poll for it: only B's lease end is due
    expect(await store.outbox.nextDueAt()).toBe(at(30_000).toISOString());
    // Days later, by hand: the dead event goes first; the one behind it gets a new window.
    clock = at(4 * 24 * 3_600_000);
    await store.outbox.retryNow(a1.eventId, clock);
    const [again] = await store.outbox.claimDue('i', clock, 30_000, 10);
    expect(again?.seq).toBe(a1.seq);
    if (!again) throw new Error('claim expected');
    await store.outbox.complete(again.seq, again.leaseToken, 'i', result('delivered'));
    const next = await store.outbox.claimDue('i', clock, 30_000, 10);
    expect(next.map((e) => e.seq)).toEqual([a2.seq]);
    expect(next[0]?.retryFrom).toBe(clock.toISOString());
  });

  it('retryNow re-opens a dead or delivered event with the same id and fences an in-flight attempt', async () => {
    const e = await store.outbox.enqueue(ev('A'));
    const [c] = await store.outbox.claimDue('i', T0, 30_000, 10);
    if (!c) throw new Error('claim expected');
    await store.outbox.complete(c.seq, c.leaseToken, 'i', result('dead'));
    clock = at(3_600_000);
    const r = await store.outbox.retryNow(e.eventId, clock);
    expect(r).toMatchObject({
      eventId: e.eventId,
      state: 'pending',
      retryFrom: clock.toISOString(),
      nextAttemptAt: clock.toISOString(),
      payload: e.payload,
    });
    const [again] = await store.outbox.claimDue('i', clock, 30_000, 10);
    if (!again) throw new Error('claim expected');
    await store.outbox.retryNow(e.eventId, clock);
    expect(await store.outbox.complete(again.seq, again.leaseToken, 'i', result('delivered'))).toBe(false);
    expect(await store.outbox.retryNow('no-such-event', clock)).toBeUndefined();
  });

  it('lists newest first with a state filter and a cursor', async () => {
    const seqs: number[] = [];
    for (let i = 0; i < 5; i++) seqs.push((await store.outbox.enqueue(ev(`O${i}`))).seq);
    const [c] = await store.outbox.claimDue('i', T0, 30_000, 1);
    if (!c) throw new Error('claim expected');
    await store.outbox.complete(c.seq, c.leaseToken, 'i', result('delivered'));
    const p1 = await store.outbox.list({ limit: 2 });
    expect(p1.items.map((e) => e.seq)).toEqual([seqs[4], seqs[3]]);
    const p2 = await store.outbox.list({ limit: 2, cursor: p1.nextCursor });
    expect(p2.items.map((e) => e.seq)).toEqual([seqs[2], seqs[1]]);
    const p3 = await store.outbox.list({ limit: 2, cursor: p2.nextCursor });
    expect(p3.items.map((e) => e.seq)).toEqual([seqs[0]]);
    expect(p3.nextCursor).toBeUndefined();
    expect((await store.outbox.list({ state: 'delivered' })).items.map((e) => e.seq)).toEqual([seqs[0]]);
    expect(await store.outbox.countByState()).toEqual({ pending: 4, delivered: 1, failed: 0, dead: 0 });
  });

  it.runIf(kind === 'postgres')('two stores on one outbox never claim the same event (SKIP LOCKED)', async () => {
    const other = await db.open({ now: () => clock });
    try {
      for (let i = 0; i < 200; i++) await store.outbox.enqueue(ev(`K${i}`));
      const claimed: number[] = [];
      const worker = async (s: Store, id: string) => {
        for (;;) {
          const got = await s.outbox.claimDue(id, T0, 60_000, 7);
          if (got.length === 0) return;
          claimed.push(...got.map((e) => e.seq));
        }
      };
      await Promise.all([worker(store, 'a'), worker(other, 'b'), worker(store, 'c'), worker(other, 'd')]);
      expect(claimed).toHaveLength(200);
      expect(new Set(claimed).size).toBe(200);
    } finally {
      await other.close();
    }
  });
});
