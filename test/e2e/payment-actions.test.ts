import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';

const KEY = 'erp-key-actions-0123456789';
const SECRET = 'raw-erp-secret-for-actions-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

describe.each(DATABASE_KINDS)('refund, cancel and expire against the simulator (%s)', (kind) => {
  let e: E2EContext;
  let erp: ErpReceiver;
  const start = async (gatewayTimeoutMs?: number) => {
    e = await startE2E(kind, {
      listen: true,
      env: { API_KEYS: KEY },
      serviceOptions: { runtimeConfigCacheMs: 0, ...(gatewayTimeoutMs ? { gatewayTimeoutMs } : {}) },
      simulator: { notificationTimeoutMs: 2_000 },
    });
    await patchRuntimeConfig(e.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
    });
    e.services.outbox.start();
  };
  beforeEach(async () => {
    erp = await startErpReceiver({ secret: SECRET });
    await start();
  });
  afterEach(async () => {
    await e.close();
    await erp.close();
  });
  const act = (id: string, action: string, payload?: object, headers: Record<string, string> = {}) =>
    e.app.inject({
      method: 'POST',
      url: `/api/payments/${encodeURIComponent(id)}/${action}`,
      ...(payload ? { payload } : {}),
      headers: { ...auth, ...headers },
    });
  const charge = async (orderId: string, nominal: number, method: object = { payment_type: 'qris' }) => {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      payload: { order_id: orderId, nominal, ...method },
      headers: auth,
    });
    expect(res.statusCode).toBe(201);
    return res.json() as { gateway_order_id: string; transaction_id: string };
  };
  const paid = async (orderId: string, gatewayOrderId: string) => {
    expect((await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    await expect
      .poll(async () => (await e.services.store.transactions.findByOrderId(orderId))?.status, {
        timeout: 5_000,
        interval: 20,
      })
      .toBe('paid');
  };
  const erpStatuses = (orderId: string) =>
    erp
      .accepted()
      .filter((d) => d.json?.order_id === orderId)
      .map((d) => [d.json?.status, d.json?.refunded_amount, d.json?.status_version]);
  const gatewayRefunded = async (gatewayOrderId: string) =>
    (await e.sim.gateway('GET', `/v2/${gatewayOrderId}/status`)).body as {
      refund_amount?: string;
      transaction_status: string;
    };
  // Late duplicates (the gateway notifies a refund twice) would land within this window.
  const settle = () => new Promise((r) => setTimeout(r, 300));

  it('partial, partial, rest: each reaches the ERP once, in order, with the cumulative refunded_amount', async () => {
    const c = await charge('RF/1', 100000);
    await paid('RF/1', c.gateway_order_id);
    const first = await act('RF/1', 'refund', { amount: 25000, reason: 'one item back' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      order_id: 'RF/1',
      status: 'partially_refunded',
      refunded_amount: 25000,
      nominal: 100000,
    });
    const second = await act('RF/1', 'refund', { amount: 25000 }, { 'idempotency-key': 'refund-2' });
    expect(second.json()).toMatchObject({ status: 'partially_refunded', refunded_amount: 50000 });
    const replay = await act('RF/1', 'refund', { amount: 25000 }, { 'idempotency-key': 'refund-2' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(second.body);
    const rest = await act(c.transaction_id, 'refund');
    expect(rest.statusCode).toBe(200);
    expect(rest.json()).toMatchObject({ status: 'refunded', refunded_amount: 100000 });
    const again = await act('RF/1', 'refund', { amount: 1 });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'PAYMENT_CLOSED', payment_status: 'refunded' });
    expect(await e.sim.requests('/refund')).toHaveLength(3);
    expect(await gatewayRefunded(c.gateway_order_id)).toMatchObject({
      transaction_status: 'refund',
      refund_amount: '100000.00',
    });
    await erp.waitFor(() => erpStatuses('RF/1').length >= 4);
    await settle();
    expect(erpStatuses('RF/1')).toEqual([
      ['paid', undefined, 1],
      ['partially_refunded', 25000, 2],
      ['partially_refunded', 50000, 3],
      ['refunded', 100000, 4],
    ]);
    const status = await e.app.inject({ method: 'GET', url: '/api/payments/RF%2F1/status', headers: auth });
    expect(status.json()).toMatchObject({ status: 'refunded', refunded_amount: 100000 });
  });

  it('amounts out of range are 400, impossible states 409 naming the state, gateway refusals 502 with its code', async () => {
    const c = await charge('RF-2', 50000);
    const pending = await act('RF-2', 'refund', { amount: 1000 });
    expect(pending.statusCode).toBe(409);
    expect(pending.json()).toMatchObject({ code: 'PAYMENT_NOT_PAID', payment_status: 'pending' });
    await paid('RF-2', c.gateway_order_id);
    for (const amount of [0, -5, 50001]) {
      const res = await act('RF-2', 'refund', { amount });
      expect(res.statusCode, String(amount)).toBe(400);
      expect(res.json().code).toBe('AMOUNT_INVALID');
    }
    expect((await act('RF-2', 'refund', { amount: 10.5 })).statusCode).toBe(400);
    expect((await act('RF-2', 'refund', { amount: 100, extra: true })).statusCode).toBe(400);
    expect(await e.sim.requests('/refund')).toHaveLength(0);
    // A settled bank transfer: money moved, so no cancel; the gateway refunds it offline only.
    const bt = await charge('BT-1', 20000, { payment_type: 'bank_transfer', bank_transfer: { bank: 'bca' } });
    await paid('BT-1', bt.gateway_order_id);
    const cancel = await act('BT-1', 'cancel');
    expect(cancel.statusCode).toBe(409);
    expect(cancel.json()).toMatchObject({ code: 'PAYMENT_SETTLED', payment_status: 'paid' });
    expect((await act('BT-1', 'expire')).json()).toMatchObject({ code: 'PAYMENT_SETTLED' });
    // The gateway refunds no bank transfer (it would answer 412): refused before it is asked.
    const asked = (await e.sim.requests('/refund')).length;
    const refused = await act('BT-1', 'refund');
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({
      code: 'REFUND_NOT_SUPPORTED',
      payment_status: 'paid',
      detail: expect.stringMatching(/bank_transfer/),
    });
    expect(await e.sim.requests('/refund')).toHaveLength(asked);
    expect((await e.services.store.transactions.findByOrderId('BT-1'))?.status).toBe('paid');
    expect((await act('nope', 'refund')).statusCode).toBe(404);
    expect((await e.app.inject({ method: 'POST', url: '/api/payments/RF-2/refund', payload: {} })).statusCode).toBe(
      401,
    );
  });

  it('cancel and expire pending payments; asking twice is harmless; the ERP hears each once', async () => {
    await charge('CX-1', 10000, { payment_type: 'bank_transfer', bank_transfer: { bank: 'bni' } });
    await charge('EX-1', 10000, { payment_type: 'bank_transfer', bank_transfer: { bank: 'bni' } });
    const cancelled = await act('CX-1', 'cancel');
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'cancelled', transaction_status: 'cancel', refunded_amount: 0 });
    expect((await act('CX-1', 'cancel')).json()).toMatchObject({ status: 'cancelled' });
    expect((await act('CX-1', 'expire')).json()).toMatchObject({ code: 'PAYMENT_CLOSED', payment_status: 'cancelled' });
    const expired = await act('EX-1', 'expire');
    expect(expired.statusCode).toBe(200);
    expect(expired.json()).toMatchObject({ status: 'expired', transaction_status: 'expire' });
    expect((await act('EX-1', 'expire')).statusCode).toBe(200);
    expect((await act('EX-1', 'refund')).json()).toMatchObject({ code: 'PAYMENT_NOT_PAID', payment_status: 'expired' });
    expect(await e.sim.requests('/cancel')).toHaveLength(1);
    expect(await e.sim.requests('/expire')).toHaveLength(1);
    await erp.waitFor(() => erpStatuses('CX-1').length >= 1 && erpStatuses('EX-1').length >= 1);
    await settle();
    // A charge's own pending notification is no news to the ERP; the gateway's cancel/expire notifications repeat the answers.
    expect(erpStatuses('CX-1').map((s) => s[0])).toEqual(['cancelled']);
    expect(erpStatuses('EX-1').map((s) => s[0])).toEqual(['expired']);
  });

  it('payment links act on their newest purchase; a link nobody bought is closed at the gateway', async () => {
    const link = (
      await e.app.inject({
        method: 'POST',
        url: '/api/payment-links',
        payload: { order_id: 'PL/1', nominal: 80000 },
        headers: auth,
      })
    ).json();
    expect(
      (await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, { payment_type: 'gopay' })).status,
    ).toBe(200);
    await expect
      .poll(async () => (await e.services.store.transactions.findByOrderId('PL/1'))?.status, {
        timeout: 5_000,
        interval: 20,
      })
      .toBe('paid');
    const refund = await act('PL/1', 'refund', { amount: 30000 });
    expect(refund.statusCode).toBe(200);
    expect(refund.json()).toMatchObject({ status: 'partially_refunded', refunded_amount: 30000 });
    const [call] = await e.sim.requests('/refund');
    expect(call?.path).toMatch(new RegExp(`^/v2/${link.gateway_order_id}-\\d+/refund$`));
    expect(call?.body).toMatchObject({ amount: 30000, refund_key: expect.stringMatching(/^rf-[0-9a-f]{32}$/) });
    await e.app.inject({
      method: 'POST',
      url: '/api/payment-links',
      payload: { order_id: 'PL/2', nominal: 5000 },
      headers: auth,
    });
    await e.app.inject({
      method: 'POST',
      url: '/api/payment-links',
      payload: { order_id: 'PL/3', nominal: 5000 },
      headers: auth,
    });
    expect((await act('PL/2', 'cancel')).json()).toMatchObject({ status: 'cancelled' });
    expect((await act('PL/3', 'expire')).json()).toMatchObject({ status: 'expired' });
    expect((await e.sim.gateway('GET', '/v1/payment-links/PL.2')).status).toBe(404);
    await erp.waitFor(() => erpStatuses('PL/2').length >= 1 && erpStatuses('PL/3').length >= 1);
    expect(erpStatuses('PL/3').map((s) => s[0])).toEqual(['expired']);
  });

  it('a refund retried after a gateway timeout is sent with the same refund_key and refunds once', async () => {
    await e.close();
    await start(300);
    const c = await charge('TO-1', 60000);
    await paid('TO-1', c.gateway_order_id);
    await e.sim.put('/_sim/faults', { timeout_rate: 1 });
    const first = await act('TO-1', 'refund', { amount: 20000 }, { 'idempotency-key': 'to-1' });
    expect(first.statusCode).toBe(504);
    await e.sim.del('/_sim/faults');
    const retry = await act('TO-1', 'refund', { amount: 20000 }, { 'idempotency-key': 'to-1' });
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({ status: 'partially_refunded', refunded_amount: 20000 });
    // The same request again (same Idempotency-Key) is the same refund: its key is sent again.
    const calls = await e.sim.requests('/refund');
    expect(calls).toHaveLength(2);
    const keys = calls.map((r) => (r.body as { refund_key: string }).refund_key);
    expect(keys[0]).toBe(keys[1]);
    expect(await gatewayRefunded(c.gateway_order_id)).toMatchObject({ refund_amount: '20000.00' });
    // Once settled, a new refund of the same amount is a new refund with a new key.
    const next = await act('TO-1', 'refund', { amount: 20000 });
    expect(next.json()).toMatchObject({ refunded_amount: 40000 });
    const last = (await e.sim.requests('/refund')).at(-1)?.body as { refund_key: string };
    expect(last.refund_key).not.toBe(keys[0]);
    await erp.waitFor(() => erpStatuses('TO-1').length >= 3);
    await settle();
    expect(erpStatuses('TO-1').map((s) => s[1])).toEqual([undefined, 20000, 40000]);
  });

  it('a request without a key after a timed-out refund is a new request: the lost one is resolved from the gateway first, never re-sent under its key', async () => {
    await e.close();
    await start(300);
    const c = await charge('TO-2', 60000);
    await paid('TO-2', c.gateway_order_id);
    await e.sim.put('/_sim/faults', { timeout_rate: 1 });
    expect((await act('TO-2', 'refund')).statusCode).toBe(504);
    await e.sim.del('/_sim/faults');
    // The gateway made the first refund (all of it): nothing is left, and the answer says so.
    const retry = await act('TO-2', 'refund');
    expect(retry.statusCode).toBe(409);
    expect(retry.json()).toMatchObject({ code: 'PAYMENT_CLOSED', payment_status: 'refunded' });
    expect(await gatewayRefunded(c.gateway_order_id)).toMatchObject({
      transaction_status: 'refund',
      refund_amount: '60000.00',
    });
    expect(await e.sim.requests('/refund')).toHaveLength(1);
    const stored = await e.services.store.refunds.listFor(
      (await e.services.store.transactions.findByOrderId('TO-2'))?.id ?? '',
    );
    expect(stored.map((r) => [r.state, r.amount])).toEqual([['approved', 60000]]);
  });

  it('a partial refund whose answer was lost is counted: a new, different refund is made beside it, with its own key', async () => {
    await e.close();
    await start(300);
    const c = await charge('TO-3', 60000);
    await paid('TO-3', c.gateway_order_id);
    await e.sim.put('/_sim/faults', { timeout_rate: 1 });
    expect(
      (await act('TO-3', 'refund', { amount: 10000, reason: 'first' }, { 'idempotency-key': 'to-3-a' })).statusCode,
    ).toBe(504);
    await e.sim.del('/_sim/faults');
    const second = await act('TO-3', 'refund', { amount: 10000, reason: 'second' }, { 'idempotency-key': 'to-3-b' });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ status: 'partially_refunded', refunded_amount: 20000 });
    const keys = (await e.sim.requests('/refund')).map((r) => (r.body as { refund_key: string }).refund_key);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
    expect(await gatewayRefunded(c.gateway_order_id)).toMatchObject({ refund_amount: '20000.00' });
    // What is left counts both: asking for more than the remaining 40,000 never reaches the gateway.
    const over = await act('TO-3', 'refund', { amount: 40001 });
    expect(over.statusCode).toBe(400);
    expect(over.json()).toMatchObject({ code: 'AMOUNT_INVALID' });
    expect(await e.sim.requests('/refund')).toHaveLength(2);
  });
});
