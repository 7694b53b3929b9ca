/**
 * The gateway's signature covers only order_id + status_code + gross_amount, and a refund carries
 * the same "200" as a settlement: a captured settlement with its transaction_status edited still
 * verifies. These tests send such edits against the real simulator's status API and check that no
 * edited notification ever moves an order or reaches the ERP.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { signedNotification } from '../helpers/notifications.js';
import { basicAuth } from '../helpers/services.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { loadConfig } from '../../src/config/env.js';

const SECRET = 'raw-erp-secret-for-forgery-0123456789';

interface SimNotification {
  order_id: string;
  transaction_status: string;
  payload: Record<string, unknown>;
}

describe.each(DATABASE_KINDS)('edited notifications never change payment state (%s)', (kind) => {
  let e: E2EContext;
  let erp: ErpReceiver;
  beforeEach(async () => {
    erp = await startErpReceiver({ secret: SECRET });
    e = await startE2E(kind, {
      listen: true,
      serviceOptions: { runtimeConfigCacheMs: 0 },
      simulator: { notificationTimeoutMs: 2_000 },
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

  /** A charge paid on the simulator; returns the settlement notification the gateway really sent. */
  async function paidOrder(orderId: string): Promise<Record<string, unknown>> {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      payload: { order_id: orderId, nominal: 150000, payment_type: 'bank_transfer', bank_transfer: { bank: 'bca' } },
    });
    expect(res.statusCode).toBe(201);
    const gatewayOrderId = String(res.json().gateway_order_id ?? orderId);
    expect(
      (await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`, { payment_type: 'bank_transfer' })).status,
    ).toBe(200);
    await erp.waitFor((r) => r.accepted().some((d) => d.json?.order_id === orderId && d.json?.status === 'paid'));
    const sent = await e.sim.get(`/_sim/notifications?order_id=${encodeURIComponent(gatewayOrderId)}`);
    // the payload the gateway sent (its delivery outcome may not be recorded yet: the ERP can be faster)
    const settlement = (sent.body as { notifications: SimNotification[] }).notifications.find(
      (n) => n.transaction_status === 'settlement',
    );
    expect(settlement).toBeDefined();
    return settlement?.payload ?? {};
  }

  const postWebhook = (body: unknown) =>
    e.app.inject({
      method: 'POST',
      url: '/webhook/midtrans',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });

  async function expectStillPaid(orderId: string): Promise<void> {
    expect((await e.services.store.transactions.findByOrderId(orderId))?.status).toBe('paid');
    // a late event would land within this window
    await new Promise((r) => setTimeout(r, 300));
    expect(
      erp
        .accepted()
        .filter((d) => d.json?.order_id === orderId)
        .map((d) => d.json?.status),
    ).toEqual(['paid']);
  }

  it('confirmation is on by default in simulator mode: a settlement edited into a refund is checked and not applied', async () => {
    expect((await e.services.runtimeConfig.current()).gateway.confirm_notifications).toBe(true);
    const real = await paidOrder('FORGE-1');
    const before = (await e.sim.requests('/status')).length;
    const forged = await postWebhook({ ...real, transaction_status: 'refund' });
    expect(forged.statusCode).toBe(200);
    expect((await e.sim.requests('/status')).length).toBeGreaterThan(before);
    await expectStillPaid('FORGE-1');
  });

  it('with confirmation off (simulator mode only), a status that contradicts the same signed triple is checked first', async () => {
    await patchRuntimeConfig(e.services.runtimeConfig, { gateway: { confirm_notifications: false } });
    const real = await paidOrder('FORGE-2');
    for (const edit of [
      { transaction_status: 'refund' },
      { transaction_status: 'chargeback' },
      { transaction_status: 'partial_refund' },
      { fraud_status: 'deny' },
    ]) {
      const before = (await e.sim.requests('/status')).length;
      const forged = await postWebhook({ ...real, ...edit });
      expect(forged.statusCode).toBe(200);
      expect((await e.sim.requests('/status')).length).toBeGreaterThan(before);
    }
    await expectStillPaid('FORGE-2');
  });

  it('with confirmation off, a genuine refund (the gateway agrees) is still applied after its check', async () => {
    await patchRuntimeConfig(e.services.runtimeConfig, { gateway: { confirm_notifications: false } });
    const real = await paidOrder('FORGE-3');
    // the gateway really refunds, but its notification is lost: the replayed edit is then the truth
    await e.sim.put('/_sim/faults', { drop_rate: 1 });
    expect((await e.sim.post(`/_sim/transactions/FORGE-3/refund`, {})).status).toBe(200);
    await e.sim.del('/_sim/faults');
    const res = await postWebhook({ ...real, transaction_status: 'refund' });
    expect(res.statusCode).toBe(200);
    await erp.waitFor((r) => r.accepted().some((d) => d.json?.order_id === 'FORGE-3' && d.json?.status === 'refunded'));
    expect((await e.services.store.transactions.findByOrderId('FORGE-3'))?.status).toBe('refunded');
  });

  it('with confirmation on, the status API answer is what gets applied: a signed settlement for a pending order stays pending', async () => {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      payload: { order_id: 'FORGE-4', nominal: 150000, payment_type: 'bank_transfer', bank_transfer: { bank: 'bca' } },
    });
    expect(res.statusCode).toBe(201);
    const n = signedNotification(
      {
        order_id: 'FORGE-4',
        transaction_status: 'settlement',
        transaction_id: String(res.json().transaction_id ?? 'x'),
      },
      e.serverKey,
    );
    const hook = await postWebhook(n);
    expect(hook.statusCode).toBe(200);
    expect((await e.services.store.transactions.findByOrderId('FORGE-4'))?.status).toBe('pending');
    await new Promise((r) => setTimeout(r, 300));
    expect(erp.accepted().filter((d) => d.json?.order_id === 'FORGE-4' && d.json?.status === 'paid')).toHaveLength(0);
  });
});

describe.each(DATABASE_KINDS)('confirmation cannot be turned off outside simulator mode (%s)', (kind) => {
  let ctx: TestContext;
  const SERVER_KEY = 'SB-Mid-server-forgery-test-0001';
  beforeEach(async () => {
    // the status API is unreachable: a notification can then only be kept unverified
    ctx = await makeTestApp(
      kind,
      { MIDTRANS_MODE: 'sandbox', MIDTRANS_SERVER_KEY: SERVER_KEY, MIDTRANS_API_BASE_URL: 'http://127.0.0.1:9' },
      { runtimeConfigCacheMs: 0, gatewayTimeoutMs: 500 },
    );
  });
  afterEach(async () => ctx.close());

  it('POST /api/config refuses confirm_notifications: false in sandbox mode, with the reason', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { authorization: basicAuth(), 'content-type': 'application/json' },
      payload: { gateway: { confirm_notifications: false } },
    });
    expect(res.statusCode).toBe(400);
    const errors = (res.json() as { errors?: Array<{ path: string; message: string }> }).errors ?? [];
    expect(errors.find((x) => x.path === 'gateway.confirm_notifications')?.message).toMatch(
      /sandbox mode.*signature does not cover transaction_status/,
    );
    expect((await ctx.services.runtimeConfig.current()).gateway.confirm_notifications).toBe(true);
  });

  it('a stored override that turned it off is not obeyed: the notification is kept unverified', async () => {
    await ctx.services.runtimeConfig.save({ gateway: { confirm_notifications: false } }, 0, 'older version');
    const n = signedNotification({ order_id: 'FORGE-5', transaction_status: 'settlement' }, SERVER_KEY);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/webhook/midtrans',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(n),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', result: 'unverified' });
    expect(await ctx.services.store.transactions.findByOrderId('FORGE-5')).toBeUndefined();
  });
});

describe('MIDTRANS_CONFIRM_NOTIFICATIONS', () => {
  it('is on unless set off, and can be set off only in simulator mode', () => {
    expect(loadConfig({}).gateway.confirmNotifications).toBe(true);
    expect(
      loadConfig({ MIDTRANS_MODE: 'simulator', MIDTRANS_CONFIRM_NOTIFICATIONS: 'false' }).gateway.confirmNotifications,
    ).toBe(false);
    expect(() =>
      loadConfig({ MIDTRANS_SERVER_KEY: 'SB-Mid-server-x', MIDTRANS_CONFIRM_NOTIFICATIONS: 'false' }),
    ).toThrow(/MIDTRANS_CONFIRM_NOTIFICATIONS can be off only in simulator mode \(not sandbox\)/);
  });
});
