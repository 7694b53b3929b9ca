/**
 * The gauges a scrape reads from the database: `paylink_outbox_oldest_pending_seconds` (the age of
 * the oldest ERP event still to deliver) and `paylink_payments_pending_past_expiry`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { seedTransaction } from '../helpers/seed.js';
import type { Clock } from '../../src/platform/clock.js';
import { accountsChanged } from '../../src/domain/accounts/events.js';

class ManualClock implements Clock {
  constructor(public t = Date.parse('2026-11-22T10:00:00Z')) {}
  now() {
    return new Date(this.t);
  }
}

describe.each(DATABASE_KINDS)('/metrics: age of the oldest undelivered ERP event (%s)', (kind) => {
  let ctx: LoggedApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    ctx = await makeLoggedApp(kind, {}, { clock });
  });
  afterAll(async () => ctx.close());

  const gauge = async (name = 'paylink_outbox_oldest_pending_seconds'): Promise<number | undefined> => {
    const res = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: basicAuth() } });
    expect(res.statusCode).toBe(200);
    const line = res.body.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };
  const enqueue = (order: string) =>
    ctx.services.store.outbox.enqueue(
      {
        eventId: randomUUID(),
        eventType: 'payment.status_changed',
        orderKey: order,
        orderId: order,
        mercantId: 'M',
        statusVersion: 1,
        payload: '{}',
      },
      clock.now(),
    );

  it('is 0 with nothing waiting, then the age in seconds of the oldest event not delivered', async () => {
    expect(await gauge()).toBe(0);
    await enqueue('ORDER-1');
    clock.t += 30_000;
    await enqueue('ORDER-2');
    clock.t += 60_000;
    expect(await gauge()).toBe(90);
    clock.t += 10_500;
    expect(await gauge()).toBe(100.5);
  });

  it("is per account: a second account's series is its own backlog's age, not the default account's", async () => {
    await ctx.services.store.accounts.insert({ id: 'shop-b', name: 'B', merchantId: null }, clock.now());
    accountsChanged(ctx.services.store);
    const b = 'paylink_outbox_oldest_pending_seconds{account="shop-b"}';
    expect(await gauge(b)).toBe(0);
    const before = await gauge();
    await ctx.services.store.forAccount('shop-b').outbox.enqueue(
      {
        eventId: randomUUID(),
        eventType: 'payment.status_changed',
        orderKey: 'B-1',
        orderId: 'B-1',
        mercantId: 'M',
        statusVersion: 1,
        payload: '{}',
      },
      clock.now(),
    );
    clock.t += 5_000;
    expect(await gauge(b)).toBe(5);
    expect(await gauge()).toBe((before ?? 0) + 5);
  });

  it('counts payments still pending (or challenged) after their expiry, and only those', async () => {
    const name = 'paylink_payments_pending_past_expiry';
    expect(await gauge(name)).toBe(0);
    const iso = (ms: number) => new Date(clock.t + ms).toISOString();
    await seedTransaction(ctx.services.store, { orderId: 'EXP-1', expireAt: iso(-60_000) });
    await seedTransaction(ctx.services.store, { orderId: 'EXP-2', expireAt: iso(-1), status: 'challenge' });
    await seedTransaction(ctx.services.store, { orderId: 'EXP-3', expireAt: iso(-60_000), status: 'expired' });
    await seedTransaction(ctx.services.store, { orderId: 'EXP-4', expireAt: iso(60_000) });
    await seedTransaction(ctx.services.store, { orderId: 'EXP-5', expireAt: null });
    expect(await gauge(name)).toBe(2);
    clock.t += 120_000;
    expect(await gauge(name)).toBe(3);
  });
});
