/**
 * The console's actions against the gateway simulator, with the real file logger: each form needs its
 * CSRF token, does what it says at the gateway and locally, and writes an audit line naming the operator.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, OPERATOR } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { E2E_SERVER_KEY, simClient, type SimClient } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { formState, hiddenFields } from '../helpers/console-forms.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';

const KEY = 'console-actions-key-0123456789';
const api = { authorization: `Bearer ${KEY}` };

describe.each(DATABASE_KINDS)('console actions (%s)', (kind) => {
  let simulator: RunningSimulator;
  let sim: SimClient;
  let erp: ErpReceiver;
  let t: LoggedApp;
  beforeEach(async () => {
    simulator = await startSimulator({ serverKey: E2E_SERVER_KEY, logger: false, seed: 3 });
    sim = simClient(simulator.baseUrl);
    erp = await startErpReceiver();
    // The simulator has no notification URL: the local status moves only when paylink asks.
    t = await makeLoggedApp(
      kind,
      { API_KEYS: KEY, MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: E2E_SERVER_KEY },
      { simulatorBaseUrl: simulator.baseUrl, runtimeConfigCacheMs: 0 },
    );
    await patchRuntimeConfig(t.services.runtimeConfig, { erp: { notify_url: erp.url, timeout_ms: 2_000 } });
  });
  afterEach(async () => {
    await t.close();
    await erp.close();
    await simulator.close();
  });
  const get = (url: string) => t.app.inject({ url, headers: { authorization: basicAuth() } });
  /** Opens `page`, then posts its form to `action` with the page's token, cookie and the form's own fields, its one-time key among them (all but the token when `csrf` is false). */
  async function submit(page: string, action: string, fields: Record<string, string> = {}, csrf = true) {
    const shown = await get(page);
    const { token, cookie } = formState(shown);
    expect(token).not.toBe('');
    const { _csrf: _token, ...form } = hiddenFields(shown.body, action);
    const payload = new URLSearchParams({ ...(csrf ? { _csrf: token } : {}), ...form, ...fields }).toString();
    return t.app.inject({
      method: 'POST',
      url: action,
      payload,
      headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
  }
  /** A money action as a person does it: the form, then the confirmation page's form (confirm=1, its one-time key); `confirmed`: that form, to send it later. */
  async function confirmationOf(page: string, action: string, fields: Record<string, string> = {}) {
    const { token: pageToken, cookie } = formState(await get(page));
    const post = (body: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: action,
        payload: new URLSearchParams(body).toString(),
        headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
    const first = await post({ _csrf: pageToken, ...fields });
    expect(first.statusCode).toBe(200);
    expect(first.body).toContain('<input type="hidden" name="confirm" value="1">');
    const form = hiddenFields(first.body, action);
    return { confirm: () => post(form) };
  }
  const submitConfirmed = async (page: string, action: string, fields: Record<string, string> = {}) =>
    (await confirmationOf(page, action, fields)).confirm();
  const txPage = (orderId: string) => `/console/transactions/${encodeURIComponent(orderId)}`;
  const charge = async (
    orderId: string,
    method: object = { payment_type: 'bank_transfer', bank_transfer: { bank: 'bni' } },
  ) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/charge',
      payload: { order_id: orderId, nominal: 50000, ...method },
      headers: api,
    });
    expect(res.statusCode).toBe(201);
    return res.json() as { gateway_order_id: string };
  };
  const statusOf = async (orderId: string) => (await t.services.store.transactions.findByOrderId(orderId))?.status;
  /** The audit lines of one action: `{ audit: { actor, action, subject, outcome }, …detail }`. */
  const audits = async (action: string) =>
    (await t.lines()).filter(
      (l) => typeof l.audit === 'object' && l.audit !== null && 'action' in l.audit && l.audit.action === action,
    );
  const who = (l: Record<string, unknown>) =>
    typeof l.audit === 'object' && l.audit !== null && 'actor' in l.audit && 'subject' in l.audit
      ? [l.audit.actor, l.audit.subject]
      : [];

  it('check status now: asks the gateway, shows its answer, and writes the operator in the audit log', async () => {
    const c = await charge('CK-1', { payment_type: 'qris' });
    expect((await sim.post(`/_sim/transactions/${c.gateway_order_id}/pay`)).status).toBe(200);
    expect(await statusOf('CK-1')).toBe('pending');
    expect((await submit(txPage('CK-1'), `${txPage('CK-1')}/check`, {}, false)).statusCode).toBe(403);
    const res = await submit(txPage('CK-1'), `${txPage('CK-1')}/check`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/transactions/CK-1?done=check');
    expect(await statusOf('CK-1')).toBe('paid');
    const shown = await get(String(res.headers.location));
    expect(shown.body).toContain('Asked the gateway; the status below is its answer.');
    expect(shown.body).toContain('data-status="paid"');
    expect(await audits('payment_check')).toEqual([
      expect.objectContaining({
        audit: { actor: `operator:${OPERATOR.user}`, action: 'payment_check', subject: 'CK-1', outcome: 'requested' },
        order_id: 'CK-1',
      }),
    ]);
  });

  it('cancel and expire: the forms act at the gateway and the page shows the new status', async () => {
    await charge('CX-1');
    await charge('EX-1');
    // A cancellation confirmed in another tab while the payment was still pending.
    const staleCancel = await confirmationOf(txPage('EX-1'), `${txPage('EX-1')}/cancel`);
    const page = await get(txPage('CX-1'));
    expect(page.body).toContain('action="/console/transactions/CX-1/cancel"');
    expect(page.body).toContain('action="/console/transactions/CX-1/expire"');
    expect((await submit(txPage('CX-1'), `${txPage('CX-1')}/cancel`, {}, false)).statusCode).toBe(403);
    expect(await sim.requests('/cancel')).toHaveLength(0);
    const cancel = await submitConfirmed(txPage('CX-1'), `${txPage('CX-1')}/cancel`);
    expect(cancel.statusCode).toBe(303);
    expect(cancel.headers.location).toBe('/console/transactions/CX-1?done=cancel');
    expect(await statusOf('CX-1')).toBe('cancelled');
    expect((await get(String(cancel.headers.location))).body).toContain('Cancelled at the gateway.');
    const expire = await submitConfirmed(txPage('EX-1'), `${txPage('EX-1')}/expire`);
    expect(expire.statusCode).toBe(303);
    expect(await statusOf('EX-1')).toBe('expired');
    expect((await get(String(expire.headers.location))).body).toContain('Expired at the gateway.');
    expect(await sim.requests('/cancel')).toHaveLength(1);
    expect(await sim.requests('/expire')).toHaveLength(1);
    // Neither is offered any more, and posting one anyway names the state.
    expect((await get(txPage('EX-1'))).body).not.toContain('/expire"');
    const again = await staleCancel.confirm();
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('PAYMENT_CLOSED');
    expect((await audits('payment_cancel')).map(who)).toEqual([[`operator:${OPERATOR.user}`, 'CX-1']]);
    expect((await audits('payment_expire')).map(who)).toEqual([[`operator:${OPERATOR.user}`, 'EX-1']]);
  });

  /** A paid order whose ERP event failed to arrive. */
  async function undelivered(orderId: string): Promise<string> {
    const c = await charge(orderId, { payment_type: 'qris' });
    await sim.post(`/_sim/transactions/${c.gateway_order_id}/pay`);
    erp.setMode({ kind: 'fail', status: 503 });
    await t.app.inject({ method: 'GET', url: `/api/payments/${encodeURIComponent(orderId)}/status`, headers: api });
    await t.services.outbox.runOnce();
    const [event] = (await t.services.store.outbox.list({ state: 'failed' })).items.filter(
      (e) => e.orderId === orderId,
    );
    if (!event) throw new Error('no failed event');
    erp.setMode({ kind: 'ok' });
    return event.eventId;
  }

  it("retry deliveries on the payment page makes the order's failed events due now", async () => {
    const eventId = await undelivered('RD-1');
    const page = await get(txPage('RD-1'));
    expect(page.body).toContain('Retry 1 undelivered ERP event</h3>');
    const res = await submit(txPage('RD-1'), `${txPage('RD-1')}/retry-deliveries`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/transactions/RD-1?done=retry-deliveries');
    expect((await t.services.store.outbox.list({})).items.find((e) => e.eventId === eventId)?.state).toBe('pending');
    await t.services.outbox.runOnce();
    expect(erp.accepted().map((d) => d.webhookId)).toEqual([eventId]);
    expect(await audits('delivery_retry')).toEqual([
      expect.objectContaining({
        audit: { actor: `operator:${OPERATOR.user}`, action: 'delivery_retry', subject: 'RD-1', outcome: 'queued' },
        order_id: 'RD-1',
        events: [eventId],
      }),
    ]);
  });

  it("the deliveries page retries all of an order's events with one CSRF-protected form", async () => {
    const eventId = await undelivered('RD/2');
    const page = await get('/console/deliveries');
    expect(page.body).toContain('action="/console/transactions/RD%2F2/retry-deliveries"');
    expect(page.body).toContain('<input type="hidden" name="from" value="deliveries">');
    expect(page.body).toContain('Retry all</button>');
    const action = '/console/transactions/RD%2F2/retry-deliveries';
    const forged = await submit('/console/deliveries', action, { from: 'deliveries' }, false);
    expect(forged.statusCode).toBe(403);
    expect((await t.services.store.outbox.list({ state: 'failed' })).items.map((e) => e.eventId)).toEqual([eventId]);
    const res = await submit('/console/deliveries', action, { from: 'deliveries' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/deliveries?done=retry-deliveries');
    expect((await t.services.store.outbox.list({ state: 'failed' })).items).toEqual([]);
    const after = await get(String(res.headers.location));
    expect(after.body).toContain('Undelivered events of this order are due again now.');
    expect(after.body).not.toContain('Retry all</button>');
  });

  it('one delivery retried from the API and from the console: the same action, the same audit line', async () => {
    const eventId = await undelivered('RD-3');
    // The deliveries page's form, opened before the API retry took the event off that page.
    const shown = await get('/console/deliveries');
    const form = hiddenFields(shown.body, `/console/deliveries/${eventId}/retry`);
    expect(form._key).toBeDefined();
    const viaApi = await t.app.inject({
      method: 'POST',
      url: `/api/deliveries/${eventId}/retry`,
      headers: { authorization: basicAuth() },
    });
    expect(viaApi.statusCode).toBe(200);
    expect(viaApi.json()).toMatchObject({ event_id: eventId, status: 'pending' });
    const viaConsole = await t.app.inject({
      method: 'POST',
      url: `/console/deliveries/${eventId}/retry`,
      payload: new URLSearchParams(form).toString(),
      headers: {
        authorization: basicAuth(),
        cookie: formState(shown).cookie,
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    expect(viaConsole.statusCode).toBe(303);
    const lines = (await audits('delivery_retry')).map((l) => ({
      audit: l.audit,
      order_id: l.order_id,
      events: l.events,
      msg: l.msg,
    }));
    const line = {
      audit: { actor: `operator:${OPERATOR.user}`, action: 'delivery_retry', subject: 'RD-3', outcome: 'queued' },
      order_id: 'RD-3',
      events: [eventId],
      msg: `operator:${OPERATOR.user} re-queued an ERP delivery`,
    };
    expect(lines).toEqual([line, line]);
  });

  it('deactivating a payment link through the API writes an audit line naming the API', async () => {
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/payment-links',
          payload: { order_id: 'PL-X', nominal: 80000 },
          headers: api,
        })
      ).statusCode,
    ).toBe(201);
    const res = await t.app.inject({ method: 'DELETE', url: '/api/payment-links/PL-X', headers: api });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'cancelled' });
    expect(await audits('link_cancel')).toEqual([
      expect.objectContaining({
        audit: { actor: 'api', action: 'link_cancel', subject: 'PL-X', outcome: 'requested' },
        order_id: 'PL-X',
      }),
    ]);
    // Closed already: answered as it is, and nothing more is asked of the gateway or written to the audit log.
    expect((await t.app.inject({ method: 'DELETE', url: '/api/payment-links/PL-X', headers: api })).statusCode).toBe(
      200,
    );
    expect(await audits('link_cancel')).toHaveLength(1);
  });

  it('the copy-link control carries the payment link', async () => {
    const link = (
      await t.app.inject({
        method: 'POST',
        url: '/api/payment-links',
        payload: { order_id: 'PL-1', nominal: 80000 },
        headers: api,
      })
    ).json() as { payment_url: string };
    expect(link.payment_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/payment-links\//);
    const page = await get(txPage('PL-1'));
    expect(page.body).toContain(`<input id="payment-url" readonly value="${link.payment_url}">`);
    expect(page.body).toContain(
      '<button type="button" class="secondary" data-copy="payment-url" data-copied="Copied">Copy link</button>',
    );
    const script = await get('/console/assets/console.js');
    expect(script.body).toContain("t.matches('button[data-copy]')");
    expect(script.body).toContain("document.getElementById(t.getAttribute('data-copy'))");
  });

  it('a console refund writes an audit line naming the operator; an API refund names the API', async () => {
    for (const id of ['RF-C', 'RF-A']) {
      const c = await charge(id, { payment_type: 'qris' });
      await sim.post(`/_sim/transactions/${c.gateway_order_id}/pay`);
      await t.app.inject({ method: 'GET', url: `/api/payments/${id}/status`, headers: api });
    }
    const res = await submitConfirmed(txPage('RF-C'), `${txPage('RF-C')}/refund`, {
      amount: '10.000',
      reason: 'one item back',
    });
    expect(res.statusCode).toBe(303);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/payments/RF-A/refund',
          payload: { amount: 5000 },
          headers: api,
        })
      ).statusCode,
    ).toBe(200);
    const lines = await audits('payment_refund');
    const consoleLine = lines.find((l) => l.order_id === 'RF-C');
    const apiLine = lines.find((l) => l.order_id === 'RF-A');
    expect(consoleLine).toMatchObject({
      amount: 10000,
      reason: 'one item back',
      refund_key: expect.stringMatching(/^rf-/),
      msg: `operator:${OPERATOR.user} asked to refund RF-C`,
    });
    expect(consoleLine?.audit).toEqual({
      actor: `operator:${OPERATOR.user}`,
      action: 'payment_refund',
      subject: 'RF-C',
      outcome: 'requested',
    });
    expect(apiLine).toMatchObject({ amount: 5000, msg: 'api asked to refund RF-A' });
    expect(apiLine?.audit).toEqual({ actor: 'api', action: 'payment_refund', subject: 'RF-A', outcome: 'requested' });
    expect(lines).toHaveLength(2);
  });
});
