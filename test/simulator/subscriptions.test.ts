import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { basic, call, s, start, type J } from './helpers.js';

const OTHER = { serverKey: 'SB-Mid-server-subs-other', merchantId: 'G222333444' };

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await start({ merchants: [OTHER] });
});
afterAll(async () => {
  await sim.close();
});

function plan(extra: J = {}): J {
  return {
    name: 'MONTHLY-2030',
    amount: '100000',
    currency: 'IDR',
    payment_type: 'credit_card',
    token: '481111qFfqfAQKScMtPRPdZDOaeg1114',
    schedule: { interval: 1, interval_unit: 'month', max_interval: 12, start_time: '2030-01-02 03:04:05 +0700' },
    metadata: { description: 'Recurring payment for A' },
    customer_details: { first_name: 'John', email: 'john@example.com' },
    ...extra,
  };
}

async function create(body: unknown = plan()): Promise<string> {
  const r = await call(sim.baseUrl, 'POST', '/v1/subscriptions', { body });
  expect(r.status, r.text).toBe(200);
  return s(r.body.id);
}

describe('the Subscription API', () => {
  it('creates an active subscription and reads it back with its schedule, metadata and customer', async () => {
    const r = await call(sim.baseUrl, 'POST', '/v1/subscriptions', { body: plan() });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      name: 'MONTHLY-2030',
      amount: '100000',
      currency: 'IDR',
      payment_type: 'credit_card',
      token: '481111qFfqfAQKScMtPRPdZDOaeg1114',
      status: 'active',
      schedule: {
        interval: 1,
        interval_unit: 'month',
        max_interval: 12,
        start_time: '2030-01-02 03:04:05',
        next_execution_at: '2030-01-02 03:04:05',
      },
      metadata: { description: 'Recurring payment for A' },
    });
    const id = s(r.body.id);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const got = await call(sim.baseUrl, 'GET', `/v1/subscriptions/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
  });

  it('refuses a missing or bad body with 400 "Bad request" and the messages', async () => {
    const empty = await call(sim.baseUrl, 'POST', '/v1/subscriptions', { raw: 'null' });
    expect(empty.status).toBe(400);
    expect(empty.body.status_message).toBe('Bad request');
    expect(empty.body.validation_messages).toEqual(
      expect.arrayContaining(['subscription.name is required', 'subscription.amount is required']),
    );
    const zero = await call(sim.baseUrl, 'POST', '/v1/subscriptions', { body: plan({ amount: 0 }) });
    expect(zero.status).toBe(400);
    expect(zero.body.validation_messages).toEqual(['subscription.amount must be between 0.01 - 99999999999.00']);
    const bad = await call(sim.baseUrl, 'POST', '/v1/subscriptions', {
      body: plan({ currency: 'USD', payment_type: 'bank_transfer', schedule: { interval: 0, interval_unit: 'year' } }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_messages).toEqual([
      'subscription.currency must be IDR',
      'subscription.payment_type must be credit_card or gopay',
      'subscription.schedule.interval must be a whole number of at least 1',
      'subscription.schedule.interval_unit must be one of day, week, month',
    ]);
  });

  it('disable and enable switch the status; an unknown id is 404 "Subscription doesn\'t exist."', async () => {
    const id = await create();
    const off = await call(sim.baseUrl, 'POST', `/v1/subscriptions/${id}/disable`);
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ status_message: 'Subscription is updated.' });
    expect((await call(sim.baseUrl, 'GET', `/v1/subscriptions/${id}`)).body.status).toBe('inactive');
    expect((await call(sim.baseUrl, 'POST', `/v1/subscriptions/${id}/enable`)).status).toBe(200);
    expect((await call(sim.baseUrl, 'GET', `/v1/subscriptions/${id}`)).body.status).toBe('active');
    for (const [method, path] of [
      ['GET', '/v1/subscriptions/123'],
      ['POST', '/v1/subscriptions/123/disable'],
      ['PATCH', '/v1/subscriptions/123'],
    ] as const) {
      const r = await call(sim.baseUrl, method, path, method === 'PATCH' ? { body: plan() } : {});
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ status_message: "Subscription doesn't exist." });
    }
  });

  it('an update changes name, amount, metadata and the interval, but not the unit or the payment type', async () => {
    const id = await create();
    const up = await call(sim.baseUrl, 'PATCH', `/v1/subscriptions/${id}`, {
      body: plan({
        name: 'MONTHLY-2030-B',
        amount: '150000',
        schedule: { interval: 2, interval_unit: 'day' },
        metadata: { description: 'update recurring payment to ABC' },
      }),
    });
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ status_message: 'Subscription is updated.' });
    const got = await call(sim.baseUrl, 'GET', `/v1/subscriptions/${id}`);
    expect(got.body).toMatchObject({
      name: 'MONTHLY-2030-B',
      amount: '150000',
      schedule: { interval: 2, interval_unit: 'month' },
      metadata: { description: 'update recurring payment to ABC' },
    });
    const change = await call(sim.baseUrl, 'PATCH', `/v1/subscriptions/${id}`, {
      body: plan({ payment_type: 'gopay' }),
    });
    expect(change.status).toBe(400);
    expect(change.body.validation_messages).toEqual(['subscription.payment_type cannot be updated']);
    expect((await call(sim.baseUrl, 'GET', `/v1/subscriptions/${id}`)).body.payment_type).toBe('credit_card');
  });

  it("a GoPay subscription needs an enabled linked account; another merchant's key never sees a subscription", async () => {
    const gopay = await call(sim.baseUrl, 'POST', '/v1/subscriptions', {
      body: plan({ payment_type: 'gopay', gopay: { account_id: 'no-such-account' } }),
    });
    expect(gopay.status).toBe(400);
    expect(gopay.body.validation_messages).toEqual(['subscription.gopay.account_id must be an enabled GoPay account']);
    const id = await create();
    const other = await call(sim.baseUrl, 'GET', `/v1/subscriptions/${id}`, { auth: basic(OTHER.serverKey) });
    expect(other.status).toBe(404);
    const nobody = await call(sim.baseUrl, 'GET', `/v1/subscriptions/${id}`, { auth: basic('SB-Mid-server-nobody') });
    expect(nobody.status).toBe(401);
  });
});
