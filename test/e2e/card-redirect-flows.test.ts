import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';

const KEY = 'erp-key-cards-0123456789';
const SECRET = 'raw-erp-secret-cards-0123456789';
const CLIENT_KEY = 'SB-Mid-client-e2e-cards';
const auth = { authorization: `Bearer ${KEY}` };

describe.each(DATABASE_KINDS)('card, 3-D Secure and redirect payments through paylink to the ERP (%s)', (kind) => {
  let e: E2EContext;
  let erp: ErpReceiver;
  beforeEach(async () => {
    erp = await startErpReceiver({ secret: SECRET });
    e = await startE2E(kind, {
      listen: true,
      env: { API_KEYS: KEY },
      serviceOptions: { runtimeConfigCacheMs: 0 },
      simulator: { notificationTimeoutMs: 2_000, clientKey: CLIENT_KEY },
    });
    await patchRuntimeConfig(e.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
    });
    e.services.outbox.start();
  });
  afterEach(async () => {
    await e.close();
    await erp.close();
  });

  const charge = (payload: object) => e.app.inject({ method: 'POST', url: '/api/charge', payload, headers: auth });

  /** What the customer's browser does first: card data to the gateway, a token back. */
  async function cardToken(card: string): Promise<string> {
    const q = new URLSearchParams({
      client_key: CLIENT_KEY,
      card_number: card,
      card_exp_month: '12',
      card_exp_year: String(new Date().getUTCFullYear() + 1),
      card_cvv: '123',
    });
    const r = await e.sim.get(`/v2/token?${q.toString()}`);
    expect(r.status).toBe(200);
    const body = r.body as { token_id?: unknown };
    if (typeof body.token_id !== 'string') throw new Error(`no token: ${r.text}`);
    return body.token_id;
  }

  async function eventFor(orderId: string, status: string): Promise<Record<string, unknown>> {
    await erp.waitFor((r) => r.accepted().some((d) => d.json?.order_id === orderId && d.json.status === status));
    const d = erp.accepted().find((x) => x.json?.order_id === orderId && x.json.status === status);
    if (!d?.json) throw new Error('no event');
    expect(d.verified).toBe(true);
    return d.json;
  }

  async function postForm(url: string, form: Record<string, string> = {}): Promise<number> {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });
    return r.status;
  }

  it('3DS card: the ERP gets pending + redirect_url; the OTP on the 3DS page makes it paid through the notification', async () => {
    const token = await cardToken('4811 1111 1111 1114');
    const res = await charge({
      order_id: 'CARD/3DS:1',
      nominal: 250000,
      payment_type: 'credit_card',
      credit_card: { token_id: token, authentication: true },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      status: 'pending',
      transaction_status: 'pending',
      payment_type: 'credit_card',
      gateway_order_id: 'CARD.3DS.1',
    });
    expect(body.redirect_url).toBe(`${e.simulator.baseUrl}/v2/token/rba/redirect/481111-1114-${body.transaction_id}`);
    const [call] = await e.sim.requests('/v2/charge');
    expect(call?.body).toMatchObject({
      payment_type: 'credit_card',
      credit_card: { token_id: '****', authentication: true },
    });
    const stored = await e.services.store.transactions.findByOrderId('CARD/3DS:1');
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(await postForm(body.redirect_url, { otp: '112233' })).toBe(303);
    const event = await eventFor('CARD/3DS:1', 'paid');
    expect(event).toMatchObject({
      transaction_status: 'capture',
      payment_type: 'credit_card',
      gross_amount: 250000,
      gateway_order_id: 'CARD.3DS.1',
    });
    const st = await e.app.inject({
      method: 'GET',
      url: `/api/payments/${encodeURIComponent('CARD/3DS:1')}/status`,
      headers: auth,
    });
    expect(st.json()).toMatchObject({ status: 'paid', transaction_status: 'capture', fraud_status: 'accept' });
  });

  it('3DS with the deny card ends failed at the ERP; a token without 3DS is paid at once', async () => {
    const deny = await charge({
      order_id: 'CARD-DENY',
      nominal: 50000,
      payment_type: 'credit_card',
      credit_card: { token_id: await cardToken('4611111111111116'), authentication: true },
    });
    expect(deny.json()).toMatchObject({ status: 'pending' });
    await postForm(deny.json().redirect_url, { otp: '112233' });
    expect(await eventFor('CARD-DENY', 'failed')).toMatchObject({ transaction_status: 'deny' });
    const direct = await charge({
      order_id: 'CARD-DIRECT',
      nominal: 50000,
      payment_type: 'credit_card',
      credit_card: { token_id: await cardToken('5211111111111117') },
    });
    expect(direct.statusCode).toBe(201);
    expect(direct.json()).toMatchObject({ status: 'paid', transaction_status: 'capture' });
    expect(direct.json()).not.toHaveProperty('redirect_url');
    expect(await eventFor('CARD-DIRECT', 'paid')).toMatchObject({ transaction_status: 'capture' });
  });

  it('redirect payment types: pending with redirect_url; paying on the page reaches the ERP as paid', async () => {
    const customer = { first_name: 'Rina', email: 'rina@example.com', phone: '0812345' };
    const items = [{ id: 'sku-1', name: 'Widget', price: 60000, quantity: 1 }];
    const cases: [string, object][] = [
      ['cimb_clicks', {}],
      ['akulaku', { items, customer }],
      ['kredivo', {}],
      ['bri_epay', {}],
      ['danamon_online', {}],
      ['uob_ezpay', { uob_ezpay: { callback_url: 'https://merchant.example/back' } }],
    ];
    for (const [type, extra] of cases) {
      const orderId = `RD-${type}`;
      const res = await charge({ order_id: orderId, nominal: 60000, payment_type: type, ...extra });
      expect(res.statusCode, type).toBe(201);
      const body = res.json();
      expect(body, type).toMatchObject({ status: 'pending', transaction_status: 'pending', payment_type: type });
      expect(body.redirect_url).toBe(`${e.simulator.baseUrl}/v2/${type}/redirect/${body.transaction_id}`);
      expect(await postForm(`${body.redirect_url}/pay`)).toBe(303);
      expect(await eventFor(orderId, 'paid'), type).toMatchObject({
        transaction_status: 'settlement',
        payment_type: type,
      });
    }
    const sent = (await e.sim.requests('/v2/charge')).map((r) => r.body as Record<string, unknown>);
    expect(sent.find((b) => b.payment_type === 'cimb_clicks')).toMatchObject({
      cimb_clicks: { description: 'Payment RD-cimb_clicks' },
    });
    expect(sent.find((b) => b.payment_type === 'kredivo')).not.toHaveProperty('kredivo');
  });

  it('redirect type input errors are 400 before the gateway', async () => {
    const bad: object[] = [
      { order_id: 'RB-1', nominal: 10000, payment_type: 'akulaku' },
      { order_id: 'RB-2', nominal: 10000, payment_type: 'akulaku', items: [{ name: 'a', price: 10000, quantity: 1 }] },
      { order_id: 'RB-3', nominal: 10000, payment_type: 'kredivo', cimb_clicks: { description: 'x' } },
      { order_id: 'RB-4', nominal: 10000, payment_type: 'cimb_clicks', cimb_clicks: { description: 'x'.repeat(101) } },
      { order_id: 'RB-5', nominal: 10000, payment_type: 'bri_epay', bri_epay: {} },
    ];
    for (const payload of bad) {
      const res = await charge(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().errors, JSON.stringify(payload)).toEqual(expect.any(Array));
    }
    expect(await e.sim.requests('/v2/charge')).toHaveLength(0);
  });
});
