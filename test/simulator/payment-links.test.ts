import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { arr, basic, call, notifications, oid, receiver, s, start, waitFor, type Receiver } from './helpers.js';

let sim: RunningSimulator;
let rcv: Receiver;
beforeAll(async () => {
  rcv = await receiver();
  sim = await start({ notificationUrl: rcv.url });
});
afterAll(async () => {
  await sim.close();
  await rcv.close();
});

function linkBody(orderId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    transaction_details: { order_id: orderId, gross_amount: 150000 },
    item_details: [{ id: 'sku-1', name: 'Widget', price: 50000, quantity: 3 }],
    customer_details: { first_name: 'Budi', last_name: 'S', email: 'budi@example.com', phone: '0812' },
    expiry: { duration: 1, unit: 'days' },
    usage_limit: 1,
    ...extra,
  };
}
const create = (body: unknown, auth?: string | false) => call(sim.baseUrl, 'POST', '/v1/payment-links', { body, auth });

describe('Payment Link API', () => {
  it('creates: 200 {order_id, payment_url} with the link page under the base URL', async () => {
    const id = oid('PL');
    const r = await create(
      linkBody(id, {
        transaction_details: { order_id: id, gross_amount: 150000, payment_link_id: `pl-${id.toLowerCase()}` },
      }),
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ order_id: id, payment_url: `${sim.baseUrl}/payment-links/pl-${id.toLowerCase()}` });
  });

  it('401 error_messages is a string', async () => {
    const r = await create(linkBody(oid('PL')), basic('wrong'));
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error_messages: 'Access denied due to unauthorized request' });
  });

  it('validates like the gateway (400 error_messages array)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ transaction_details: { order_id: 'has space', gross_amount: 1 } }, 'order_id contains invalid characters'],
      [{ transaction_details: { order_id: 'x'.repeat(51), gross_amount: 1 } }, 'too long'],
      [{ transaction_details: { order_id: oid(), gross_amount: 1.5 } }, 'gross_amount must be an integer'],
      [
        linkBody(oid(), { transaction_details: { order_id: oid(), gross_amount: 1 } }),
        'is not equal to the sum of item_details',
      ],
      [linkBody(oid(), { item_details: [{ price: 150000, quantity: 1 }] }), 'item_details[0].name is required'],
      [
        linkBody(oid(), { item_details: [{ name: 'n'.repeat(51), price: 150000, quantity: 1 }] }),
        'item_details[0].name must be at most 50',
      ],
      [linkBody(oid(), { customer_details: { phone: '0'.repeat(21) } }), 'customer_details.phone must be at most 20'],
      [
        linkBody(oid(), { customer_details: { first_name: 'f'.repeat(51) } }),
        'customer_details.first_name must be at most 50',
      ],
      [
        { transaction_details: { order_id: oid(), gross_amount: 5, payment_link_id: 'Upper_Case' } },
        'payment_link_id must only contain alphanumeric characters [a-z, 0-9] and hyphens [-]',
      ],
      [linkBody(oid(), { expiry: { duration: 1, unit: 'weeks' } }), 'expiry.unit'],
      [linkBody(oid(), { usage_limit: 0 }), 'usage_limit'],
      [linkBody(oid(), { enabled_payments: ['bitcoin'] }), 'enabled_payments'],
    ];
    for (const [body, message] of cases) {
      const r = await create(body);
      expect(r.status, message).toBe(400);
      expect(JSON.stringify(r.body.error_messages)).toContain(message);
    }
    const bad = await call(sim.baseUrl, 'POST', '/v1/payment-links', { raw: '{oops' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error_messages: ['Invalid JSON data provided.'] });
  });

  it('duplicate order id → 409; duplicate payment_link_id → 400; deleted link frees its order id', async () => {
    const id = oid('PL');
    const plid = `dup-${Date.now()}`;
    expect(
      (
        await create(
          linkBody(id, { transaction_details: { order_id: id, gross_amount: 150000, payment_link_id: plid } }),
        )
      ).status,
    ).toBe(200);
    const dup = await create(linkBody(id));
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ error_messages: [`The Order ID '${id}' has been taken`] });
    const other = oid('PL');
    const taken = await create(
      linkBody(other, { transaction_details: { order_id: other, gross_amount: 150000, payment_link_id: plid } }),
    );
    expect(taken.status).toBe(400);
    expect(taken.body.error_messages).toEqual([`This Payment Link ID '${plid}' has been taken`]);
    const del = await call(sim.baseUrl, 'DELETE', `/v1/payment-links/${id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: `Payment Link with Order ID ${id} deleted` });
    expect((await call(sim.baseUrl, 'DELETE', `/v1/payment-links/${id}`)).status).toBe(404);
    expect((await call(sim.baseUrl, 'GET', `/v1/payment-links/${id}`)).status).toBe(404);
    expect((await fetch(`${sim.baseUrl}/payment-links/${plid}`)).status).toBe(410);
    expect((await create(linkBody(id))).status).toBe(200);
  });

  it('GET details has the documented shape', async () => {
    const id = oid('PL');
    await create(
      linkBody(id, {
        expiry: { start_time: '2030-01-01 10:00 +0700', duration: 2, unit: 'days' },
        custom_field1: 'cf',
      }),
    );
    const r = await call(sim.baseUrl, 'GET', `/v1/payment-links/${id}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      order_id: id,
      payment_link_type: 'FIXED_AMOUNT',
      merchant_id: 'G123456789',
      usage_limit: 1,
      usage: 0,
      gross_amount: 150000,
      expiry_start: '2030-01-01 10:00 +0700',
      expiry_duration: 2,
      expiry_unit: 'days',
      purchases: [],
      customer_details: { first_name: 'Budi', email: 'budi@example.com' },
    });
    expect(typeof r.body.id).toBe('string');
    expect(s(r.body.payment_link_url)).toBe(`${sim.baseUrl}/payment-links/${s(r.body.payment_link_id)}`);
    expect(arr(r.body.item_details)[0]).toMatchObject({
      id: 'sku-1',
      item_id: 'sku-1',
      name: 'Widget',
      price: 50000,
      quantity: 3,
    });
  });

  it('DYNAMIC_AMOUNT: bounds checked at creation; each purchase pays the amount entered, the notification and status carry it; outside the bounds is refused', async () => {
    const dynamic = (order_id: string, dynamic_amount: unknown) => ({
      transaction_details: { order_id, gross_amount: 1 },
      payment_link_type: 'DYNAMIC_AMOUNT',
      dynamic_amount,
      usage_limit: 2,
    });
    const refused: [unknown, string][] = [
      [undefined, 'dynamic_amount is required'],
      [{ max_amount: 5000 }, 'dynamic_amount.min_amount is required'],
      [{ min_amount: 0, max_amount: 5000 }, 'dynamic_amount.min_amount must be an integer greater than 0'],
      [{ min_amount: 6000, max_amount: 5000 }, 'max_amount must be greater than or equal to min_amount'],
      [{ min_amount: 1000, max_amount: 5000, preset_amount: 9000 }, 'preset_amount must be between'],
    ];
    for (const [bounds, message] of refused) {
      const r = await create(dynamic(oid('DYN'), bounds));
      expect(r.status, message).toBe(400);
      expect(JSON.stringify(r.body.error_messages)).toContain(message);
    }
    expect((await create({ ...dynamic(oid('DYN'), {}), payment_link_type: 'OTHER' })).status).toBe(400);

    const id = oid('DYN');
    // Items and gross_amount are ignored on such a link: a sum that does not match is no error.
    const made = await create({
      ...dynamic(id, { min_amount: 10000, max_amount: 30000 }),
      item_details: [{ name: 'x', price: 5, quantity: 1 }],
    });
    expect(made.status).toBe(200);
    const details = await call(sim.baseUrl, 'GET', `/v1/payment-links/${id}`);
    expect(details.body).toMatchObject({
      payment_link_type: 'DYNAMIC_AMOUNT',
      dynamic_amount: { min_amount: 10000, max_amount: 30000 },
    });
    const pay = (body: unknown) => call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false, body });
    for (const amount of [9999, 30001, '12.000']) {
      const r = await pay({ payment_type: 'bank_transfer', amount });
      expect(r.status, String(amount)).toBe(400);
      expect(r.body).toMatchObject({
        error: 'bad_request',
        message: 'amount must be an integer between 10000 and 30000',
      });
    }
    expect((await pay({ payment_type: 'bank_transfer' })).status).toBe(400);
    const paid = await pay({ payment_type: 'bank_transfer', amount: '27500' });
    expect(paid.status).toBe(200);
    const purchaseId = s(paid.body.order_id);
    expect(paid.body).toMatchObject({ gross_amount: '27500.00', transaction_status: 'settlement' });
    expect((await call(sim.baseUrl, 'GET', `/v2/${purchaseId}/status`)).body.gross_amount).toBe('27500.00');
    await waitFor(() => rcv.received.filter((x) => x.body.order_id === purchaseId).length >= 2 || undefined);
    const sent = rcv.received.filter((x) => x.body.order_id === purchaseId).map((x) => x.body.gross_amount);
    expect(sent).toEqual(['27500.00', '27500.00']);

    // The hosted page: the payer enters the amount with the method; outside the bounds it is refused.
    const pageUrl = s(made.body.payment_url);
    const form = (body: string) =>
      fetch(pageUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
        redirect: 'manual',
      });
    const refusedPage = await form('method=bca_va&amount=5000');
    expect(refusedPage.status).toBe(400);
    expect(await refusedPage.text()).toContain('Amount not accepted');
    const chosen = await form('method=bca_va&amount=12000');
    expect(chosen.status).toBe(303);
    const txid = String(chosen.headers.get('location')).split('/t/')[1];
    const viaPage = await call(sim.baseUrl, 'GET', `/v2/${String(txid)}/status`);
    expect(viaPage.body).toMatchObject({ gross_amount: '12000.00', transaction_status: 'pending' });
  });

  it('a purchase is a separate transaction with order id + "-" + 13-digit ms timestamp', async () => {
    const id = oid('PL');
    await create(linkBody(id));
    const paid = await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, {
      auth: false,
      body: { payment_type: 'bank_transfer' },
    });
    expect(paid.status).toBe(200);
    const purchaseId = s(paid.body.order_id);
    expect(purchaseId).toMatch(new RegExp(`^${id}-\\d{13}$`));
    expect(paid.body).toMatchObject({
      transaction_status: 'settlement',
      status_code: '200',
      gross_amount: '150000.00',
    });
    expect((await call(sim.baseUrl, 'GET', `/v2/${id}/status`)).body.status_code).toBe('404');
    expect((await call(sim.baseUrl, 'GET', `/v2/${purchaseId}/status`)).body.transaction_status).toBe('settlement');
    const details = await call(sim.baseUrl, 'GET', `/v1/payment-links/${id}`);
    expect(details.body.usage).toBe(1);
    expect(arr(details.body.purchases)[0]).toMatchObject({
      order_id: purchaseId,
      payment_status: 'SETTLEMENT',
      payment_method: 'BANK_TRANSFER',
    });
    await waitFor(() => rcv.received.filter((x) => x.body.order_id === purchaseId).length >= 2 || undefined);
    const seen = rcv.received.filter((x) => x.body.order_id === purchaseId).map((x) => x.body.transaction_status);
    expect(seen).toEqual(['pending', 'settlement']);
    const listed = await notifications(sim.baseUrl, `?order_id=${id}`);
    expect(listed.map((n) => n.order_id)).toEqual([purchaseId, purchaseId]);
    const again = await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
    expect(again.status).toBe(409);
  });

  it('an expired purchase appears as EXPIRE and releases the reserved use', async () => {
    const id = oid('PL');
    await create(linkBody(id));
    const r = await fetch(
      `${sim.baseUrl}/payment-links/${s((await call(sim.baseUrl, 'GET', `/v1/payment-links/${id}`)).body.payment_link_id)}`,
      {
        method: 'POST',
        body: new URLSearchParams({ method: 'gopay' }),
        redirect: 'manual',
      },
    );
    expect(r.status).toBe(303);
    const exp = await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/expire`, { auth: false });
    expect(exp.body.transaction_status).toBe('expire');
    const d = await call(sim.baseUrl, 'GET', `/v1/payment-links/${id}`);
    expect(arr(d.body.purchases)[0]).toMatchObject({ payment_status: 'EXPIRE', payment_method: 'GOPAY' });
    const paid = await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
    expect(paid.body.transaction_status).toBe('settlement');
    expect(arr((await call(sim.baseUrl, 'GET', `/v1/payment-links/${id}`)).body.purchases)).toHaveLength(2);
  });

  it('refuses an expiry in the past; a link that runs out answers 410 and frees its order id', async () => {
    const past = await create(
      linkBody(oid('PL'), { expiry: { start_time: '2020-01-01 10:00:00 +0700', duration: 1, unit: 'minutes' } }),
    );
    expect(past.status).toBe(400);
    const id = oid('PL');
    const start = new Date(Math.floor((Date.now() - 58_500) / 1000) * 1000 + 7 * 3600_000)
      .toISOString()
      .slice(0, 19)
      .replace('T', ' ');
    const r = await create(linkBody(id, { expiry: { start_time: `${start} +0700`, duration: 1, unit: 'minute' } }));
    expect(r.status).toBe(200);
    const url = s(r.body.payment_url);
    expect((await fetch(url)).status).toBe(200);
    await waitFor(async () => ((await fetch(url)).status === 410 ? true : undefined), 4000, 100);
    expect((await create(linkBody(id))).status).toBe(200);
  });
});
