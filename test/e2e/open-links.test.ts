/**
 * An open-amount payment link (`amount_type: "open"`): the payer enters the amount within the link's
 * bounds on the gateway's page; each purchase is a payment of its own for the amount the gateway
 * confirms, and an amount outside the bounds is refused by the simulator and, should the gateway
 * confirm one anyway, by paylink, which then writes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { basicAuth } from '../helpers/services.js';
import { signedNotification } from '../helpers/notifications.js';

const SECRET = 'raw-erp-secret-for-open-links-0123456';

async function until<T>(read: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(DATABASE_KINDS)('an open-amount payment link (%s)', (kind) => {
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

  it('usage_limit 2 paid 15.000 and 27.500: two ERP events with those amounts, tied to the link; the console shows bounds and amounts', async () => {
    const res = await createLink({
      order_id: 'DONASI/2026:1',
      amount_type: 'open',
      min_nominal: 10000,
      max_nominal: '30000',
      preset_nominal: 20000,
      usage_limit: 2,
    });
    expect(res.statusCode).toBe(201);
    const link = res.json<{ gateway_order_id: string }>();
    expect(res.json()).toMatchObject({
      amount_type: 'open',
      min_nominal: 10000,
      max_nominal: 30000,
      preset_nominal: 20000,
      nominal: 30000,
      usage_limit: 2,
    });
    // The gateway is asked for a DYNAMIC_AMOUNT link with the bounds and no items.
    const [create] = (await e.sim.requests('/v1/payment-links')) as Array<{ body?: Record<string, unknown> }>;
    expect(create?.body).toMatchObject({
      payment_link_type: 'DYNAMIC_AMOUNT',
      dynamic_amount: { min_amount: 10000, max_amount: 30000, preset_amount: 20000 },
      usage_limit: 2,
    });
    expect(create?.body).not.toHaveProperty('item_details');

    // The simulator refuses an amount outside the bounds, on its control API and on its page.
    const below = await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, {
      payment_type: 'bank_transfer',
      amount: 9999,
    });
    expect(below.status).toBe(400);
    expect(below.body).toMatchObject({ message: 'amount must be an integer between 10000 and 30000' });
    const gw = await e.sim.gateway('GET', `/v1/payment-links/${link.gateway_order_id}`);
    const pageUrl = String((gw.body as { payment_link_url: string }).payment_link_url);
    const page = await fetch(`${pageUrl}?lang=en`);
    const html = await page.text();
    expect(html).toContain('name="amount"');
    expect(html).toContain('min="10000" max="30000"');
    const above = await fetch(pageUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'id' },
      body: 'method=bca_va&amount=30001',
      redirect: 'manual',
    });
    expect(above.status).toBe(400);
    expect(await above.text()).toContain('Jumlah tidak diterima');
    expect((gw.body as { purchases: unknown[] }).purchases).toHaveLength(0);

    for (const [n, amount] of [
      [1, 15000],
      [2, 27500],
    ] as const) {
      const pay = await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, {
        payment_type: 'bank_transfer',
        amount,
      });
      expect(pay.status).toBe(200);
      expect(pay.body).toMatchObject({ gross_amount: `${amount}.00`, transaction_status: 'settlement' });
      await erp.waitFor((r) => r.accepted().length >= n, 20_000);
    }
    const events = erp.accepted().map((d) => d.json ?? {});
    expect(events).toHaveLength(2);
    expect(events.map((ev) => ev.gross_amount)).toEqual([15000, 27500]);
    for (const ev of events) {
      expect(ev).toMatchObject({
        type: 'payment.status_changed',
        status: 'paid',
        payment_link_order_id: 'DONASI/2026:1',
        amount_mismatch: false,
      });
      expect(ev.expected_amount).toBe(ev.gross_amount);
      expect(String(ev.gateway_order_id)).toMatch(/^DONASI\.2026\.1-\d+$/);
    }
    expect(new Set(events.map((ev) => ev.order_id)).size).toBe(2);
    // A third purchase is refused: the link is used up.
    const third = await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, {
      payment_type: 'bank_transfer',
      amount: 12000,
    });
    expect(third.status).toBe(409);

    const got = await e.app.inject({ method: 'GET', url: `/api/payment-links/${encodeURIComponent('DONASI/2026:1')}` });
    expect(got.json()).toMatchObject({
      status: 'pending',
      amount_type: 'open',
      min_nominal: 10000,
      max_nominal: 30000,
    });
    const purchases = got.json<{ purchases: Array<{ gross_amount: number; status: string }> }>().purchases;
    expect(purchases.map((p) => [p.gross_amount, p.status])).toEqual([
      [15000, 'paid'],
      [27500, 'paid'],
    ]);

    const consolePage = async (lang: 'en' | 'id') =>
      (
        await e.app.inject({
          url: `/console/transactions/${encodeURIComponent('DONASI/2026:1')}?lang=${lang}`,
          headers: { authorization: basicAuth() },
        })
      ).body;
    const en = await consolePage('en');
    expect(en).toContain('Open amount');
    expect(en).toContain('data-open-min="10000"');
    expect(en).toContain('data-open-max="30000"');
    expect(en).toContain('data-open-preset="20000"');
    expect(en).toContain('data-purchase-amount="15000"');
    expect(en).toContain('data-purchase-amount="27500"');
    const id = await consolePage('id');
    expect(id).toContain('Jumlah bebas');
    expect(id).toContain('data-purchase-amount="27500"');
  });

  it('an amount outside the bounds, forged or confirmed by the gateway, is refused and writes nothing', async () => {
    // With confirmation off (allowed in simulator mode), a purchase on an open link is still confirmed.
    await patchRuntimeConfig(e.services.runtimeConfig, { gateway: { confirm_notifications: false } });
    expect((await e.services.runtimeConfig.current()).gateway.confirm_notifications).toBe(false);
    const res = await createLink({ order_id: 'OPEN-2', amount_type: 'open', min_nominal: 10000, max_nominal: 30000 });
    expect(res.statusCode).toBe(201);
    const gwId = res.json<{ gateway_order_id: string }>().gateway_order_id;
    const pay = await e.sim.post(`/_sim/transactions/${gwId}/pay`, { payment_type: 'bank_transfer', amount: 15000 });
    expect(pay.status).toBe(200);
    await erp.waitFor((r) => r.accepted().length >= 1, 20_000);
    const purchaseId = String((pay.body as { order_id: string }).order_id);

    // A signed notification claiming another amount for that purchase: the gateway's answer states 15000.
    const forged = signedNotification(
      { order_id: purchaseId, transaction_status: 'settlement', gross_amount: '5000000.00' },
      e.serverKey,
    );
    const r1 = await e.app.inject({ method: 'POST', url: '/webhook/midtrans', payload: forged });
    expect(r1.statusCode).toBe(200);
    // A purchase the gateway itself confirms at 5,000,000 (a charge under the link's id): outside the bounds.
    const outsideId = `${gwId}-77`;
    const charge = await e.sim.gateway('POST', '/v2/charge', {
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bca' },
      transaction_details: { order_id: outsideId, gross_amount: 5_000_000 },
    });
    expect(charge.status).toBe(200);
    await e.sim.post(`/_sim/transactions/${outsideId}/pay`, {});
    const kept = await until(async () => {
      const list = await e.services.store.notifications.listForOrder(outsideId, 10);
      return list.some((n) => n.result === 'unverified' && /outside the open-amount link's bounds/.test(n.reason ?? ''))
        ? list
        : undefined;
    });
    expect(kept.every((n) => n.result === 'unverified')).toBe(true);
    // Nothing of either was written: no payment for the outside purchase, the real one still 15000, one event.
    expect(await e.services.store.transactions.findByGatewayOrderId(outsideId)).toBeUndefined();
    const real = await e.services.store.transactions.findByGatewayOrderId(purchaseId);
    expect(real).toMatchObject({ nominal: 15000, paidAmount: 15000, status: 'paid' });
    const forgedRows = await e.services.store.notifications.listForOrder(purchaseId, 10);
    expect(forgedRows.filter((n) => n.result === 'unverified')).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(erp.accepted()).toHaveLength(1);
    expect(erp.accepted()[0]?.json).toMatchObject({ gross_amount: 15000 });
  });

  it("bad bounds and a fixed link's fields mixed with an open one are 400s naming each field; nothing reaches the gateway", async () => {
    const cases: Array<[object, string[]]> = [
      [{ amount_type: 'open', max_nominal: 30000 }, ['min_nominal']],
      [{ amount_type: 'open', min_nominal: 0, max_nominal: 30000 }, ['min_nominal']],
      [{ amount_type: 'open', min_nominal: 20000, max_nominal: 10000 }, ['max_nominal']],
      [{ amount_type: 'open', min_nominal: 1, max_nominal: 30_000_000_000 }, ['max_nominal']],
      [{ amount_type: 'open', min_nominal: 10000, max_nominal: 30000, preset_nominal: 40000 }, ['preset_nominal']],
      [{ amount_type: 'open', min_nominal: 10000, max_nominal: 30000, nominal: 15000 }, ['nominal']],
      [{ amount_type: 'open', min_nominal: '10.000', max_nominal: 30000 }, ['min_nominal']],
      [{ nominal: 15000, min_nominal: 10000 }, ['min_nominal']],
      [
        { amount_type: 'open', min_nominal: 0, max_nominal: -1, preset_nominal: 'x' },
        ['min_nominal', 'max_nominal', 'preset_nominal'],
      ],
      [{}, ['nominal']],
    ];
    for (const [i, [body, fields]] of cases.entries()) {
      const res = await createLink({ order_id: `BAD-OPEN-${i}`, ...body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      const paths = res.json<{ errors: Array<{ path: string }> }>().errors.map((x) => x.path);
      expect(paths.sort(), JSON.stringify(body)).toEqual([...fields].sort());
    }
    const typed = await createLink({ order_id: 'BAD-OPEN-T', amount_type: 'any', min_nominal: 1, max_nominal: 2 });
    expect(typed.statusCode).toBe(400);
    expect(await e.sim.requests('/v1/payment-links')).toHaveLength(0);
  });
});
