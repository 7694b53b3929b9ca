import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';

const KEY = 'erp-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

interface LinkBody {
  transaction_details: unknown;
  usage_limit: number;
  item_details: unknown;
  customer_details?: unknown;
  expiry: { start_time: string; duration: number; unit: string };
  enabled_payments?: string[];
}

interface SimRequest {
  method: string;
  path: string;
  body?: LinkBody;
}

describe.each(DATABASE_KINDS)('payment links against the simulator (%s)', (kind) => {
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E(kind, { env: { API_KEYS: KEY } });
  });
  afterEach(async () => e.close());

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    e.app.inject({ method: 'POST', url, payload: payload as object, headers: { ...auth, ...headers } });

  it('creates "SO/2026:17" as gateway order SO.2026.17 with a correct gateway request and a working hosted page', async () => {
    const res = await post('/api/payment-links', {
      order_id: 'SO/2026:17',
      nominal: '150000',
      customer: { first_name: '  Budi  ', last_name: 'x'.repeat(80), email: 'budi@example.com', phone: '08123456789' },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      order_id: 'SO/2026:17',
      gateway_order_id: 'SO.2026.17',
      mercant_id: 'SO/2026',
      status: 'pending',
      nominal: 150000,
    });
    expect(body.payment_url).toMatch(new RegExp(`^${e.sim.baseUrl}/payment-links/pl-[0-9a-f]{32}$`));
    const [create] = (await e.sim.requests('/v1/payment-links')) as SimRequest[];
    expect(create?.method).toBe('POST');
    const gw = create?.body ?? ({} as LinkBody);
    expect(gw.transaction_details).toEqual({
      order_id: 'SO.2026.17',
      gross_amount: 150000,
      payment_link_id: body.payment_url.split('/').pop(),
    });
    expect(gw.usage_limit).toBe(1);
    expect(gw.item_details).toEqual([{ id: 'nominal', name: 'Payment SO/2026:17', price: 150000, quantity: 1 }]);
    expect(gw.customer_details).toEqual({
      first_name: 'Budi',
      last_name: 'x'.repeat(50),
      email: 'budi@example.com',
      phone: '08123456789',
    });
    expect(gw.expiry).toMatchObject({ unit: 'minutes', duration: 24 * 60 });
    expect(gw.expiry.start_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+0700$/);
    expect(gw.enabled_payments).toBeUndefined();
    const page = await fetch(body.payment_url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('Rp 150.000');
  });

  it('the same order again answers 200 with the same link and makes no second gateway call; a different body is 409', async () => {
    const first = await post('/api/payment-links', { order_id: 'INV-9', nominal: 5000 });
    const again = await post('/api/payment-links', { order_id: 'INV-9', nominal: '5000' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    const other = await post('/api/payment-links', { order_id: 'INV-9', nominal: 5001 });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ code: 'ORDER_CONFLICT', current_status: 'pending' });
    expect(await e.sim.requests('/v1/payment-links')).toHaveLength(1);
  });

  it('resolves by encoded order_id and by gateway_order_id, and deactivates at the gateway', async () => {
    await post('/api/payment-links', { order_id: 'INV/2026/0042:2', nominal: 1000 });
    for (const id of ['INV%2F2026%2F0042%3A2', 'INV.2026.0042.2']) {
      const res = await e.app.inject({ method: 'GET', url: `/api/payment-links/${id}`, headers: auth });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        order_id: 'INV/2026/0042:2',
        gateway_order_id: 'INV.2026.0042.2',
        mercant_id: 'INV/2026/0042',
        status: 'pending',
      });
    }
    expect((await e.app.inject({ method: 'GET', url: '/api/payment-links/nope', headers: auth })).statusCode).toBe(404);
    const del = await e.app.inject({
      method: 'DELETE',
      url: '/api/payment-links/INV%2F2026%2F0042%3A2',
      headers: auth,
    });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toMatchObject({ status: 'cancelled' });
    expect((await e.sim.gateway('GET', '/v1/payment-links/INV.2026.0042.2')).status).toBe(404);
    const deletes = ((await e.sim.requests('/v1/payment-links')) as SimRequest[]).filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => r.path)).toEqual(['/v1/payment-links/INV.2026.0042.2']);
    // The cancellation reaches the ERP like any other status change, once.
    await e.app.inject({ method: 'DELETE', url: '/api/payment-links/INV.2026.0042.2', headers: auth });
    const events = (await e.services.store.outbox.list({ limit: 100 })).items.filter(
      (ev) => ev.orderId === 'INV/2026/0042:2',
    );
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]?.payload ?? '{}')).toMatchObject({
      type: 'payment.status_changed',
      order_id: 'INV/2026/0042:2',
      mercant_id: 'INV/2026/0042',
      status: 'cancelled',
      status_version: 1,
    });
  });

  it('ERP shape: mercant_id:N attempts, same items → 200, paid → 409, expired → N+1', async () => {
    const body = {
      mercant_id: 'INV/7',
      item: [
        { id: 'A', name: 'Widget', price: 10000, quantity: 3 },
        { id: 'D', name: 'Discount', price: -5000, quantity: 1 },
      ],
    };
    const first = await post('/createtransaksi', body);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({
      order_id: 'INV/7:1',
      gateway_order_id: 'INV.7.1',
      mercant_id: 'INV/7',
      nominal: 25000,
    });
    const gw = ((await e.sim.requests('/v1/payment-links')) as SimRequest[])[0]?.body;
    expect(gw?.item_details).toEqual([
      { id: 'A', name: 'Widget', price: 10000, quantity: 3 },
      { id: 'D', name: 'Discount', price: -5000, quantity: 1 },
    ]);
    expect((await post('/createtransaksi', body)).statusCode).toBe(200);
    const tx = await e.services.store.transactions.findByOrderId('INV/7:1');
    await e.services.store.transactions.update(tx?.id ?? '', { status: 'expired' });
    const second = await post('/createtransaksi', body);
    expect(second.statusCode).toBe(201);
    expect(second.json()).toMatchObject({ order_id: 'INV/7:2', gateway_order_id: 'INV.7.2' });
    const tx2 = await e.services.store.transactions.findByOrderId('INV/7:2');
    await e.services.store.transactions.update(tx2?.id ?? '', { status: 'paid' });
    const paid = await post('/createtransaksi', body);
    expect(paid.statusCode).toBe(409);
    expect(paid.json()).toMatchObject({ code: 'ORDER_CONFLICT', current_status: 'paid', order_id: 'INV/7:2' });
  });

  it("a purchase on the link is found by the status check (through the link's purchases) and shown on resolve", async () => {
    await post('/api/payment-links', { order_id: 'SO/2026:18', nominal: 64000 });
    expect((await e.sim.post('/_sim/transactions/SO.2026.18/pay', { payment_type: 'bank_transfer' })).status).toBe(200);
    const st = await e.app.inject({ method: 'GET', url: '/api/payments/SO%2F2026%3A18/status', headers: auth });
    expect(st.statusCode).toBe(200);
    expect(st.json()).toMatchObject({
      order_id: 'SO/2026:18',
      gateway_order_id: 'SO.2026.18',
      mercant_id: 'SO/2026',
      status: 'paid',
      nominal: 64000,
    });
    const view = await e.app.inject({ method: 'GET', url: '/api/payment-links/SO.2026.18', headers: auth });
    expect(view.json()).toMatchObject({ status: 'paid', transaction_status: 'settlement' });
    const again = await post('/createtransaksi', {
      mercant_id: 'SO/2026',
      order_id: 'SO/2026:18',
      item: [{ name: 'x', price: 64000, quantity: 1 }],
    });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'ORDER_CONFLICT', current_status: 'paid' });
  });

  it('input errors are 400 with errors[] and never reach the gateway', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['/api/payment-links', { order_id: 'x'.repeat(51), nominal: 1 }, 'ORDER_ID_TOO_LONG'],
      ['/api/payment-links', { order_id: 'A\u0000B', nominal: 1 }, 'ORDER_ID_INVALID'],
      ['/api/payment-links', { order_id: 'A', nominal: 0 }, 'AMOUNT_INVALID'],
      ['/api/payment-links', { order_id: 'A', nominal: 1.5 }, 'AMOUNT_INVALID'],
      ['/api/payment-links', { order_id: 'A', nominal: 1, expire_at: '2020-01-01T00:00:00+07:00' }, 'EXPIRY_INVALID'],
      ['/api/payment-links', { order_id: 'A', nominal: 1, expire_at: 'tomorrow' }, 'EXPIRY_INVALID'],
      ['/api/payment-links', { order_id: 'A', nominal: 1, customer: { email: 'not-an-email' } }, 'VALIDATION_FAILED'],
      ['/api/payment-links', { order_id: 'A', nominal: 1, extra: true }, 'VALIDATION_FAILED'],
      ['/createtransaksi', { mercant_id: 'M', item: [] }, 'VALIDATION_FAILED'],
      ['/createtransaksi', { mercant_id: 'M', item: [{ name: 'a', price: 1, quantity: 0 }] }, 'VALIDATION_FAILED'],
      ['/createtransaksi', { mercant_id: 'M', item: [{ name: 'a', price: -1, quantity: 1 }] }, 'AMOUNT_INVALID'],
    ];
    for (const [url, payload, code] of cases) {
      const res = await post(url, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json(), JSON.stringify(payload)).toMatchObject({ code, errors: expect.any(Array) });
    }
    expect(await e.sim.requests('/v1/')).toHaveLength(0);
  });

  it('gateway refusals are 502 with the gateway status; a corrected retry of the same order works', async () => {
    await e.sim.put('/_sim/faults', { error_rate: 1, status: 500 });
    const res = await post('/api/payment-links', { order_id: 'R-1', nominal: 1000 });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({
      code: 'GATEWAY_REFUSED',
      gateway: { status_code: '500', status_message: expect.any(String) },
    });
    await e.sim.del('/_sim/faults');
    const retry = await post('/api/payment-links', { order_id: 'R-1', nominal: 1000 });
    expect(retry.statusCode).toBe(201);
    expect(retry.json().payment_url).toContain('/payment-links/');
    // Once created, another body for the order is a conflict again.
    expect((await post('/api/payment-links', { order_id: 'R-1', nominal: 2000 })).statusCode).toBe(409);
  });

  it('after a refusal nothing exists at the gateway: a corrected body for the same order is accepted', async () => {
    await e.sim.put('/_sim/faults', { error_rate: 1, status: 400 });
    expect((await post('/api/payment-links', { order_id: 'R-2', nominal: 1000 })).statusCode).toBe(502);
    await e.sim.del('/_sim/faults');
    const corrected = await post('/api/payment-links', {
      order_id: 'R-2',
      nominal: 1500,
      customer: { first_name: 'Ani' },
    });
    expect(corrected.statusCode).toBe(201);
    expect(corrected.json()).toMatchObject({ order_id: 'R-2', nominal: 1500, status: 'pending' });
    const link = await e.sim.gateway('GET', '/v1/payment-links/R-2');
    expect(link.body).toMatchObject({ gross_amount: 1500 });
    expect(
      (await post('/api/payment-links', { order_id: 'R-2', nominal: 1500, customer: { first_name: 'Ani' } }))
        .statusCode,
    ).toBe(200);
  });

  it('a timeout after the gateway created the link never produces a second link on retry', async () => {
    await e.close();
    e = await startE2E(kind, { env: { API_KEYS: KEY }, serviceOptions: { gatewayTimeoutMs: 300 } });
    await e.sim.put('/_sim/faults', { timeout_rate: 1 });
    const first = await post(
      '/api/payment-links',
      { order_id: 'T-1', nominal: 7000 },
      { 'idempotency-key': 'k-timeout' },
    );
    expect(first.statusCode).toBe(504);
    expect(first.json()).toMatchObject({ code: 'GATEWAY_TIMEOUT' });
    await e.sim.del('/_sim/faults');
    const atGateway = await e.sim.gateway('GET', '/v1/payment-links/T-1');
    expect(atGateway.status).toBe(200);
    const retry = await post(
      '/api/payment-links',
      { order_id: 'T-1', nominal: 7000 },
      { 'idempotency-key': 'k-timeout' },
    );
    expect(retry.statusCode).toBe(201);
    expect(retry.json().payment_url).toBe((atGateway.body as { payment_link_url: string }).payment_link_url);
    const creates = ((await e.sim.requests('/v1/payment-links')) as SimRequest[]).filter((r) => r.method === 'POST');
    expect(creates).toHaveLength(1);
    const again = await post('/api/payment-links', { order_id: 'T-1', nominal: 7000 });
    expect(again.statusCode).toBe(200);
    expect(again.json().payment_url).toBe(retry.json().payment_url);
  });
});
