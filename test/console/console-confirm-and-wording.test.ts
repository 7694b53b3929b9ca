/**
 * Against the gateway simulator over HTTP: a money action (refund, cancel, expire) is only done
 * once confirmed on a page of its own; the payment page says what happened in words (a report of a
 * status already known is "no change", not "duplicate"; an ERP refusal reads "HTTP 500" once; plural
 * forms), and a QRIS payment shows its QR code drawn inline.
 */
import QRCode from 'qrcode';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { E2E_SERVER_KEY, simClient, type SimClient } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { formState, hiddenFields } from '../helpers/console-forms.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';

const KEY = 'console-confirm-key-0123456789';
const api = { authorization: `Bearer ${KEY}` };

describe.each(DATABASE_KINDS)('console confirmation and wording (%s)', (kind) => {
  let simulator: RunningSimulator;
  let sim: SimClient;
  let erp: ErpReceiver;
  let t: LoggedApp;
  beforeEach(async () => {
    simulator = await startSimulator({ serverKey: E2E_SERVER_KEY, logger: false, seed: 5 });
    sim = simClient(simulator.baseUrl);
    erp = await startErpReceiver();
    t = await makeLoggedApp(
      kind,
      {
        API_KEYS: KEY,
        MIDTRANS_MODE: 'simulator',
        MIDTRANS_SERVER_KEY: E2E_SERVER_KEY,
        CONSOLE_TIME_ZONE: 'Asia/Jakarta',
      },
      { simulatorBaseUrl: simulator.baseUrl, runtimeConfigCacheMs: 0 },
    );
    await patchRuntimeConfig(t.services.runtimeConfig, { erp: { notify_url: erp.url, timeout_ms: 2_000 } });
  });
  afterEach(async () => {
    await t.close();
    await erp.close();
    await simulator.close();
  });
  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ url, headers: { authorization: basicAuth(), ...headers } });
  const txPage = (orderId: string) => `/console/transactions/${encodeURIComponent(orderId)}`;
  const send = (action: string, cookie: string, fields: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: action,
      payload: new URLSearchParams(fields).toString(),
      headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
  /** Posts `fields` to `action` with the token and cookie of `page` as a browser would. */
  async function post(page: string, action: string, fields: Record<string, string>) {
    const { token, cookie } = formState(await get(page));
    return send(action, cookie, { _csrf: token, ...fields });
  }
  /** Posts `fields` to `action` from `page`, then sends the confirmation page's own form (confirm=1 and its one-time key) with the same cookie. */
  async function confirmed(page: string, action: string, fields: Record<string, string>) {
    const { token, cookie } = formState(await get(page));
    const first = await send(action, cookie, { _csrf: token, ...fields });
    expect(first.statusCode).toBe(200);
    return send(action, cookie, hiddenFields(first.body, action));
  }
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
    return res.json() as { gateway_order_id: string; qr_string?: string; actions?: unknown };
  };
  const paidQris = async (orderId: string) => {
    const c = await charge(orderId, { payment_type: 'qris' });
    expect((await sim.post(`/_sim/transactions/${c.gateway_order_id}/pay`)).status).toBe(200);
    expect(
      (await t.app.inject({ url: `/api/payments/${encodeURIComponent(orderId)}/status`, headers: api })).statusCode,
    ).toBe(200);
  };
  const tx = (orderId: string) => t.services.store.transactions.findByOrderId(orderId);

  it('cancel and expire: the first POST shows a confirmation and changes nothing; the confirmed one acts', async () => {
    await charge('CF-C');
    const first = await post(txPage('CF-C'), `${txPage('CF-C')}/cancel`, {});
    expect(first.statusCode).toBe(200);
    expect(first.body).toContain('data-confirm="cancel"');
    expect(first.body).toContain('<dd class="mono">CF-C</dd>');
    expect(first.body).toContain('<dd data-confirm-amount>Rp 50.000</dd>');
    expect(first.body).toContain('the customer can no longer pay it');
    expect(first.body).toContain('<input type="hidden" name="confirm" value="1">');
    expect(first.body).toContain(`<a href="${txPage('CF-C')}">Back, do nothing</a>`);
    expect(await sim.requests('/cancel')).toHaveLength(0);
    expect((await tx('CF-C'))?.status).toBe('pending');
    const done = await confirmed(txPage('CF-C'), `${txPage('CF-C')}/cancel`, {});
    expect(done.statusCode).toBe(303);
    expect(await sim.requests('/cancel')).toHaveLength(1);
    expect((await tx('CF-C'))?.status).toBe('cancelled');

    await charge('CF-E');
    expect((await post(txPage('CF-E'), `${txPage('CF-E')}/expire`, {})).body).toContain('data-confirm="expire"');
    expect(await sim.requests('/expire')).toHaveLength(0);
    expect((await tx('CF-E'))?.status).toBe('pending');
    expect((await confirmed(txPage('CF-E'), `${txPage('CF-E')}/expire`, {})).statusCode).toBe(303);
    expect((await tx('CF-E'))?.status).toBe('expired');
  });

  it('refund: the confirmation names the amount, or everything left when empty; only the confirmed POST refunds', async () => {
    await paidQris('CF-R');
    const all = await post(txPage('CF-R'), `${txPage('CF-R')}/refund`, { amount: '', reason: '' });
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain('<dd data-confirm-amount>everything left: Rp 50.000</dd>');
    const part = await post(txPage('CF-R'), `${txPage('CF-R')}/refund`, { amount: '20.000', reason: 'one item back' });
    expect(part.body).toContain('<dd data-confirm-amount>Rp 20.000</dd>');
    expect(part.body).toContain('<input type="hidden" name="amount" value="20000">');
    expect(part.body).toContain('<input type="hidden" name="reason" value="one item back">');
    expect(part.body).toContain('A refund cannot be undone.');
    expect(await sim.requests('/refund')).toHaveLength(0);
    expect((await tx('CF-R'))?.refundedAmount).toBe(0);
    const done = await confirmed(txPage('CF-R'), `${txPage('CF-R')}/refund`, {
      amount: '20000',
      reason: 'one item back',
    });
    expect(done.statusCode).toBe(303);
    expect(await sim.requests('/refund')).toHaveLength(1);
    expect((await tx('CF-R'))?.refundedAmount).toBe(20000);
  });

  it('a confirmation page in Indonesian', async () => {
    await charge('CF-ID');
    const { token, cookie } = formState(await get(txPage('CF-ID')));
    const res = await t.app.inject({
      method: 'POST',
      url: `${txPage('CF-ID')}/cancel`,
      payload: `_csrf=${encodeURIComponent(token)}`,
      headers: {
        authorization: basicAuth(),
        cookie: `${cookie}; paylink_lang=id`,
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    expect(res.body).toContain('<html lang="id">');
    expect(res.body).toContain('Konfirmasi pembatalan');
    expect(res.body).toContain('>Batal</a>');
  });

  it('the first report of a new charge (its pending status, already known) reads "no change", not "duplicate"', async () => {
    await charge('WD-1');
    expect((await t.app.inject({ url: '/api/payments/WD-1/status', headers: api })).statusCode).toBe(200);
    const page = await get(txPage('WD-1'));
    const timeline = page.body.slice(page.body.indexOf('<ol class="timeline">'));
    expect(timeline).toMatch(
      /Status report: <span data-gateway-status="pending">waiting for payment<\/span> <span class="badge r-duplicate" data-result="duplicate">no change<\/span>/,
    );
    expect(timeline).not.toMatch(/>duplicate</);
    expect(timeline).not.toMatch(/code \d{3}/);
  });

  it('an ERP refusal reads "HTTP 503" once per attempt, and one undelivered event is "event", not "event(s)"', async () => {
    await paidQris('WD-2');
    erp.setMode({ kind: 'fail', status: 503 });
    await t.services.outbox.runOnce();
    const page = await get(txPage('WD-2'));
    expect(page.body).toContain('Retry 1 undelivered ERP event</h3>');
    expect(page.body).not.toContain('(s)');
    const attempt = /ERP delivery attempt 1[^]*?<\/li>/.exec(page.body)?.[0] ?? '';
    expect(attempt).toContain('HTTP 503');
    expect(attempt.match(/HTTP 503/g)).toHaveLength(1);
    // The deliveries table's last answer too.
    const row =
      /<tr>\s*<td><a class="mono" href="\/console\/transactions\/WD-2">[^]*?<\/tr>/.exec(
        (await get('/console/deliveries')).body,
      )?.[0] ?? '';
    expect(row.match(/HTTP 503/g)).toHaveLength(1);
    const idPage = await get(`${txPage('WD-2')}?lang=id`);
    expect(idPage.body).toContain('Kirim ulang 1 notifikasi ERP yang belum terkirim</h3>');
  });

  it('a pending QRIS payment shows its QR code as inline SVG; a bank transfer has none', async () => {
    const c = await charge('QR-1', { payment_type: 'qris' });
    expect(typeof c.qr_string).toBe('string');
    const page = await get(txPage('QR-1'));
    const figure = /<figure class="qr"[^>]*data-qr>([^]*?)<figcaption>/.exec(page.body)?.[1] ?? '';
    expect(figure).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(figure.trim()).toBe(
      (await QRCode.toString(c.qr_string ?? '', { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })).trim(),
    );
    expect(page.body).not.toMatch(/<img[^>]+src="http/);
    await charge('QR-2');
    expect((await get(txPage('QR-2'))).body).not.toContain('data-qr');
  });

  it('a pending GoPay payment shows a QR code of its deeplink (what a phone opens in the GoPay app)', async () => {
    const c = await charge('QR-G', { payment_type: 'gopay' });
    const deeplink =
      (c.actions as Array<{ name: string; url: string }> | undefined)?.find((a) => a.name === 'deeplink-redirect')
        ?.url ?? '';
    expect(deeplink).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2\/gopay\/.+\/deeplink$/);
    const page = await get(txPage('QR-G'));
    const figure = /<figure class="qr"[^>]*data-qr>([^]*?)<figcaption>/.exec(page.body)?.[1] ?? '';
    expect(figure.trim()).toBe(
      (await QRCode.toString(deeplink, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })).trim(),
    );
  });
});
