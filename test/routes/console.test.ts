import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { seedTransaction } from '../helpers/seed.js';
import { formState } from '../helpers/console-forms.js';

const PAGES = ['/console', '/console/transactions', '/console/deliveries', '/console/logs', '/console/config'];
const HOSTILE = 'INV/<script>alert(1)</script>:1';

describe.each(DATABASE_KINDS)('operator console (%s)', (kind) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await makeTestApp(kind, {
      MIDTRANS_MODE: 'simulator',
      MIDTRANS_API_BASE_URL: 'http://127.0.0.1:9',
      CONSOLE_TIME_ZONE: 'Asia/Jakarta',
    });
  });
  afterEach(async () => t.close());
  const get = (url: string) => t.app.inject({ url, headers: { authorization: basicAuth() } });

  it('every page needs the operator credentials and is sent with a strict CSP and no inline script', async () => {
    for (const url of [...PAGES, '/console/assets/console.js']) {
      const anon = await t.app.inject({ url });
      expect(anon.statusCode, url).toBe(401);
      expect(anon.headers['www-authenticate'], url).toMatch(/^Basic/);
      expect((await t.app.inject({ url, headers: { authorization: basicAuth('ops', 'wrong') } })).statusCode, url).toBe(
        401,
      );
    }
    for (const url of PAGES) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toMatch(/^default-src 'self';/);
      expect(res.headers['content-security-policy']).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      // Scripts only by src from this origin; no style attributes or blocks either.
      expect(res.body.match(/<script(?![^>]*\ssrc="\/console\/assets\/)[^>]*>/g), url).toBeNull();
      expect(res.body, url).not.toMatch(/\sstyle=|<style/);
      expect(res.body).toContain('<nav aria-label="Console">');
    }
  });

  it('escapes what it shows, formats rupiah and shows times in the operator time zone', async () => {
    const tx = await seedTransaction(t.services.store, {
      orderId: HOSTILE,
      status: 'paid',
      nominal: 150000,
      paymentType: 'qris',
      settlementTime: '2026-11-22T03:05:00.000Z',
    });
    const list = await get(`/console/transactions?q=${encodeURIComponent('<script>')}`);
    expect(list.body).toContain('INV/&lt;script&gt;alert(1)&lt;/script&gt;:1');
    expect(list.body).not.toContain('<script>alert(1)</script>');
    expect(list.body).toContain('Rp 150.000');
    const page = await get(`/console/transactions/${encodeURIComponent(tx.orderId)}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('<script>alert');
    expect(page.body).toContain('2026-11-22 10:05:00 WIB');
    expect((await get(`/console/transactions?status=paid&q=${encodeURIComponent('alert(1)')}`)).body).toContain(
      'Rp 150.000',
    );
    expect((await get('/console/transactions?status=expired')).body).toContain('No transactions match.');
    expect((await get('/console/transactions?from=yesterday')).body).toContain('from: must be a date');
    expect((await get('/console/transactions/nope')).statusCode).toBe(404);
  });

  it("the timeline shows notifications not matched yet (unverified) beside the applied ones, and no other order's", async () => {
    const tx = await seedTransaction(t.services.store, { orderId: 'LINK_1', kind: 'payment_link' });
    const note = (gatewayOrderId: string, result: 'unverified' | 'applied', ref: string | null, status: string) =>
      t.services.store.notifications.record({
        dedupeKey: `${gatewayOrderId}-${status}`,
        gatewayOrderId,
        transactionRef: ref,
        gatewayTransactionId: 'gw',
        transactionStatus: status,
        statusCode: '200',
        source: 'webhook',
        result,
        payload: '{}',
      });
    await note('LINK_1-1795460839321', 'unverified', null, 'settlement');
    await note('LINK_1-1795460839000', 'applied', tx.id, 'pending');
    await note('LINKX1-1795460839321', 'unverified', null, 'expire');
    const page = await get('/console/transactions/LINK_1');
    const timeline = page.body.slice(page.body.indexOf('<ol class="timeline">'));
    expect(timeline).toMatch(
      /Notification: <span data-gateway-status="settlement">settled<\/span> <span class="badge r-unverified" data-result="unverified">not verified/,
    );
    expect(timeline).toMatch(
      /Notification: <span data-gateway-status="pending">waiting for payment<\/span> <span class="badge r-applied" data-result="applied">applied/,
    );
    // "_" is a LIKE wildcard: escaped, so LINKX1's notification is not taken for LINK_1's.
    expect(timeline).not.toContain('data-gateway-status="expire"');
  });

  it('refuses a changing form without its CSRF token, and takes it with one', async () => {
    await seedTransaction(t.services.store, {
      orderId: 'C-1',
      status: 'paid',
      kind: 'charge',
      paymentType: 'qris',
      gatewayTransactionId: 'gw-c1',
    });
    const page = await get('/console/transactions/C-1');
    const { token, cookie } = formState(page);
    expect(token).not.toBe('');
    const send = (payload: string, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/console/transactions/C-1/refund',
        payload,
        headers: { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
      });
    const none = await send('amount=100');
    expect(none.statusCode).toBe(403);
    expect(none.body).toContain('CSRF_INVALID');
    expect((await send(`amount=100&_csrf=${encodeURIComponent(token)}`)).statusCode).toBe(403);
    expect((await send('amount=100&_csrf=forged', { cookie })).statusCode).toBe(403);
    // With the token and its cookie the form is taken: here the amount is checked and refused on the page itself, before any confirmation.
    const bad = await send(`amount=999999&_csrf=${encodeURIComponent(token)}`, { cookie });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('AMOUNT_INVALID');
    expect(bad.body).toContain('amount must be between 1 and 150000');
  });

  it('the configuration form shows the API’s own validation message and masks secrets', async () => {
    await t.services.runtimeConfig.save({ erp: { webhook_secret: 'whsec_supersecretvalue1234' } }, 0, 'test');
    const page = await get('/console/config');
    expect(page.body).not.toContain('supersecretvalue');
    expect(page.body).toContain('****1234');
    const { token, cookie } = formState(page);
    const api = await t.app.inject({
      method: 'POST',
      url: '/api/config',
      payload: { erp: { timeout_ms: 5 } },
      headers: { authorization: basicAuth() },
    });
    expect(api.statusCode).toBe(400);
    const apiMessage: string = api.json().errors[0].message;
    const form = `_csrf=${encodeURIComponent(token)}&erp.timeout_ms=5&gateway.confirm_notifications=false`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/console/config',
      payload: form,
      headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(apiMessage.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
    expect(res.body).toContain('aria-invalid="true"');
    const ok = `_csrf=${encodeURIComponent(token)}&erp.timeout_ms=4500`;
    const saved = await t.app.inject({
      method: 'POST',
      url: '/console/config',
      payload: ok,
      headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(saved.statusCode).toBe(303);
    expect((await t.services.runtimeConfig.current()).erp).toMatchObject({
      timeout_ms: 4500,
      webhook_secret: 'whsec_supersecretvalue1234',
    });
  });

  it('the configuration form has the BI-SNAP fields in both languages, secrets write-only, the partnerServiceId kept with its spaces', async () => {
    await t.services.runtimeConfig.save(
      { gateway: { snap_bi: { client_secret: 'snapbi-secret-value-9876' } } },
      0,
      'test',
    );
    const page = await get('/console/config');
    expect(page.body).not.toContain('snapbi-secret-value');
    expect(page.body).toContain('****9876');
    for (const name of [
      'methods',
      'client_id',
      'partner_id',
      'channel_id',
      'partner_service_id',
      'public_key',
      'base_url',
    ])
      expect(page.body).toContain(`name="gateway.snap_bi.${name}"`);
    expect(page.body).toMatch(
      /<input type="password" id="cfg-gateway-snap_bi-client_secret" name="gateway.snap_bi.client_secret"/,
    );
    expect(page.body).toMatch(
      /<textarea id="cfg-gateway-snap_bi-private_key" name="gateway.snap_bi.private_key"[^>]*><\/textarea>/,
    );
    expect(page.body).toContain('BI-SNAP client ID');
    expect(page.body).toContain('value="   70012"');
    const id = await get('/console/config?lang=id');
    expect(id.body).toContain('Client ID BI-SNAP');
    expect(id.body).toContain('partnerServiceId VA (kode perusahaan bank)');
    const { token, cookie } = formState(page);
    const post = (fields: string) =>
      t.app.inject({
        method: 'POST',
        url: '/console/config',
        payload: `_csrf=${encodeURIComponent(token)}&${fields}`,
        headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
    const bad = await post(`gateway.snap_bi.partner_service_id=${encodeURIComponent('70012')}`);
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/id="cfg-gateway-snap_bi-partner_service_id"[^>]*aria-invalid="true"/);
    const saved = await post(
      `gateway.snap_bi.partner_service_id=${encodeURIComponent('  123456')}&gateway.snap_bi.client_id=snap-client-1&gateway.snap_bi.client_secret=`,
    );
    expect(saved.statusCode, saved.body).toBe(303);
    expect((await t.services.runtimeConfig.current()).gateway.snap_bi).toMatchObject({
      partner_service_id: '  123456',
      client_id: 'snap-client-1',
      client_secret: 'snapbi-secret-value-9876',
    });
  });

  it("a payment's page names the API that carried it", async () => {
    const legacy = await seedTransaction(t.services.store, { orderId: 'CARRIER_L', kind: 'charge' });
    const snap = await seedTransaction(t.services.store, { orderId: 'CARRIER_S', kind: 'charge', carrier: 'snap_bi' });
    expect((await get(`/console/transactions/${legacy.orderId}`)).body).toContain(
      '<dd data-carrier="legacy">Core API (legacy)</dd>',
    );
    expect((await get(`/console/transactions/${snap.orderId}`)).body).toContain(
      '<dd data-carrier="snap_bi">BI-SNAP</dd>',
    );
    expect((await get(`/console/transactions/${snap.orderId}?lang=id`)).body).toContain('API gateway');
  });

  it('the ERP retry window takes a fraction of an hour, typed with a point or the Indonesian decimal comma', async () => {
    const page = await get('/console/config');
    expect(page.body).toMatch(/<input id="cfg-erp-retry_for_hours" name="erp.retry_for_hours" inputmode="decimal"/);
    const { token, cookie } = formState(page);
    const post = (value: string) =>
      t.app.inject({
        method: 'POST',
        url: '/console/config',
        payload: `_csrf=${encodeURIComponent(token)}&erp.retry_for_hours=${encodeURIComponent(value)}`,
        headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
    expect((await post('0.01')).statusCode).toBe(303);
    expect((await t.services.runtimeConfig.current()).erp.retry_for_hours).toBe(0.01);
    expect((await post('1,5')).statusCode).toBe(303);
    expect((await t.services.runtimeConfig.current()).erp.retry_for_hours).toBe(1.5);
    const bad = await post('0.001');
    expect(bad.statusCode).toBe(400);
    expect((await t.services.runtimeConfig.current()).erp.retry_for_hours).toBe(1.5);
  });

  it('the configuration form has the alert settings and the ERP rate, saved through the API and its checks', async () => {
    const page = await get('/console/config');
    expect(page.body).toContain('<legend>Alerts</legend>');
    expect(page.body).toMatch(/<input id="cfg-erp-max_rate_per_s" name="erp\.max_rate_per_s" inputmode="decimal"/);
    expect(page.body).toMatch(/<input id="cfg-alerts-url" name="alerts\.url"/);
    expect(page.body).toMatch(/<input type="password" id="cfg-alerts-secret" name="alerts\.secret"/);
    expect(page.body).toMatch(
      /<select id="cfg-alerts-format" name="alerts\.format"[^>]*><option selected>json<\/option><option>slack<\/option>/,
    );
    const { token, cookie } = formState(page);
    const post = (fields: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/console/config',
        payload: new URLSearchParams({ _csrf: token, ...fields }).toString(),
        headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
    const saved = await post({
      'erp.max_rate_per_s': '12,5',
      'alerts.url': 'https://alerts.example.com/hook',
      'alerts.secret': 'alert-signing-secret-0123456789',
      'alerts.format': 'slack',
      'alerts.stuck_pending_after_minutes': '90',
      'alerts.erp_failing_after_minutes': '0.5',
    });
    expect(saved.statusCode).toBe(303);
    const current = await t.services.runtimeConfig.current();
    expect(current.erp.max_rate_per_s).toBe(12.5);
    expect(current.alerts).toMatchObject({
      url: 'https://alerts.example.com/hook',
      secret: 'alert-signing-secret-0123456789',
      format: 'slack',
      stuck_pending_after_minutes: 90,
      erp_failing_after_minutes: 0.5,
    });
    const again = await get('/console/config');
    expect(again.body).not.toContain('alert-signing-secret');
    expect(again.body).toContain('<option selected>slack</option>');
    // The API's checks: a threshold below 0.01 minutes is refused and nothing changes.
    const bad = await post({ 'alerts.erp_failing_after_minutes': '0.001' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('aria-invalid="true"');
    expect((await t.services.runtimeConfig.current()).alerts.erp_failing_after_minutes).toBe(0.5);
  });

  it('a database that cannot answer is the same 503 on a page as from the API', async () => {
    await t.services.store.close();
    const page = await get('/console/transactions');
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('(DATABASE_UNAVAILABLE)');
    const api = await get('/api/transactions');
    expect(api.statusCode).toBe(503);
    expect(api.json()).toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
  });

  it('the configuration form has the retention age, checked by the API', async () => {
    const page = await get('/console/config');
    expect(page.body).toContain('<legend>Retention</legend>');
    expect(page.body).toMatch(/<input id="cfg-retention-days" name="retention\.days" inputmode="numeric" value="30"/);
    const { token, cookie } = formState(page);
    const post = (form: string) =>
      t.app.inject({
        method: 'POST',
        url: '/console/config',
        payload: `_csrf=${encodeURIComponent(token)}&${form}`,
        headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
    const api = await t.app.inject({
      method: 'POST',
      url: '/api/config',
      payload: { retention: { days: 0 } },
      headers: { authorization: basicAuth() },
    });
    expect(api.statusCode).toBe(400);
    const apiMessage: string = api.json().errors[0].message;
    const bad = await post('retention.days=0');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain(
      `<span id="cfg-retention-days-help" class="field-error">${apiMessage.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</span>`,
    );
    expect((await t.services.runtimeConfig.current()).retention.days).toBe(30);
    expect((await post('retention.days=90')).statusCode).toBe(303);
    expect((await t.services.runtimeConfig.current()).retention.days).toBe(90);
    expect((await get('/console/config')).body).toContain('name="retention.days" inputmode="numeric" value="90"');
  });
});
