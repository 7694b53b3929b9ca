import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { signedNotification } from '../helpers/notifications.js';

const KEY = 'erp-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

describe.each(DATABASE_KINDS)('charge, Snap and status against the simulator (%s)', (kind) => {
  let e: E2EContext;
  beforeEach(async () => {
    // The race test below hand-signs a settlement the simulator has not made; confirmation has its own tests.
    e = await startE2E(kind, { env: { API_KEYS: KEY, MIDTRANS_CONFIRM_NOTIFICATIONS: 'false' } });
  });
  afterEach(async () => e.close());
  const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
    e.app.inject({ method: 'POST', url, payload, headers: { ...auth, ...headers } });
  const status = (id: string) =>
    e.app.inject({ method: 'GET', url: `/api/payments/${encodeURIComponent(id)}/status`, headers: auth });

  it('bank transfer BCA: 201 with VA numbers, the mapping stored, the gateway request built from the input', async () => {
    const res = await post('/api/charge', {
      order_id: 'PO/5:1',
      nominal: '125000',
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bca' },
      customer: { first_name: 'Rina', email: 'rina@example.com' },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      order_id: 'PO/5:1',
      gateway_order_id: 'PO.5.1',
      status: 'pending',
      transaction_status: 'pending',
      payment_type: 'bank_transfer',
      transaction_id: expect.any(String),
    });
    expect(body.va_numbers).toEqual([{ bank: 'bca', va_number: expect.stringMatching(/^\d+$/) }]);
    const [call] = await e.sim.requests('/v2/charge');
    expect(call?.body).toMatchObject({
      payment_type: 'bank_transfer',
      transaction_details: { order_id: 'PO.5.1', gross_amount: 125000 },
      bank_transfer: { bank: 'bca' },
      customer_details: { first_name: 'Rina', email: 'rina@example.com' },
    });
    const tx = await e.services.store.transactions.findByGatewayOrderId('PO.5.1');
    expect(tx).toMatchObject({
      kind: 'charge',
      orderId: 'PO/5:1',
      mercantId: 'PO/5',
      gatewayTransactionId: body.transaction_id,
      nominal: 125000,
    });
    // Same order and body again → 200 with the stored answer; another body → 409.
    const again = await post('/api/charge', {
      order_id: 'PO/5:1',
      nominal: 125000,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bca' },
      customer: { first_name: 'Rina', email: 'rina@example.com' },
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ transaction_id: body.transaction_id, va_numbers: body.va_numbers });
    expect((await post('/api/charge', { order_id: 'PO/5:1', nominal: 1, payment_type: 'qris' })).statusCode).toBe(409);
    expect(await e.sim.requests('/v2/charge')).toHaveLength(1);
  });

  it('method details per type: permata, echannel, cstore, qris, gopay', async () => {
    const cases: Array<[object, (b: Record<string, unknown>) => void]> = [
      [
        { payment_type: 'bank_transfer', bank_transfer: { bank: 'permata' } },
        (b) => expect(b.permata_va_number).toMatch(/^\d+$/),
      ],
      [
        { payment_type: 'echannel' },
        (b) => expect(b).toMatchObject({ bill_key: expect.any(String), biller_code: expect.any(String) }),
      ],
      [
        { payment_type: 'cstore', cstore: { store: 'indomaret', message: 'thanks' } },
        (b) => expect(b.payment_code).toEqual(expect.any(String)),
      ],
      [
        { payment_type: 'qris' },
        (b) => expect(b).toMatchObject({ qr_string: expect.any(String), actions: expect.any(Array) }),
      ],
      [
        { payment_type: 'gopay' },
        (b) =>
          expect(b.actions).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'generate-qr-code' })])),
      ],
    ];
    let n = 0;
    for (const [extra, check] of cases) {
      const res = await post('/api/charge', { order_id: `M-${++n}`, nominal: 10000, ...extra });
      expect(res.statusCode, JSON.stringify(extra)).toBe(201);
      check(res.json());
    }
    const echannel = (await e.sim.requests('/v2/charge'))[1]?.body as Record<string, unknown>;
    expect(echannel.echannel).toEqual({ bill_info1: 'Payment:', bill_info2: 'M-2' });
  });

  it('input errors are 400 before any gateway call', async () => {
    const bad: object[] = [
      { order_id: 'B', nominal: 10, payment_type: 'bank_transfer' },
      { order_id: 'B', nominal: 10, payment_type: 'qris', bank_transfer: { bank: 'bca' } },
      { order_id: 'B', nominal: 10, payment_type: 'bank_transfer', bank_transfer: { bank: 'mandiri' } },
      { order_id: 'B', nominal: 10, payment_type: 'cstore' },
      { order_id: 'B', nominal: 10, payment_type: 'credit_card' },
      { order_id: 'B', nominal: 10, payment_type: 'paypal' },
      { order_id: 'B', nominal: 10, payment_type: 'qris', items: [{ name: 'a', price: 5, quantity: 1 }] },
      { order_id: 'B'.repeat(51), nominal: 10, payment_type: 'qris' },
      { order_id: 'B', nominal: -3, payment_type: 'qris' },
    ];
    for (const payload of bad) {
      const res = await post('/api/charge', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().errors, JSON.stringify(payload)).toEqual(expect.any(Array));
    }
    const snapBad = await post('/api/snap/token', {
      order_id: 'S',
      nominal: 10,
      expire_at: new Date(Date.now() + 8 * 86_400_000).toISOString(),
    });
    expect(snapBad.statusCode).toBe(400);
    expect(snapBad.json()).toMatchObject({ code: 'EXPIRY_INVALID' });
    const noMethod = await post('/api/snap/token', { order_id: 'S2', nominal: 10, enabled_payments: ['paypal'] });
    expect(noMethod.statusCode).toBe(400);
    expect(noMethod.json().errors).toEqual([expect.objectContaining({ path: 'enabled_payments' })]);
    expect(await e.sim.requests('/v2/')).toHaveLength(0);
    expect(await e.sim.requests('/snap/')).toHaveLength(0);
  });

  it('Snap token: names the gateway does not offer are passed on beside ones it does (the gateway skips them)', async () => {
    const res = await post('/api/snap/token', {
      order_id: 'S3',
      nominal: 10,
      enabled_payments: ['future_wallet', 'bca_va'],
    });
    expect(res.statusCode).toBe(201);
    const [call] = await e.sim.requests('/snap/');
    expect(call?.body).toMatchObject({ enabled_payments: ['future_wallet', 'bca_va'] });
  });

  it('Snap token: 201 with a working redirect page; same request → 200 with the same token', async () => {
    const body = {
      order_id: 'SNAP/1',
      nominal: 45000,
      items: [{ id: 'a', name: 'Tea', price: 15000, quantity: 3 }],
      enabled_payments: ['bca_va'],
    };
    const res = await post('/api/snap/token', body);
    expect(res.statusCode).toBe(201);
    const view = res.json();
    expect(view).toMatchObject({ order_id: 'SNAP/1', gateway_order_id: 'SNAP.1', token: expect.any(String) });
    expect(view.redirect_url).toBe(`${e.sim.baseUrl}/snap/v3/redirection/${view.token}`);
    const page = await fetch(view.redirect_url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Rp 45.000');
    const [call] = await e.sim.requests('/snap/v1/transactions');
    expect(call?.body).toMatchObject({
      transaction_details: { order_id: 'SNAP.1', gross_amount: 45000 },
      enabled_payments: ['bca_va'],
      item_details: [{ id: 'a', name: 'Tea', price: 15000, quantity: 3 }],
    });
    const again = await post('/api/snap/token', body);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(view);
    expect(await e.sim.requests('/snap/v1/transactions')).toHaveLength(1);
  });

  it('status asks the gateway and reports the payment; unknown ids are 404', async () => {
    const charged = await post('/api/charge', {
      order_id: 'ST/1',
      nominal: 20000,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bni' },
    });
    expect(charged.statusCode).toBe(201);
    const before = await status('ST/1');
    expect(before.statusCode).toBe(200);
    expect(before.json()).toMatchObject({
      order_id: 'ST/1',
      gateway_order_id: 'ST.1',
      mercant_id: 'ST/1',
      status: 'pending',
      nominal: 20000,
    });
    expect((await e.sim.post('/_sim/transactions/ST.1/pay')).status).toBeLessThan(300);
    const after = await status('ST.1');
    expect(after.statusCode).toBe(200);
    expect(after.json()).toMatchObject({
      status: 'paid',
      transaction_status: 'settlement',
      payment_type: 'bank_transfer',
      transaction_id: charged.json().transaction_id,
    });
    expect(after.json().settlement_time).toEqual(expect.any(String));
    // the gateway's transaction id names the same payment
    expect((await status(charged.json().transaction_id)).json()).toMatchObject({ order_id: 'ST/1', status: 'paid' });
    // The change found by asking produces the ERP event a notification would have, once.
    const events = async () =>
      (await e.services.store.outbox.list({ limit: 50 })).items.filter((ev) => ev.orderId === 'ST/1');
    expect((await events()).map((ev) => JSON.parse(ev.payload).status)).toEqual(['paid']);
    expect((await status('ST/1')).json()).toMatchObject({ status: 'paid' });
    expect(await events()).toHaveLength(1);
    expect((await status('nope')).statusCode).toBe(404);
  });

  it('a notification that lands while the charge call is still running is never undone by the charge answer', async () => {
    await e.sim.put('/_sim/faults', { latency_ms: 800 });
    const charging = post('/api/charge', {
      order_id: 'RACE-1',
      nominal: 10000,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bca' },
    });
    await expect
      .poll(async () => (await e.services.store.transactions.findByOrderId('RACE-1')) !== undefined, {
        timeout: 5_000,
        interval: 20,
      })
      .toBe(true);
    const hook = await e.app.inject({
      method: 'POST',
      url: '/webhook/midtrans',
      headers: { 'content-type': 'application/json' },
      payload: signedNotification(
        { order_id: 'RACE-1', transaction_status: 'settlement', gross_amount: '10000.00' },
        e.serverKey,
      ),
    });
    expect(hook.json()).toMatchObject({ result: 'applied' });
    const charged = await charging;
    expect(charged.statusCode).toBe(201);
    const tx = await e.services.store.transactions.findByOrderId('RACE-1');
    expect(tx).toMatchObject({
      status: 'paid',
      transactionStatus: 'settlement',
      gatewayTransactionId: charged.json().transaction_id,
    });
    const events = (await e.services.store.outbox.list({ limit: 50 })).items.filter((ev) => ev.orderId === 'RACE-1');
    expect(events.map((ev) => JSON.parse(ev.payload).status)).toEqual(['paid']);
  });

  it('after a refused charge or Snap token a corrected request for the same order goes through', async () => {
    await e.sim.put('/_sim/faults', { error_rate: 1, status: 500 });
    expect((await post('/api/charge', { order_id: 'FX-1', nominal: 1000, payment_type: 'qris' })).statusCode).toBe(502);
    expect((await post('/api/snap/token', { order_id: 'FX-2', nominal: 1000 })).statusCode).toBe(502);
    await e.sim.del('/_sim/faults');
    const charge = await post('/api/charge', {
      order_id: 'FX-1',
      nominal: 1200,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bni' },
    });
    expect(charge.statusCode).toBe(201);
    expect(charge.json()).toMatchObject({ payment_type: 'bank_transfer', status: 'pending' });
    const snap = await post('/api/snap/token', { order_id: 'FX-2', nominal: 1300 });
    expect(snap.statusCode).toBe(201);
    expect((await e.services.store.transactions.findByOrderId('FX-2'))?.nominal).toBe(1300);
    expect((await post('/api/charge', { order_id: 'FX-1', nominal: 1, payment_type: 'qris' })).statusCode).toBe(409);
  });

  it('gateway refusal → 502 with the gateway status; timeout → 504 and the retry adopts the charge', async () => {
    await e.sim.put('/_sim/faults', { error_rate: 1, status: 503 });
    const refused = await post('/api/charge', { order_id: 'F-1', nominal: 1000, payment_type: 'qris' });
    expect(refused.statusCode).toBe(502);
    expect(refused.json()).toMatchObject({ code: 'GATEWAY_REFUSED', gateway: { status_code: '503' } });
    await e.close();
    e = await startE2E(kind, { env: { API_KEYS: KEY }, serviceOptions: { gatewayTimeoutMs: 300 } });
    await e.sim.put('/_sim/faults', { timeout_rate: 1 });
    const payload = { order_id: 'F-2', nominal: 1000, payment_type: 'bank_transfer', bank_transfer: { bank: 'bca' } };
    expect((await post('/api/charge', payload)).statusCode).toBe(504);
    await e.sim.del('/_sim/faults');
    const retry = await post('/api/charge', payload);
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toMatchObject({
      gateway_order_id: 'F-2',
      transaction_status: 'pending',
      va_numbers: [{ bank: 'bca' }],
    });
    expect((await e.sim.requests('/v2/charge')).length).toBe(1);
  });
});
