/**
 * Against the gateway simulator over HTTP: every console form that acts (a confirmed refund, cancel
 * or expire, a delivery retry) carries a one-time key, so a double click, a browser re-POST or a
 * replayed form does its action once, and a form without its key does nothing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, OPERATOR } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { E2E_SERVER_KEY, simClient, type SimClient } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { formState, hiddenFields } from '../helpers/console-forms.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { actOnce, formRequest } from '../../src/http/console/form-keys.js';
import { CSRF_VALIDITY_MS } from '../../src/http/console/context.js';

const KEY = 'console-form-keys-key-0123456789';
const api = { authorization: `Bearer ${KEY}` };

describe.each(DATABASE_KINDS)('console forms act once (%s)', (kind) => {
  let simulator: RunningSimulator;
  let sim: SimClient;
  let erp: ErpReceiver;
  let t: LoggedApp;
  beforeEach(async () => {
    simulator = await startSimulator({ serverKey: E2E_SERVER_KEY, logger: false, seed: 7 });
    sim = simClient(simulator.baseUrl);
    erp = await startErpReceiver();
    t = await makeLoggedApp(
      kind,
      { API_KEYS: KEY, MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: E2E_SERVER_KEY },
      { simulatorBaseUrl: simulator.baseUrl, runtimeConfigCacheMs: 0 },
    );
    await patchRuntimeConfig(t.services.runtimeConfig, { erp: { notify_url: erp.url, timeout_ms: 2_000 } });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await t.close();
    await erp.close();
    await simulator.close();
  });
  const get = (url: string) => t.app.inject({ url, headers: { authorization: basicAuth() } });
  const txPage = (orderId: string) => `/console/transactions/${encodeURIComponent(orderId)}`;
  const post = (url: string, cookie: string, fields: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url,
      payload: new URLSearchParams(fields).toString(),
      headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
  /** The confirmation page of a money action, as the payment page's form asks for it: its Confirm form's fields and the cookie. */
  async function confirmation(orderId: string, action: string, fields: Record<string, string> = {}) {
    const { token, cookie } = formState(await get(txPage(orderId)));
    const page = await post(`${txPage(orderId)}/${action}`, cookie, { _csrf: token, ...fields });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`data-confirm="${action}"`);
    return { form: hiddenFields(page.body, `${txPage(orderId)}/${action}`), cookie, page };
  }
  /** The fields of the form posting to `action` on `page`, with the cookie of that page. */
  async function pageForm(page: string, action: string) {
    const res = await get(page);
    return { form: hiddenFields(res.body, action), cookie: formState(res).cookie };
  }
  /** The same form sent twice at once, then once more after both answered. */
  async function twiceAtOnceThenAgain(url: string, cookie: string, form: Record<string, string>) {
    const atOnce = await Promise.all([post(url, cookie, form), post(url, cookie, form)]);
    return [...atOnce, await post(url, cookie, form)];
  }
  const charge = async (
    orderId: string,
    nominal: number,
    method: object = { payment_type: 'bank_transfer', bank_transfer: { bank: 'bni' } },
  ) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/charge',
      payload: { order_id: orderId, nominal, ...method },
      headers: api,
    });
    expect(res.statusCode).toBe(201);
    return (res.json() as { gateway_order_id: string }).gateway_order_id;
  };
  const paidQris = async (orderId: string, nominal: number) => {
    const gatewayOrderId = await charge(orderId, nominal, { payment_type: 'qris' });
    expect((await sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    expect(
      (await t.app.inject({ url: `/api/payments/${encodeURIComponent(orderId)}/status`, headers: api })).statusCode,
    ).toBe(200);
    return gatewayOrderId;
  };
  /** The refunds the gateway holds for an order, by its own status API. */
  const gatewayRefunds = async (gatewayOrderId: string) =>
    ((await sim.gateway('GET', `/v2/${gatewayOrderId}/status`)).body as { refunds?: Array<{ refund_amount: string }> })
      .refunds ?? [];
  const refunded = async (orderId: string) =>
    (await t.services.store.transactions.findByOrderId(orderId))?.refundedAmount;
  const audits = async (action: string) =>
    (await t.lines()).filter(
      (l) => typeof l.audit === 'object' && l.audit !== null && 'action' in l.audit && l.audit.action === action,
    );

  it('a refund confirmation of Rp 40.000 sent twice at once and once more refunds Rp 40.000 once; each answer is the first one', async () => {
    const gatewayOrderId = await paidQris('OK-R1', 150_000);
    const { form, cookie } = await confirmation('OK-R1', 'refund', { amount: '40.000', reason: '' });
    expect(form).toMatchObject({ amount: '40000', confirm: '1', _key: expect.stringMatching(/\S{20,}/) });
    const answers = await twiceAtOnceThenAgain(`${txPage('OK-R1')}/refund`, cookie, form);
    expect(answers.map((a) => [a.statusCode, a.headers.location])).toEqual(
      Array(3).fill([303, '/console/transactions/OK-R1?done=refund']),
    );
    expect((await gatewayRefunds(gatewayOrderId)).map((r) => Number(r.refund_amount))).toEqual([40_000]);
    expect(await sim.requests('/refund')).toHaveLength(1);
    expect(await refunded('OK-R1')).toBe(40_000);
    expect(await audits('payment_refund')).toHaveLength(1);
  });

  it('the same key with another amount is refused before and after its own refund; only its own amount is refunded', async () => {
    const gatewayOrderId = await paidQris('OK-R2', 150_000);
    const { form, cookie } = await confirmation('OK-R2', 'refund', { amount: '40000', reason: 'one item back' });
    const url = `${txPage('OK-R2')}/refund`;
    // The key is made for the values its page showed: with others it is no key at all.
    for (const altered of [
      { ...form, amount: '50000' },
      { ...form, reason: 'two items back' },
    ]) {
      const res = await post(url, cookie, altered);
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('(FORM_KEY_INVALID)');
    }
    expect(await sim.requests('/refund')).toHaveLength(0);
    expect((await post(url, cookie, form)).statusCode).toBe(303);
    const after = await post(url, cookie, { ...form, amount: '50000' });
    expect(after.statusCode).toBe(403);
    expect(after.body).toContain('(FORM_KEY_INVALID)');
    expect((await gatewayRefunds(gatewayOrderId)).map((r) => Number(r.refund_amount))).toEqual([40_000]);
    expect(await refunded('OK-R2')).toBe(40_000);
    // The key of a refund form is no good for another action of the same payment either.
    const cancel = await post(`${txPage('OK-R2')}/cancel`, cookie, {
      _csrf: form._csrf ?? '',
      _key: form._key ?? '',
      confirm: '1',
    });
    expect(cancel.statusCode).toBe(403);
    expect(cancel.body).toContain('(FORM_KEY_INVALID)');
    // A paid payment is not offered a cancellation: the answer is its page, not a confirmation.
    expect(cancel.body).not.toContain('data-confirm="cancel"');
    expect(await sim.requests('/cancel')).toHaveLength(0);
  });

  it('cancel and expire: a confirmation sent twice at once and once more asks the gateway once', async () => {
    for (const [orderId, action] of [
      ['OK-C', 'cancel'],
      ['OK-E', 'expire'],
    ] as const) {
      await charge(orderId, 50_000);
      const { form, cookie } = await confirmation(orderId, action);
      const answers = await twiceAtOnceThenAgain(`${txPage(orderId)}/${action}`, cookie, form);
      expect(answers.map((a) => [a.statusCode, a.headers.location])).toEqual(
        Array(3).fill([303, `/console/transactions/${orderId}?done=${action}`]),
      );
      expect(await sim.requests(`/${action}`)).toHaveLength(1);
      expect(await audits(`payment_${action}`)).toHaveLength(1);
    }
  });

  it("a refusal is the form's outcome: sent again, the same refusal, and the gateway is not asked", async () => {
    await charge('OK-X', 50_000);
    const { form, cookie } = await confirmation('OK-X', 'expire');
    expect((await t.app.inject({ method: 'POST', url: '/api/payments/OK-X/cancel', headers: api })).statusCode).toBe(
      200,
    );
    const answers = [
      await post(`${txPage('OK-X')}/expire`, cookie, form),
      await post(`${txPage('OK-X')}/expire`, cookie, form),
    ];
    for (const a of answers) {
      expect(a.statusCode).toBe(409);
      expect(a.body).toContain('(PAYMENT_CLOSED)');
      expect(a.body).toContain('data-status="cancelled"');
    }
    expect(await sim.requests('/expire')).toHaveLength(0);
    const kept = await t.store.db
      .selectFrom('idempotency_records')
      .select(['scope', 'state', 'response_status'])
      .where('scope', 'like', 'console:%')
      .execute();
    expect(kept).toEqual([
      { scope: expect.stringMatching(/^console:[0-9a-f]{16}$/), state: 'completed', response_status: 409 },
    ]);
  });

  /** A paid order whose ERP event failed to arrive: its event id. */
  async function undelivered(orderId: string): Promise<string> {
    await paidQris(orderId, 50_000);
    erp.setMode({ kind: 'fail', status: 503 });
    await t.services.outbox.runOnce();
    erp.setMode({ kind: 'ok' });
    const event = (await t.services.store.outbox.list({ state: 'failed' })).items.find((e) => e.orderId === orderId);
    if (!event) throw new Error('no failed event');
    return event.eventId;
  }

  it("delivery retries: the payment page's, the deliveries page's and one event's form, each sent twice at once and once more, re-queue once", async () => {
    const forms = [
      {
        orderId: 'OK-D1',
        page: txPage('OK-D1'),
        action: () => `${txPage('OK-D1')}/retry-deliveries`,
        done: '/console/transactions/OK-D1?done=retry-deliveries',
      },
      {
        orderId: 'OK-D2',
        page: '/console/deliveries',
        action: () => `${txPage('OK-D2')}/retry-deliveries`,
        done: '/console/deliveries?done=retry-deliveries',
      },
      {
        orderId: 'OK-D3',
        page: '/console/deliveries',
        action: (eventId: string) => `/console/deliveries/${eventId}/retry`,
        done: '/console/deliveries?done=retry',
      },
    ];
    for (const f of forms) {
      const eventId = await undelivered(f.orderId);
      const { form, cookie } = await pageForm(f.page, f.action(eventId));
      expect(form._key).toMatch(/\S{20,}/);
      const answers = await twiceAtOnceThenAgain(f.action(eventId), cookie, form);
      expect(answers.map((a) => [a.statusCode, a.headers.location])).toEqual(Array(3).fill([303, f.done]));
      const lines = (await audits('delivery_retry')).filter((l) => l.order_id === f.orderId);
      expect(lines, f.orderId).toHaveLength(1);
      expect(lines[0]).toMatchObject({ events: [eventId] });
    }
  });

  it('a confirmed form without its key, or with a key it was not given, is refused and does nothing', async () => {
    const gatewayOrderId = await paidQris('OK-N', 150_000);
    const { form, cookie } = await confirmation('OK-N', 'refund', { amount: '40000' });
    const { _key: key, ...keyless } = form;
    const res = await post(`${txPage('OK-N')}/refund`, cookie, keyless);
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('FORM_KEY_INVALID');
    // The answer is the confirmation again, with a key of its own: confirming there is one click.
    expect(res.body).toContain('data-confirm="refund"');
    const fresh = hiddenFields(res.body, `${txPage('OK-N')}/refund`);
    expect(fresh._key).toMatch(/\S{20,}/);
    expect(fresh._key).not.toBe(key);
    for (const forged of [`${key ?? ''}x`, 'made-up-key', (key ?? '').replace(/^[^.]+/, '0')]) {
      const again = await post(`${txPage('OK-N')}/refund`, cookie, { ...keyless, _key: forged });
      expect(again.statusCode).toBe(403);
      expect(again.body).toContain('FORM_KEY_INVALID');
    }
    await charge('OK-NC', 50_000);
    const cancel = await confirmation('OK-NC', 'cancel');
    const { _key: _cancelKey, ...keylessCancel } = cancel.form;
    expect((await post(`${txPage('OK-NC')}/cancel`, cancel.cookie, keylessCancel)).statusCode).toBe(403);
    const eventId = await undelivered('OK-ND');
    const retry = await pageForm('/console/deliveries', `/console/deliveries/${eventId}/retry`);
    const { _key: _retryKey, ...keylessRetry } = retry.form;
    expect((await post(`/console/deliveries/${eventId}/retry`, retry.cookie, keylessRetry)).statusCode).toBe(403);
    const order = await pageForm(txPage('OK-ND'), `${txPage('OK-ND')}/retry-deliveries`);
    const { _key: _orderKey, ...keylessOrder } = order.form;
    expect((await post(`${txPage('OK-ND')}/retry-deliveries`, order.cookie, keylessOrder)).statusCode).toBe(403);
    expect(await sim.requests('/refund')).toHaveLength(0);
    expect(await gatewayRefunds(gatewayOrderId)).toEqual([]);
    expect(await refunded('OK-N')).toBe(0);
    expect(await sim.requests('/cancel')).toHaveLength(0);
    expect((await t.services.store.outbox.findByEventId(eventId))?.state).toBe('failed');
    expect(await audits('payment_refund')).toEqual([]);
    expect(await audits('delivery_retry')).toEqual([]);
  });

  it('a key is good for the operator it was shown to, for 12 hours', async () => {
    await paidQris('OK-K', 150_000);
    const { form } = await confirmation('OK-K', 'refund', { amount: '40000' });
    const request = formRequest('refund', 'OK-K', { amount: '40000' });
    let acted = 0;
    const act = async () => {
      acted += 1;
      return '/console/transactions/OK-K?done=refund';
    };
    await expect(
      actOnce(t.services, { operator: 'operator:auditor', key: form._key, request }, act),
    ).rejects.toMatchObject({ code: 'FORM_KEY_INVALID' });
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + CSRF_VALIDITY_MS + 60_000);
    await expect(
      actOnce(t.services, { operator: `operator:${OPERATOR.user}`, key: form._key, request }, act),
    ).rejects.toMatchObject({ code: 'FORM_KEY_INVALID' });
    vi.useRealTimers();
    expect(acted).toBe(0);
    expect(await actOnce(t.services, { operator: `operator:${OPERATOR.user}`, key: form._key, request }, act)).toBe(
      '/console/transactions/OK-K?done=refund',
    );
    expect(await actOnce(t.services, { operator: `operator:${OPERATOR.user}`, key: form._key, request }, act)).toBe(
      '/console/transactions/OK-K?done=refund',
    );
    expect(acted).toBe(1);
  });
});
