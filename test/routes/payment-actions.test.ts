import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { seedTransaction } from '../helpers/seed.js';
import { signedNotification } from '../helpers/notifications.js';

const KEY = 'route-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

describe.each(DATABASE_KINDS)('refund, cancel and expire routes (%s)', (kind) => {
  let t: TestContext;
  beforeEach(async () => {
    // No simulator listens here: a request that got past validation would fail to reach the gateway (503).
    // Notifications are hand-signed here and taken on their word (confirmation has its own tests).
    t = await makeTestApp(kind, {
      API_KEYS: KEY,
      MIDTRANS_MODE: 'simulator',
      MIDTRANS_API_BASE_URL: 'http://127.0.0.1:9',
      MIDTRANS_CONFIRM_NOTIFICATIONS: 'false',
    });
  });
  afterEach(async () => t.close());
  const post = (url: string, payload?: object, headers: Record<string, string> = auth) =>
    t.app.inject({ method: 'POST', url, ...(payload ? { payload } : {}), headers });
  const hook = (n: Parameters<typeof signedNotification>[0]) =>
    t.app.inject({ method: 'POST', url: '/webhook/midtrans', payload: signedNotification(n) });

  it('need the API key, and refuse a bad body or Idempotency-Key before anything else', async () => {
    await seedTransaction(t.services.store, {
      orderId: 'R/1',
      status: 'paid',
      kind: 'charge',
      paymentType: 'qris',
      gatewayTransactionId: 'gw-r1',
    });
    for (const action of ['refund', 'cancel', 'expire']) {
      const res = await post(`/api/payments/R%2F1/${action}`, undefined, {});
      expect(res.statusCode, action).toBe(401);
      expect(res.json().code).toBe('UNAUTHORIZED');
    }
    const bad: object[] = [
      { amount: '100' },
      { amount: 1.5 },
      { reason: '' },
      { reason: 'x'.repeat(256) },
      { amount: 1, refund_key: 'mine' },
    ];
    for (const payload of bad) {
      const res = await post('/api/payments/R%2F1/refund', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
    expect((await post('/api/payments/R%2F1/refund', { amount: 0 })).json()).toMatchObject({
      code: 'AMOUNT_INVALID',
      errors: [{ path: 'amount' }],
    });
    expect((await post('/api/payments/R%2F1/refund', { amount: 150001 })).json()).toMatchObject({
      code: 'AMOUNT_INVALID',
    });
    expect((await post('/api/payments/R%2F1/refund', {}, { ...auth, 'idempotency-key': 'ä' })).statusCode).toBe(400);
    expect((await post('/api/payments/unknown/cancel')).statusCode).toBe(404);
    // Past validation, the gateway is unreachable: 503, and nothing was refunded locally.
    const down = await post('/api/payments/R%2F1/refund', { amount: 100 });
    expect(down.statusCode).toBe(503);
    expect((await t.services.store.transactions.findByOrderId('R/1'))?.refundedAmount).toBe(0);
  });

  it('name the state in a 409 and never reach the gateway for it', async () => {
    await seedTransaction(t.services.store, { orderId: 'S-pending', kind: 'charge' });
    await seedTransaction(t.services.store, {
      orderId: 'S-settled',
      kind: 'charge',
      status: 'paid',
      transactionStatus: 'settlement',
    });
    await seedTransaction(t.services.store, { orderId: 'S-failed', kind: 'charge', status: 'failed' });
    const cases: Array<[string, string, string, string]> = [
      ['S-pending', 'refund', 'PAYMENT_NOT_PAID', 'pending'],
      ['S-settled', 'cancel', 'PAYMENT_SETTLED', 'paid'],
      ['S-settled', 'expire', 'PAYMENT_SETTLED', 'paid'],
      ['S-failed', 'cancel', 'PAYMENT_CLOSED', 'failed'],
      ['S-failed', 'refund', 'PAYMENT_NOT_PAID', 'failed'],
    ];
    for (const [id, action, code, state] of cases) {
      const res = await post(`/api/payments/${id}/${action}`);
      expect(res.statusCode, `${id} ${action}`).toBe(409);
      expect(res.json(), `${id} ${action}`).toMatchObject({ code, payment_status: state, status: 409 });
    }
  });

  it('a further partial refund reported by the gateway is news; the same or a smaller amount is not', async () => {
    const tx = await seedTransaction(t.services.store, {
      orderId: 'N-1',
      kind: 'charge',
      nominal: 100000,
      status: 'paid',
      transactionStatus: 'settlement',
      gatewayTransactionId: 'gw-n1',
      statusVersion: 1,
    });
    const base = {
      order_id: tx.gatewayOrderId,
      transaction_id: 'gw-n1',
      gross_amount: '100000.00',
      payment_type: 'qris',
    };
    expect(
      (await hook({ ...base, transaction_status: 'partial_refund', refund_amount: '10000.00' })).json(),
    ).toMatchObject({ result: 'applied' });
    expect(
      (
        await hook({
          ...base,
          transaction_status: 'partial_refund',
          refund_amount: '10000.00',
          status_message: 'again',
        })
      ).json(),
    ).toMatchObject({ result: 'duplicate' });
    expect(
      (await hook({ ...base, transaction_status: 'partial_refund', refund_amount: '30000.00' })).json(),
    ).toMatchObject({ result: 'applied' });
    expect(
      (await hook({ ...base, transaction_status: 'partial_refund', refund_amount: '20000.00' })).json().result,
    ).not.toBe('applied');
    const events = (await t.services.store.outbox.list({ limit: 50 })).items
      .filter((e) => e.orderId === 'N-1')
      .map((e) => JSON.parse(e.payload))
      .sort((a, b) => a.status_version - b.status_version);
    expect(events.map((e) => [e.status, e.refunded_amount, e.status_version])).toEqual([
      ['partially_refunded', 10000, 2],
      ['partially_refunded', 30000, 3],
    ]);
    expect(await t.services.store.transactions.findByOrderId('N-1')).toMatchObject({
      status: 'partially_refunded',
      refundedAmount: 30000,
    });
  });
});
