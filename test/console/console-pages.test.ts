/**
 * What the console's pages offer and how they word it: a refund only for methods the gateway can
 * refund (the others say why), log levels with badges of their own, one placeholder for nothing,
 * "refunded" in a colour of its own, and a settlement report in words rather than its status code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { seedTransaction } from '../helpers/seed.js';
import { formState } from '../helpers/console-forms.js';
import { availableActions } from '../../src/domain/actions/refund.js';
import { refundableMethod } from '../../src/gateway/payment-methods.js';

describe.each(DATABASE_KINDS)('console pages (%s)', (kind) => {
  let t: LoggedApp;
  beforeEach(async () => {
    t = await makeLoggedApp(kind, {
      MIDTRANS_MODE: 'simulator',
      MIDTRANS_API_BASE_URL: 'http://127.0.0.1:9',
      CONSOLE_TIME_ZONE: 'Asia/Jakarta',
    });
  });
  afterEach(async () => t.close());
  const get = (url: string) => t.app.inject({ url, headers: { authorization: basicAuth() } });

  it('in simulator mode every page says no money moves; Deliveries names where events go, without its secrets', async () => {
    for (const url of ['/console', '/console/transactions', '/console/deliveries?lang=id'])
      expect((await get(url)).body, url).toMatch(/<p class="sim-banner" role="note" data-simulator>Simulator: /);
    expect((await get('/console')).body).toContain('Simulator: no money moves.');
    expect((await get('/console/deliveries')).body).toContain('No ERP notification URL is set');
    await t.services.runtimeConfig.save(
      { erp: { notify_url: 'https://erp-user:erp-pass@erp.example.com/hooks/paylink?token=s3cret' } },
      0,
      'test',
    );
    const page = await get('/console/deliveries?lang=id');
    expect(page.body).toContain('Notifikasi dikirim ke <code>https://erp.example.com/hooks/paylink</code>');
    expect(page.body).not.toMatch(/s3cret|erp-pass/);
    await t.services.runtimeConfig.save(
      { gateway: { mode: 'sandbox', server_key: 'SB-Mid-server-abcdef123456' } },
      1,
      'test',
    );
    expect((await get('/console')).body).not.toContain('data-simulator');
  });

  it('a paid bank transfer has no refund form and says why; a paid QRIS payment has it', async () => {
    const va = await seedTransaction(t.services.store, {
      orderId: 'RF-VA',
      kind: 'charge',
      status: 'paid',
      nominal: 75000,
      paymentType: 'bank_transfer',
      gatewayTransactionId: 'gw-va',
    });
    await seedTransaction(t.services.store, {
      orderId: 'RF-QR',
      kind: 'charge',
      status: 'paid',
      nominal: 75000,
      paymentType: 'qris',
      gatewayTransactionId: 'gw-qr',
    });
    const vaPage = await get('/console/transactions/RF-VA');
    expect(vaPage.body).not.toContain('action="/console/transactions/RF-VA/refund"');
    expect(vaPage.body).toContain('data-no-refund="method"');
    expect(vaPage.body).toContain('Bank transfer (virtual account) payments cannot be refunded through the gateway');
    expect((await get('/console/transactions/RF-VA?lang=id')).body).toContain(
      'Pembayaran transfer bank (virtual account) tidak dapat dikembalikan melalui gateway',
    );
    const qrPage = await get('/console/transactions/RF-QR');
    expect(qrPage.body).toContain('action="/console/transactions/RF-QR/refund"');
    expect(qrPage.body).not.toContain('data-no-refund');
    // Posting the form anyway is refused on the page, before any confirmation, and nothing is asked.
    const { token, cookie } = formState(vaPage);
    const res = await t.app.inject({
      method: 'POST',
      url: '/console/transactions/RF-VA/refund',
      payload: `_csrf=${encodeURIComponent(token)}&amount=&confirm=1`,
      headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('cannot be refunded through the gateway');
    expect(await t.services.store.refunds.listOpen(va.id)).toEqual([]);
    // The rule is the domain's, one place for every caller.
    expect(['credit_card', 'gopay', 'shopeepay', 'qris'].every(refundableMethod)).toBe(true);
    expect(['bank_transfer', 'echannel', 'cstore', null].some(refundableMethod)).toBe(false);
    expect(availableActions(va).refund).toEqual({ ok: false, why: 'method' });
  });

  it("the logs page is a table of time, level, message and order, raw JSON on demand, the console's own page loads hidden", async () => {
    const file = path.join(t.logDir, 'paylink.2026-11-22.1.log');
    const at = (n: number) => `2026-11-22T08:00:0${n}.000Z`;
    const access = (n: number, url: string) =>
      JSON.stringify({
        level: 30,
        time: at(n),
        msg: 'request completed',
        request_id: `req-${n}`,
        req: { method: 'GET', url },
        res: { statusCode: 200 },
        responseTime: 3.2,
      });
    fs.writeFileSync(
      file,
      [
        access(1, '/console/transactions?lang=id'),
        access(2, '/api/payment-links/SO-9'),
        JSON.stringify({ level: 40, time: at(3), msg: 'erp delivery failed', order_id: 'LG-1', request_id: 'req-3' }),
        access(4, '/console/assets/console.css'),
      ].join('\n') + '\n',
    );
    const page = await get('/console/logs?q=2026-11-22');
    const table = page.body.slice(page.body.indexOf('<tbody>'), page.body.indexOf('</tbody>'));
    expect(page.body).toMatch(
      /<th scope="col">Time<\/th><th scope="col">Level<\/th><th scope="col">Message<\/th><th scope="col">Order id<\/th>/,
    );
    expect(table.match(/<tr /g)).toHaveLength(2);
    expect(table).toContain('<code>GET /api/payment-links/SO-9</code> → 200');
    expect(table).toContain('<span class="log-msg">erp delivery failed</span>');
    expect(table).toContain(`<a class="mono" href="/console/transactions/LG-1">LG-1</a>`);
    expect(table).not.toContain('/console/transactions?lang=id');
    expect(table).toMatch(/<details class="raw"><summary>Raw JSON<\/summary>/);
    expect(table).toContain('&quot;request_id&quot;: &quot;req-3&quot;');
    const all = await get('/console/logs?q=2026-11-22&console=1');
    const allRows = all.body.slice(all.body.indexOf('<tbody>'), all.body.indexOf('</tbody>'));
    // The first search's own page load (its address holds the text searched) is listed now too.
    expect(allRows).toContain('<code>GET /console/assets/console.css</code>');
    expect(allRows).toContain('<code>GET /console/transactions?lang=id</code>');
  });

  it('log levels get badges of their own, not payment-status badges', async () => {
    const file = path.join(t.logDir, 'paylink.2026-11-21.1.log');
    const line = (level: number, msg: string) =>
      `${JSON.stringify({ level, time: '2026-11-21T08:00:00.000Z', msg, order_id: 'LV-1' })}\n`;
    fs.writeFileSync(
      file,
      line(20, 'a debug line') +
        line(30, 'an info line') +
        line(40, 'a warn line') +
        line(50, 'an error line') +
        line(60, 'a fatal line'),
    );
    const page = await get('/console/logs?order_id=LV-1&level=debug');
    expect(page.statusCode).toBe(200);
    for (const [level, word] of [
      ['debug', 'debug'],
      ['info', 'info'],
      ['warn', 'warning'],
      ['error', 'error'],
      ['fatal', 'fatal'],
    ]) {
      expect(page.body).toContain(`<span class="badge l-${level}" data-level="${level}">${word}</span>`);
    }
    const table = page.body.slice(page.body.indexOf('<tbody>'), page.body.indexOf('</tbody>'));
    expect(table).not.toMatch(/s-pending|s-failed|>pending<|>failed</);
    const css = (await get('/console/assets/console.css')).body;
    const background = (cls: string) => new RegExp(`\\.${cls}[^{]*\\{background:([^;}]+)`).exec(css)?.[1];
    expect(new Set(['l-info', 'l-warn', 'l-error', 'l-fatal', 'l-debug'].map(background)).size).toBe(5);
  });

  it('"refunded" has a colour of its own, not the amber of "pending"', async () => {
    const css = (await get('/console/assets/console.css')).body;
    const rule = (cls: string) =>
      css.split('}').find((r) =>
        r
          .split('{')[0]
          ?.split(',')
          .some((sel) => sel.trim() === `.${cls}`),
      );
    expect(rule('s-refunded')).toBeDefined();
    expect(rule('s-refunded')).not.toBe(rule('s-pending'));
    const bg = (cls: string) => /background:([^;]+)/.exec(rule(cls) ?? '')?.[1];
    expect(bg('s-refunded')).not.toBe(bg('s-pending'));
    expect(bg('s-partially_refunded')).toBe(bg('s-refunded'));
  });

  it('one placeholder for nothing: "—" on the overview and the payment page', async () => {
    await seedTransaction(t.services.store, { orderId: 'PH-1', status: 'pending', paymentType: null, expireAt: null });
    const overview = await get('/console');
    expect(overview.body).toContain('<dt>Last notification</dt><dd>—</dd>');
    expect(overview.body).toContain('<dt>Oldest undelivered</dt><dd>—</dd>');
    expect(overview.body).not.toMatch(/>none( yet)?</);
    const page = await get('/console/transactions/PH-1');
    expect(page.body).toContain('<dt>Payment type</dt><dd>—</dd>');
    expect(page.body).toContain('<dt>Expires</dt><dd>—</dd>');
    expect(page.body).toContain('<dt>Settled</dt><dd>—</dd>');
    expect(page.body).not.toMatch(/>\?<|>none</);
  });

  it('a settlement report reads "settled", not its status code', async () => {
    const tx = await seedTransaction(t.services.store, {
      orderId: 'ST-1',
      kind: 'charge',
      status: 'paid',
      paymentType: 'qris',
    });
    await t.services.store.notifications.record({
      dedupeKey: 'ST-1-settlement',
      gatewayOrderId: tx.gatewayOrderId,
      transactionRef: tx.id,
      gatewayTransactionId: 'gw',
      transactionStatus: 'settlement',
      statusCode: '200',
      source: 'webhook',
      result: 'applied',
      payload: '{}',
    });
    const page = await get('/console/transactions/ST-1');
    const timeline = page.body.slice(page.body.indexOf('<ol class="timeline">'));
    expect(timeline).toContain('Notification: <span data-gateway-status="settlement">settled</span>');
    expect(timeline).not.toMatch(/code 20\d/);
    expect((await get('/console/transactions/ST-1?lang=id')).body).toContain(
      'Notifikasi gateway: <span data-gateway-status="settlement">lunas</span>',
    );
  });
});
