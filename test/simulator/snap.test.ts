import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { basic, call, charge, oid, s, start } from './helpers.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(async () => {
  await sim.close();
});

const snap = (orderId: string, extra: Record<string, unknown> = {}, auth?: string | false) =>
  call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
    body: { transaction_details: { order_id: orderId, gross_amount: 10000 }, ...extra },
    auth,
  });

async function pick(token: string, method = 'bca_va'): Promise<number> {
  const r = await fetch(`${sim.baseUrl}/snap/v3/redirection/${token}`, {
    method: 'POST',
    body: new URLSearchParams({ method }),
    redirect: 'manual',
  });
  await r.text();
  return r.status;
}

describe('Snap', () => {
  it('creates a token: 201 {token, redirect_url} on the same base URL', async () => {
    const r = await snap(oid());
    expect(r.status).toBe(201);
    expect(s(r.body.token)).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.redirect_url).toBe(`${sim.baseUrl}/snap/v3/redirection/${s(r.body.token)}`);
    expect(Object.keys(r.body).sort()).toEqual(['redirect_url', 'token']);
  });

  it('401 carries the two-string error_messages array', async () => {
    for (const auth of [false, basic('nope')] as const) {
      const r = await snap(oid(), {}, auth);
      expect(r.status).toBe(401);
      expect(r.body.error_messages).toEqual([
        'Access denied due to unauthorized transaction, please check client or server key',
        'Visit https://snap-docs.midtrans.com/#request-headers for more details',
      ]);
    }
  });

  it('validation errors are 400 error_messages arrays', async () => {
    const r1 = await snap(oid(), { item_details: [{ id: 'a', name: 'A', price: 100, quantity: 1 }] });
    expect(r1.status).toBe(400);
    expect(r1.body.error_messages).toEqual([
      'transaction_details.gross_amount is not equal to the sum of item_details',
    ]);
    const r2 = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: 'a\tb', gross_amount: 0 } },
    });
    expect(r2.status).toBe(400);
    expect(JSON.stringify(r2.body.error_messages)).toContain('order_id contains invalid characters');
    expect(JSON.stringify(r2.body.error_messages)).toContain('gross_amount must be greater than or equal to 0.01');
    const r3 = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', { raw: 'nope' });
    expect(r3.status).toBe(400);
    expect(r3.body.error_messages).toEqual(['Invalid JSON data provided.']);
    const r4 = await snap(oid(), { expiry: { duration: 10, unit: 'second' } });
    expect(JSON.stringify(r4.body.error_messages)).toContain('between 20 seconds and 7 days');
  });

  it('re-using an order id before a method is picked gives a new token and invalidates the old one', async () => {
    const id = oid();
    const first = await snap(id);
    const second = await snap(id);
    expect(second.status).toBe(201);
    expect(second.body.token).not.toBe(first.body.token);
    const oldPage = await fetch(s(first.body.redirect_url));
    expect(oldPage.status).toBe(410);
    expect((await fetch(s(second.body.redirect_url))).status).toBe(200);
  });

  it("status is 404 until a method is picked; after that the order id is 'sudah digunakan'", async () => {
    const id = oid();
    const t = await snap(id);
    expect((await call(sim.baseUrl, 'GET', `/v2/${id}/status`)).body).toMatchObject({
      status_code: '404',
      status_message: "Transaction doesn't exist.",
    });
    expect(await pick(s(t.body.token))).toBe(303);
    const st = await call(sim.baseUrl, 'GET', `/v2/${id}/status`);
    expect(st.body).toMatchObject({
      status_code: '201',
      transaction_status: 'pending',
      payment_type: 'bank_transfer',
      order_id: id,
    });
    const again = await snap(id);
    expect(again.status).toBe(400);
    expect(again.body.error_messages).toEqual(['transaction_details.order_id sudah digunakan']);
    expect((await charge(sim.baseUrl, id)).body.status_code).toBe('406');
  });

  it('an order id used by a Core charge is refused by Snap, and usable again after expiry', async () => {
    const id = oid();
    await charge(sim.baseUrl, id);
    expect((await snap(id)).status).toBe(400);
    await call(sim.baseUrl, 'POST', `/v2/${id}/expire`);
    expect((await snap(id)).status).toBe(201);
  });

  it('enabled_payments limits the methods offered (aliases expand)', async () => {
    const t = await snap(oid(), { enabled_payments: ['cstore', 'gopay'] });
    const html = await (await fetch(s(t.body.redirect_url))).text();
    expect(html).toContain('data-method="alfamart"');
    expect(html).toContain('data-method="indomaret"');
    expect(html).toContain('data-method="gopay"');
    expect(html).not.toContain('data-method="bca_va"');
    expect(await pick(s(t.body.token), 'bca_va')).toBe(400);
  });
});
