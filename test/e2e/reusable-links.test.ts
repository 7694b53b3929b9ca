/**
 * A payment link used more than once (CONTRACT §10): each purchase on the simulator is a payment of
 * its own, its ERP events carrying the link's order id as `payment_link_order_id`, and the gateway
 * refuses a purchase beyond `usage_limit`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { basicAuth } from '../helpers/services.js';

const SECRET = 'raw-erp-secret-for-reusable-links-0123';

describe.each(DATABASE_KINDS)('a payment link used more than once (%s)', (kind) => {
  let e: E2EContext;
  let erp: ErpReceiver;
  beforeEach(async () => {
    erp = await startErpReceiver({ secret: SECRET });
    e = await startE2E(kind, {
      listen: true,
      serviceOptions: { runtimeConfigCacheMs: 0 },
      simulator: { notificationTimeoutMs: 5_000 },
    });
    await patchRuntimeConfig(e.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 5_000 },
    });
    e.services.outbox.start();
  });
  afterEach(async () => {
    await e.close();
    await erp.close();
  });

  const createLink = (payload: object) =>
    e.app.inject({ method: 'POST', url: '/api/payment-links', payload: payload as Record<string, unknown> });

  it('usage_limit 3 paid three times: three ERP events, each its own payment tied to the link; a fourth purchase is refused', async () => {
    const res = await createLink({ order_id: 'TICKET/2026:5', nominal: 75000, usage_limit: 3 });
    expect(res.statusCode).toBe(201);
    const link = res.json<{ gateway_order_id: string; usage_limit: number }>();
    expect(link.usage_limit).toBe(3);
    const [create] = (await e.sim.requests('/v1/payment-links')) as Array<{ body?: { usage_limit?: number } }>;
    expect(create?.body?.usage_limit).toBe(3);

    for (let n = 1; n <= 3; n++) {
      const pay = await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, {
        payment_type: 'bank_transfer',
      });
      expect(pay.status).toBe(200);
      await erp.waitFor((r) => r.accepted().length >= n, 20_000);
    }
    const fourth = await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, {
      payment_type: 'bank_transfer',
    });
    expect(fourth.status).toBe(409);
    expect(fourth.body).toMatchObject({ message: 'payment link fully used' });

    const events = erp.accepted().map((d) => d.json ?? {});
    expect(events).toHaveLength(3);
    for (const ev of events) {
      expect(ev).toMatchObject({
        type: 'payment.status_changed',
        status: 'paid',
        payment_link_order_id: 'TICKET/2026:5',
        mercant_id: 'TICKET/2026',
        gross_amount: 75000,
        expected_amount: 75000,
        amount_mismatch: false,
      });
      expect(String(ev.gateway_order_id)).toMatch(/^TICKET\.2026\.5-\d+$/);
      expect(String(ev.order_id)).toBe(`TICKET/2026:5${String(ev.gateway_order_id).slice('TICKET.2026.5'.length)}`);
    }
    expect(erp.accepted().every((x) => x.verified)).toBe(true);
    // Three payments: three order ids, three gateway transactions, each at its own first version.
    expect(new Set(events.map((ev) => ev.order_id)).size).toBe(3);
    expect(new Set(events.map((ev) => ev.transaction_id)).size).toBe(3);
    expect(events.map((ev) => ev.status_version)).toEqual([1, 1, 1]);
    // The gateway's own view agrees: three sequential purchases, each with its own order id.
    const gw = await e.sim.gateway('GET', `/v1/payment-links/${link.gateway_order_id}`);
    const purchases = (gw.body as { purchases: Array<{ order_id: string }> }).purchases.map((p) => p.order_id);
    expect(purchases.sort()).toEqual(events.map((ev) => String(ev.gateway_order_id)).sort());

    // The link itself is still the link, not paid by any one purchase.
    const got = await e.app.inject({ method: 'GET', url: `/api/payment-links/${encodeURIComponent('TICKET/2026:5')}` });
    expect(got.json()).toMatchObject({ status: 'pending', usage_limit: 3 });
    // Each purchase is a payment that answers on its own.
    const one = String(events[0]?.order_id);
    const st = await e.app.inject({ method: 'GET', url: `/api/payments/${encodeURIComponent(one)}/status` });
    expect(st.statusCode).toBe(200);
    expect(st.json()).toMatchObject({ order_id: one, status: 'paid' });

    // The console: the link's page lists its three purchases, each linking to its own page, in both
    // languages; a purchase's page names the link it was bought on.
    const page = async (orderId: string, lang: 'en' | 'id') =>
      (
        await e.app.inject({
          url: `/console/transactions/${encodeURIComponent(orderId)}?lang=${lang}`,
          headers: { authorization: basicAuth() },
        })
      ).body;
    const en = await page('TICKET/2026:5', 'en');
    expect(en).toContain('Purchases on this link');
    expect(en).toContain('data-purchases="3"');
    expect(en).toContain('data-usage-limit="3"');
    for (const ev of events) expect(en).toContain(`data-purchase="${String(ev.order_id)}"`);
    const id = await page('TICKET/2026:5', 'id');
    expect(id).toContain('Pembelian melalui tautan ini');
    expect(id).toContain('data-purchases="3"');
    const bought = await page(one, 'id');
    expect(bought).toContain('Dibeli melalui tautan');
    expect(bought).toContain(`href="/console/transactions/${encodeURIComponent('TICKET/2026:5')}" data-bought-on`);
  });

  it('a single-use link stays one payment: the purchase is the link, no payment_link_order_id', async () => {
    const res = await createLink({ order_id: 'SINGLE-1', nominal: 20000 });
    expect(res.statusCode).toBe(201);
    const link = res.json<{ gateway_order_id: string }>();
    await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, { payment_type: 'bank_transfer' });
    await erp.waitFor((r) => r.accepted().length >= 1, 20_000);
    const [ev] = erp.accepted().map((x) => x.json ?? {});
    expect(ev).toMatchObject({ order_id: 'SINGLE-1', status: 'paid' });
    expect(ev).not.toHaveProperty('payment_link_order_id');
  });

  it('usage_limit outside 1–1,000,000 or not a whole number is a 400 naming the field', async () => {
    for (const usage_limit of [0, 1_000_001, 2.5, 'three', -1]) {
      const res = await createLink({ order_id: `BAD-${String(usage_limit)}`, nominal: 1000, usage_limit });
      expect(res.statusCode, String(usage_limit)).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(JSON.stringify(res.json())).toContain('usage_limit');
    }
    expect(await e.sim.requests('/v1/payment-links')).toHaveLength(0);
  });
});
