import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig, seedTransaction } from '../helpers/seed.js';
import { createReconciler } from '../../src/workers/status-sweeper.js';
import { basicAuth } from '../helpers/services.js';

const SECRET = 'raw-erp-secret-for-e2e-0123456789';

describe.each(DATABASE_KINDS)('gateway → webhook → outbox → ERP, end to end (%s)', (kind) => {
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

  async function createLink(orderId: string): Promise<{ gateway_order_id: string; payment_url: string }> {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/payment-links',
      payload: { order_id: orderId, nominal: 150000 },
    });
    expect(res.statusCode).toBe(201);
    return res.json();
  }

  async function settle(): Promise<void> {
    // a late duplicate would land within this window
    await new Promise((r) => setTimeout(r, 300));
  }

  it('a link paid through /_sim: the ERP gets exactly one signed `paid` event with the original mercant_id', async () => {
    const link = await createLink('INV/2026/0042:1');
    expect(link.gateway_order_id).toBe('INV.2026.0042.1');
    const pay = await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, { payment_type: 'bank_transfer' });
    expect(pay.status).toBe(200);
    await erp.waitFor((r) => r.accepted().length >= 1);
    await settle();
    expect(erp.accepted()).toHaveLength(1);
    const [d] = erp.accepted();
    expect(d?.verified).toBe(true);
    expect(d?.json).toMatchObject({
      type: 'payment.status_changed',
      status: 'paid',
      transaction_status: 'settlement',
      mercant_id: 'INV/2026/0042',
      order_id: 'INV/2026/0042:1',
      gateway_order_id: 'INV.2026.0042.1',
      gross_amount: 150000,
      status_version: 1,
    });
    expect(d?.webhookId).toBe(d?.json?.event_id);
    const tx = await e.services.store.transactions.findByOrderId('INV/2026/0042:1');
    expect(tx).toMatchObject({ status: 'paid', statusVersion: 1 });
    expect(tx?.gatewayTransactionId).toEqual(d?.json?.transaction_id);
    // the same story in /metrics: the gateway call, the notifications, the delivery
    const metrics = (await e.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: basicAuth() } }))
      .body;
    expect(metrics).toMatch(
      /paylink_gateway_call_duration_seconds_count\{operation="payment_link\.create",outcome="200"\} 1\b/,
    );
    expect(metrics).toMatch(/paylink_notifications_total\{source="webhook",result="applied"\} [1-9]/);
    expect(metrics).toMatch(/paylink_erp_deliveries_total\{outcome="delivered"\} 1\b/);
    expect(metrics).toMatch(/paylink_erp_delivery_duration_seconds_count 1\b/);
  });

  it('a link paid through the hosted page forms over HTTP: exactly one `paid` event', async () => {
    const link = await createLink('SO-HOSTED:7');
    const page = await fetch(link.payment_url);
    expect(await page.text()).toContain('data-method="bca_va"');
    const chosen = await fetch(link.payment_url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'method=bca_va',
    });
    expect(chosen.status).toBe(303);
    const instructions = new URL(chosen.headers.get('location') ?? '', link.payment_url).toString();
    expect(await (await fetch(instructions)).text()).toContain('id="pay"');
    const paid = await fetch(`${instructions}/pay`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(paid.status).toBe(303);
    expect(await (await fetch(instructions)).text()).toContain('Payment successful');
    await erp.waitFor((r) => r.accepted().length >= 1);
    await settle();
    expect(erp.accepted().map((d) => [d.json?.status, d.json?.mercant_id, d.json?.order_id, d.verified])).toEqual([
      ['paid', 'SO-HOSTED', 'SO-HOSTED:7', true],
    ]);
    expect(String(erp.accepted()[0]?.json?.gateway_order_id)).toBe('SO-HOSTED.7');
  });

  it('with confirmation on, the status API is asked before a notification is trusted', async () => {
    await patchRuntimeConfig(e.services.runtimeConfig, { gateway: { confirm_notifications: true } });
    const link = await createLink('CONF-1');
    await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, { payment_type: 'bank_transfer' });
    await erp.waitFor((r) => r.accepted().length >= 1);
    expect(erp.accepted()[0]?.json).toMatchObject({ status: 'paid', order_id: 'CONF-1' });
    const statusCalls = await e.sim.requests('/status');
    expect(statusCalls.length).toBeGreaterThanOrEqual(1);
  });

  it('with confirmation on and a status API that hangs, the webhook still answers (unverified) and the sweeper confirms later', async () => {
    // The client's own limit is far beyond this test's timeout: only the webhook's tighter
    // confirmation budget lets the notification be answered in time.
    await e.close();
    e = await startE2E(kind, {
      listen: true,
      serviceOptions: { runtimeConfigCacheMs: 0, gatewayTimeoutMs: 120_000 },
      simulator: { notificationTimeoutMs: 10_000 },
    });
    await patchRuntimeConfig(e.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
      gateway: { confirm_notifications: true },
    });
    e.services.outbox.start();
    const link = await createLink('CONF-SLOW:1');
    await e.sim.put('/_sim/faults', { timeout_rate: 1 });
    await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, { payment_type: 'bank_transfer' });
    // the purchase's pending and settlement notifications (a link purchase id: the order id + suffix)
    await expect
      .poll(async () => (await e.services.store.notifications.listByResult('unverified', 10)).length, {
        timeout: 15_000,
        interval: 100,
      })
      .toBe(2);
    for (const n of await e.services.store.notifications.listByResult('unverified', 10))
      expect(n.gatewayOrderId).toMatch(/^CONF-SLOW\.1-/);
    const sent = await e.sim.get('/_sim/notifications');
    expect((sent.body as { notifications: Array<{ outcome: string }> }).notifications.map((n) => n.outcome)).toContain(
      'delivered',
    );
    expect((await e.services.store.transactions.findByOrderId('CONF-SLOW:1'))?.status).toBe('pending');
    expect(erp.accepted()).toHaveLength(0);
    await e.sim.del('/_sim/faults');
    const report = await createReconciler(e.services, { ratePerSecond: 1000 }).sweepOnce();
    expect(report.outcomes.rechecked).toBe(2);
    await erp.waitFor((r) => r.accepted().length >= 1);
    expect(erp.accepted().map((d) => [d.json?.order_id, d.json?.status])).toEqual([['CONF-SLOW:1', 'paid']]);
  });

  it('reconciliation: a lost settlement is found by the sweeper; a never-used order past expiry is expired locally', async () => {
    await e.sim.put('/_sim/faults', { drop_rate: 1 });
    const link = await createLink('LOST-1');
    await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, { payment_type: 'bank_transfer' });
    const unused = await seedTransaction(e.services.store, {
      orderId: 'SNAP-UNUSED:1',
      kind: 'snap',
      expireAt: new Date(Date.now() - 60_000).toISOString(),
    });
    // the link is not overdue yet; make it so (no notification for longer than pending_after_minutes)
    await patchRuntimeConfig(e.services.runtimeConfig, { reconcile: { interval_s: 300, pending_after_minutes: 0 } });
    await new Promise((r) => setTimeout(r, 5));
    const sweeper = createReconciler(e.services, { ratePerSecond: 1000 });
    const report = await sweeper.sweepOnce();
    expect(report.outcomes).toMatchObject({ applied: 1, expired_locally: 1 });
    await erp.waitFor((r) => r.accepted().length >= 2);
    const byOrder = Object.fromEntries(erp.accepted().map((d) => [String(d.json?.order_id), d.json?.status]));
    expect(byOrder).toEqual({ 'LOST-1': 'paid', 'SNAP-UNUSED:1': 'expired' });
    expect((await e.services.store.transactions.findById(unused.id))?.flags).toContain('local_expiry');
    // a second sweep finds nothing left to do
    expect((await sweeper.sweepOnce()).checked).toBe(0);
  });
});
