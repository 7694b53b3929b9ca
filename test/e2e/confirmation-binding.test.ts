/**
 * A captured notification's unsigned fields cannot steer the status API's confirmation: paylink asks
 * the gateway about the SIGNED order id and applies only an answer about that order and amount.
 * The hostile probe's steps (another order's transaction id in a genuine notification) on the
 * webhook, the operator replay and an expired order; and a property over every unsigned field.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { basicAuth } from '../helpers/services.js';

const KEY = 'erp-key-binding-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

interface SimNotification {
  order_id: string;
  transaction_status: string;
  payload: Record<string, unknown>;
}

describe.each(DATABASE_KINDS)('confirmation is bound to the signed order id (%s)', (kind) => {
  let e: E2EContext;
  const orders: Record<string, { gatewayOrderId: string; transactionId: string }> = {};
  const genuine: Array<Record<string, unknown>> = [];

  async function charge(orderId: string, nominal: number): Promise<{ gatewayOrderId: string; transactionId: string }> {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      headers: auth,
      payload: { order_id: orderId, nominal, payment_type: 'qris' },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json() as { gateway_order_id: string; transaction_id: string };
    orders[orderId] = { gatewayOrderId: body.gateway_order_id, transactionId: body.transaction_id };
    return orders[orderId];
  }
  const status = async (orderId: string) => (await e.services.store.transactions.findByOrderId(orderId))?.status;
  /** Polls `fn` until it returns something other than undefined (5 s at most). */
  async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
    for (let i = 0; i < 250; i++) {
      const v = await fn();
      if (v !== undefined) return v;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  const statusIs = (orderId: string, want: string) =>
    until(`${orderId} ${want}`, async () => ((await status(orderId)) === want ? true : undefined));
  async function sent(gatewayOrderId: string, transactionStatus: string): Promise<Record<string, unknown>> {
    const found = await until(`${transactionStatus} notification of ${gatewayOrderId}`, async () => {
      const r = await e.sim.get(`/_sim/notifications?order_id=${encodeURIComponent(gatewayOrderId)}`);
      return (r.body as { notifications: SimNotification[] }).notifications.find(
        (n) => n.transaction_status === transactionStatus,
      );
    });
    return found.payload;
  }
  const outboxCount = async () =>
    Number(
      (await sql<{ n: number | string }>`select count(*) as n from outbox_events`.execute(e.store.db)).rows[0]?.n ?? 0,
    );
  const eventsFor = async (orderId: string) =>
    Number(
      (
        await sql<{ n: number | string }>`select count(*) as n from outbox_events where order_id = ${orderId}`.execute(
          e.store.db,
        )
      ).rows[0]?.n ?? 0,
    );
  const postWebhook = (body: unknown) =>
    e.app.inject({
      method: 'POST',
      url: '/webhook/midtrans',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const postReplay = (body: unknown) =>
    e.app.inject({
      method: 'POST',
      url: '/webhook/midtrans/replay',
      headers: { 'content-type': 'application/json', authorization: basicAuth() },
      payload: JSON.stringify(body),
    });

  beforeAll(async () => {
    e = await startE2E(kind, {
      listen: true,
      env: { API_KEYS: KEY },
      serviceOptions: { runtimeConfigCacheMs: 0 },
      simulator: { notificationTimeoutMs: 2_000 },
    });
    // A: large, left unpaid. B: small, paid. X: expired. P: paid, then partly refunded. L: a link bought once.
    const a = await charge('BIND-A', 5_000_000);
    const b = await charge('BIND-B', 1_000);
    const x = await charge('BIND-X', 75_000);
    const p = await charge('BIND-P', 40_000);
    expect((await e.sim.post(`/_sim/transactions/${b.gatewayOrderId}/pay`)).status).toBe(200);
    expect((await e.sim.post(`/_sim/transactions/${x.gatewayOrderId}/expire`)).status).toBe(200);
    expect((await e.sim.post(`/_sim/transactions/${p.gatewayOrderId}/pay`)).status).toBe(200);
    await statusIs('BIND-P', 'paid');
    expect(
      (
        await e.app.inject({
          method: 'POST',
          url: '/api/payments/BIND-P/refund',
          headers: auth,
          payload: { amount: 15_000 },
        })
      ).statusCode,
    ).toBe(200);
    const link = await e.app.inject({
      method: 'POST',
      url: '/api/payment-links',
      headers: auth,
      payload: { order_id: 'BIND-L', nominal: 30_000 },
    });
    expect(link.statusCode).toBe(201);
    const linkGatewayId = String((link.json() as { gateway_order_id: string }).gateway_order_id);
    expect((await e.sim.post(`/_sim/transactions/${linkGatewayId}/pay`, { payment_type: 'gopay' })).status).toBe(200);
    await statusIs('BIND-B', 'paid');
    await statusIs('BIND-X', 'expired');
    await statusIs('BIND-L', 'paid');
    await statusIs('BIND-P', 'partially_refunded');
    genuine.push(
      await sent(a.gatewayOrderId, 'pending'),
      await sent(b.gatewayOrderId, 'settlement'),
      await sent(x.gatewayOrderId, 'expire'),
      await sent(p.gatewayOrderId, 'settlement'),
    );
    const all = (await e.sim.get('/_sim/notifications')).body as { notifications: SimNotification[] };
    const linkNotes = all.notifications.filter((n) => n.order_id.startsWith(`${linkGatewayId}-`));
    expect(linkNotes.length).toBeGreaterThan(0);
    genuine.push(...linkNotes.map((n) => n.payload));
    const refundNote = all.notifications.find(
      (n) => n.order_id === p.gatewayOrderId && n.transaction_status === 'partial_refund',
    );
    if (refundNote) genuine.push(refundNote.payload);
    // Everything the gateway sent has been taken in: what follows must change nothing.
    await new Promise((r) => setTimeout(r, 300));
  }, 30_000);
  afterAll(async () => e.close());

  it("the probe: A's genuine pending notification with B's transaction id is confirmed by A's own order id; A stays pending, no event, and a later status check keeps it so", async () => {
    const before = await eventsFor('BIND-A');
    const real = genuine[0] ?? {};
    const asked = (await e.sim.requests('/status')).length;
    const res = await postWebhook({ ...real, transaction_id: orders['BIND-B']?.transactionId });
    expect(res.statusCode).toBe(200);
    // The gateway, asked about A, says A is pending: nothing new.
    expect(res.json()).toMatchObject({ result: 'duplicate' });
    const statusCalls = (await e.sim.requests('/status')).slice(asked).map((r) => r.path);
    expect(statusCalls).toEqual([`/v2/${orders['BIND-A']?.gatewayOrderId}/status`]);
    expect(await status('BIND-A')).toBe('pending');
    expect(await eventsFor('BIND-A')).toBe(before);
    const stored = await e.services.store.transactions.findByOrderId('BIND-A');
    expect(stored?.gatewayTransactionId).toBe(orders['BIND-A']?.transactionId);
    const check = await e.app.inject({ method: 'GET', url: '/api/payments/BIND-A/status', headers: auth });
    expect(check.json()).toMatchObject({ status: 'pending' });
    expect(await eventsFor('BIND-A')).toBe(before);
  });

  it('an answer about another amount (the order id used again at the gateway for another sum) is refused and kept unverified with the reason', async () => {
    const r = await charge('BIND-R', 75_000);
    expect((await e.sim.post(`/_sim/transactions/${r.gatewayOrderId}/expire`)).status).toBe(200);
    await statusIs('BIND-R', 'expired');
    const expiredNote = await sent(r.gatewayOrderId, 'expire');
    // Someone charges the same gateway order id again, directly at the gateway, for another amount.
    const again = await e.sim.gateway('POST', '/v2/charge', {
      payment_type: 'qris',
      transaction_details: { order_id: r.gatewayOrderId, gross_amount: 99_000 },
    });
    expect(again.status).toBe(200);
    await statusIs('BIND-R', 'pending');
    const events = await eventsFor('BIND-R');
    const res = await postWebhook({ ...expiredNote, transaction_status: 'settlement', fraud_status: 'accept' });
    expect(res.json()).toMatchObject({ result: 'unverified' });
    expect(await status('BIND-R')).toBe('pending');
    expect(await eventsFor('BIND-R')).toBe(events);
    const notes = await e.services.store.notifications.listForOrder(r.gatewayOrderId);
    expect(notes.find((n) => n.result === 'unverified')?.reason).toMatch(/another amount \(99000\.00\)/);
  });

  it('the same through the operator replay, and with a settlement status written in as well', async () => {
    const before = await eventsFor('BIND-A');
    const real = genuine[0] ?? {};
    const res = await postReplay({
      ...real,
      transaction_id: orders['BIND-B']?.transactionId,
      transaction_status: 'settlement',
      fraud_status: 'accept',
    });
    expect(res.statusCode).toBe(200);
    expect(await status('BIND-A')).toBe('pending');
    expect(await eventsFor('BIND-A')).toBe(before);
  });

  it("an expired order's notification with a paid order's transaction id leaves it expired", async () => {
    const before = await eventsFor('BIND-X');
    const res = await postWebhook({ ...(genuine[2] ?? {}), transaction_id: orders['BIND-B']?.transactionId });
    expect(res.statusCode).toBe(200);
    expect(await status('BIND-X')).toBe('expired');
    expect(await eventsFor('BIND-X')).toBe(before);
  });

  it("a status check whose stored transaction id names another order's transaction asks again by the order id and flags the payment", async () => {
    const a = await e.services.store.transactions.findByOrderId('BIND-A');
    await e.services.store.transactions.update(a?.id ?? '', {
      gatewayTransactionId: orders['BIND-B']?.transactionId ?? null,
    });
    const before = await eventsFor('BIND-A');
    const asked = (await e.sim.requests('/status')).length;
    const check = await e.app.inject({ method: 'GET', url: '/api/payments/BIND-A/status', headers: auth });
    expect(check.json()).toMatchObject({ status: 'pending' });
    expect((await e.sim.requests('/status')).slice(asked).map((r) => r.path)).toEqual([
      `/v2/${orders['BIND-B']?.transactionId}/status`,
      `/v2/${orders['BIND-A']?.gatewayOrderId}/status`,
    ]);
    expect((await e.services.store.transactions.findByOrderId('BIND-A'))?.flags).toMatch(/status_answer_mismatch/);
    expect(await eventsFor('BIND-A')).toBe(before);
  });

  it('property: no edit of the unsigned fields of any genuine notification changes a payment or writes an ERP event', async () => {
    const snapshot = async () =>
      (await e.services.store.transactions.list({ limit: 100 })).items
        .map((t) =>
          [
            t.orderId,
            t.status,
            t.statusVersion,
            t.refundedAmount,
            t.gatewayTransactionId,
            t.paymentType,
            t.fraudStatus,
          ].join('|'),
        )
        .sort();
    const before = { txs: await snapshot(), events: await outboxCount() };
    const otherIds = [
      ...Object.values(orders).map((o) => o.transactionId),
      'b2f0b4a8-0000-4000-8000-000000000000',
      '',
      'x'.repeat(80),
    ];
    const edits = fc.record(
      {
        transaction_id: fc.constantFrom(...otherIds),
        transaction_status: fc.constantFrom(
          'settlement',
          'capture',
          'pending',
          'deny',
          'cancel',
          'expire',
          'refund',
          'partial_refund',
          'chargeback',
          'partial_chargeback',
          'failure',
          'authorize',
          'SETTLEMENT',
          'paid',
        ),
        fraud_status: fc.constantFrom('accept', 'challenge', 'deny', null),
        payment_type: fc.constantFrom('credit_card', 'gopay', 'bank_transfer', 'echannel', 'cstore', 'qris'),
        refund_amount: fc.constantFrom('1.00', '15000.00', '5000000.00', '999999999999.00'),
        currency: fc.constantFrom('IDR', 'USD', 'SGD'),
        settlement_time: fc.constantFrom('2020-01-01 00:00:00', '2099-12-31 23:59:59'),
        transaction_time: fc.constantFrom('2020-01-01 00:00:00', '2099-12-31 23:59:59'),
        store: fc.constantFrom('indomaret', 'alfamart'),
        permata_va_number: fc.constantFrom('8778004890127981'),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: genuine.length - 1 }), edits, fc.boolean(), async (i, edit, viaReplay) => {
        const real = genuine[i] ?? {};
        const res = await (viaReplay ? postReplay : postWebhook)({ ...real, ...edit });
        expect(res.statusCode).toBe(200);
        expect(await snapshot()).toEqual(before.txs);
        expect(await outboxCount()).toBe(before.events);
      }),
      { numRuns: 60 },
    );
  }, 60_000);
});
