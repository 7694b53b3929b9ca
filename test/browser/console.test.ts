/**
 * The operator's story in a real browser (Debian's Chromium through playwright-core): a link made
 * through the API is paid on the simulator's hosted page, found in the console as paid with its ERP
 * delivery delivered, partly refunded from the console (the ERP receives `partially_refunded` and
 * the timeline shows it); the overview counts, a failing ERP retried by hand, the configuration
 * form's validation message, and /docs rendering with no request leaving the machine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { startService, type RunningService } from '../../src/server.js';
import { tempDir } from '../helpers/stores.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
const OPERATOR = { user: 'operator', pass: 'console-browser-test-pass' };
const API_KEY = 'console-browser-api-key-1234';
const SECRET = 'whsec_Y29uc29sZS1icm93c2VyLXRlc3Qtc2VjcmV0LTEyMzQ=';

describe.skipIf(!HAVE_CHROMIUM)('the operator console in a real browser', () => {
  let browser: Browser;
  let service: RunningService;
  let erp: ErpReceiver;
  let context: BrowserContext;
  /** Every request the browser tried to send anywhere but this machine. */
  const offMachine: string[] = [];
  const dir = tempDir('paylink-console-browser-');

  beforeAll(async () => {
    erp = await startErpReceiver({ secret: SECRET, rejectInvalid: true });
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: path.join(dir, 'data'),
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'simulator',
      API_KEYS: API_KEY,
      ERP_NOTIFY_URL: erp.url,
      ERP_WEBHOOK_SECRET: SECRET,
      log_user: OPERATOR.user,
      log_pass: OPERATOR.pass,
    });
    service = await startService(config, { stdoutLogs: false });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context = await browser.newContext({
      httpCredentials: { username: OPERATOR.user, password: OPERATOR.pass },
      viewport: { width: 1280, height: 900 },
    });
    await context.route('**/*', async (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1' || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
      offMachine.push(url.href);
      return route.abort();
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await service?.stop();
    await erp?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function payNewLink(orderId: string, nominal: number): Promise<void> {
    const created = await fetch(`${service.url}/api/payment-links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ order_id: orderId, nominal }),
    });
    expect(created.status).toBe(201);
    const link = (await created.json()) as { payment_url: string };
    const page = await context.newPage();
    await page.goto(link.payment_url);
    await page.click('button[data-method="other_qris"]');
    await page.click('#pay');
    await expect.poll(() => page.locator('#result').textContent(), { timeout: 15_000 }).toContain('Payment successful');
    await page.close();
  }

  const erpStatuses = (orderId: string) =>
    erp
      .accepted()
      .filter((d) => d.json?.order_id === orderId)
      .map((d) => d.json?.status);
  const open = async (page: Page, url: string) => {
    const res = await page.goto(`${service.url}${url}`);
    expect(res?.status(), url).toBe(200);
  };

  it('a paid link is found, partly refunded from the console, and the ERP and the timeline show it', async () => {
    const orderId = `SO-CONSOLE:${Date.now()}`;
    await payNewLink(orderId, 150000);
    await erp.waitFor(() => erpStatuses(orderId).includes('paid'), 15_000);
    const page = await context.newPage();
    await open(page, '/console/transactions');
    await page.getByLabel('Order id contains').fill('SO-CONSOLE');
    await page.getByRole('button', { name: 'Search' }).click();
    const row = page.locator('tr', { hasText: orderId });
    await expect.poll(() => row.locator('.badge').textContent()).toBe('paid');
    expect(await row.textContent()).toContain('Rp 150.000');
    await row.getByRole('link', { name: orderId }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe(`Payment ${orderId}`);
    await expect.poll(() => page.locator('ol.timeline').textContent()).toMatch(/ERP delivery attempt 1\s*delivered/);
    // Refund part of it, with the keyboard only.
    await page.getByLabel('Amount in rupiah (empty = all that is left)').focus();
    await page.keyboard.type('50000');
    await page.keyboard.press('Tab');
    await page.keyboard.type('customer returned one item');
    await page.keyboard.press('Enter');
    // A confirmation page first: the order, the amount and what happens; nothing is refunded yet.
    await expect.poll(() => page.locator('[data-confirm-amount]').textContent()).toBe('Rp 50.000');
    expect(await page.locator('.confirm').textContent()).toContain(orderId);
    expect(erpStatuses(orderId)).not.toContain('partially_refunded');
    await page.getByRole('button', { name: 'Confirm refund' }).click();
    await expect.poll(() => page.locator('.alert.ok').textContent()).toContain('Refund accepted');
    expect(await page.locator('[data-status]').getAttribute('data-status')).toBe('partially_refunded');
    expect(await page.locator('[data-refunded]').textContent()).toBe('Rp 50.000');
    await erp.waitFor(() => erpStatuses(orderId).includes('partially_refunded'), 15_000);
    const event = erp.accepted().find((d) => d.json?.order_id === orderId && d.json.status === 'partially_refunded');
    expect(event?.json).toMatchObject({ refunded_amount: 50000, gross_amount: 150000, status_version: 2 });
    expect(event?.verified).toBe(true);
    await page.reload();
    const timeline = (await page.locator('ol.timeline').textContent()) ?? '';
    expect(timeline).toMatch(/Status →\s*partially refunded/);
    expect(timeline).toContain('refunded Rp 50.000');
    expect(timeline).toMatch(/Refund asked: Rp 50\.000\s*approved/);
    expect(timeline).toContain('by operator:operator');
    await page.close();
  });

  it('the overview counts, and a failing ERP delivery retried from the Deliveries page', async () => {
    erp.setMode({ kind: 'fail', status: 503 });
    const orderId = `SO-FAILING:${Date.now()}`;
    await payNewLink(orderId, 20000);
    const page = await context.newPage();
    await expect
      .poll(
        async () => {
          await open(page, '/console/deliveries?state=failed');
          return page.locator('tr', { hasText: orderId }).count();
        },
        { timeout: 15_000 },
      )
      .toBe(1);
    await open(page, '/console');
    expect(Number(await page.locator('[data-count="today-paid"]').textContent())).toBeGreaterThanOrEqual(1);
    expect(Number(await page.locator('[data-count="today-partially_refunded"]').textContent())).toBe(1);
    expect(Number(await page.locator('[data-count="failing"]').textContent())).toBe(1);
    erp.setMode({ kind: 'ok' });
    await open(page, '/console/deliveries?state=failed');
    await page
      .locator('tr', { hasText: orderId })
      .getByRole('button', { name: /Retry now|Retry delivery/ })
      .click();
    await expect.poll(() => page.locator('.alert.ok').textContent()).toContain('due again now');
    await erp.waitFor(() => erpStatuses(orderId).includes('paid'), 15_000);
    await open(page, '/console');
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator('[data-count="failing"]').textContent();
      })
      .toBe('0');
    await page.close();
  });

  it('the configuration form shows the API’s validation message', async () => {
    const api = await fetch(`${service.url}/api/config`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${OPERATOR.user}:${OPERATOR.pass}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ erp: { timeout_ms: 5 } }),
    });
    const message = ((await api.json()) as { errors: Array<{ message: string }> }).errors[0]?.message ?? '';
    expect(message).not.toBe('');
    const page = await context.newPage();
    await open(page, '/console/config');
    await page.getByLabel('ERP timeout (ms)').fill('5');
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await expect.poll(() => page.locator('#cfg-erp-timeout_ms-help').textContent()).toBe(message);
    expect(await page.getByLabel('ERP timeout (ms)').getAttribute('aria-invalid')).toBe('true');
    await page.close();
  });

  it('/docs renders the operations and the error catalogue, and nothing is requested from elsewhere', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await open(page, '/docs');
    for (const tag of ['Payment Links', 'Payment Operations', 'Webhook', 'Operations'])
      await expect.poll(() => page.getByText(tag, { exact: true }).count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await page.getByText('Payment Operations', { exact: true }).first().click();
    await expect
      .poll(() => page.getByText('Refund a paid payment, all of it or a part').count(), { timeout: 20_000 })
      .toBeGreaterThan(0);
    expect(await page.locator('#error-NOT_FOUND').textContent()).toContain('404');
    expect(errors).toEqual([]);
    await page.close();
    expect(offMachine).toEqual([]);
  });
});
