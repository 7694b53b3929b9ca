/**
 * A real browser (Debian's /usr/bin/chromium through playwright-core): the operator reads /docs
 * after Basic Auth, and a customer pays a payment link on the simulator's hosted page by clicking,
 * after which the ERP receiver holds the `paid` event.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { startService, type RunningService } from '../../src/server.js';
import { tempDir } from '../helpers/stores.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
if (!HAVE_CHROMIUM)
  console.warn(
    `browser tests skipped: ${CHROMIUM} is not installed (apt-get install -y chromium; .ci/run installs it)`,
  );

const OPERATOR = { user: 'operator', pass: 'browser-test-operator-pass' };
const API_KEY = 'browser-test-api-key-123456';

// CI installs Chromium and sets this, so there the browser tests cannot be skipped without failing.
it.runIf(process.env.PAYLINK_REQUIRE_BROWSER === '1')(
  'Chromium is installed where the browser tests are required',
  () => {
    expect(HAVE_CHROMIUM, `${CHROMIUM} is missing`).toBe(true);
  },
);

describe.skipIf(!HAVE_CHROMIUM)('in a real browser', () => {
  let browser: Browser;
  let service: RunningService;
  let erp: http.Server;
  const events: Array<Record<string, unknown>> = [];
  const dir = tempDir('paylink-browser-');

  beforeAll(async () => {
    erp = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        events.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => erp.listen(0, '127.0.0.1', r));
    const erpUrl = `http://127.0.0.1:${(erp.address() as AddressInfo).port}/erp`;
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: path.join(dir, 'data'),
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'simulator',
      API_KEYS: API_KEY,
      ERP_NOTIFY_URL: erpUrl,
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
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await new Promise((r) => erp?.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('renders /docs after Basic Auth, with the endpoints and the error catalogue', async () => {
    const context = await browser.newContext({ httpCredentials: { username: OPERATOR.user, password: OPERATOR.pass } });
    const page = await context.newPage();
    const res = await page.goto(`${service.url}/docs`);
    expect(res?.status()).toBe(200);
    // The reference renderer draws the description it fetched from /openapi.json (same credentials).
    await expect.poll(() => page.locator('h1').first().textContent(), { timeout: 20_000 }).toContain('paylink');
    await page.getByText('Payment Links', { exact: true }).first().click();
    await expect.poll(() => page.getByText('/api/payment-links').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await page.goto(`${service.url}/docs#error-NOT_FOUND`);
    expect(await page.locator('#error-NOT_FOUND').textContent()).toContain('404');
    await context.close();

    // Without credentials headless Chromium cannot answer the Basic challenge and fails the load.
    const anonymous = await browser.newContext();
    await expect((await anonymous.newPage()).goto(`${service.url}/docs`)).rejects.toThrow(
      /ERR_INVALID_AUTH_CREDENTIALS/,
    );
    await anonymous.close();
  });

  it('a payment link can be paid by clicking, and the ERP receives the paid event', async () => {
    const orderId = `BROWSER/1:${Date.now()}`;
    const created = await fetch(`${service.url}/api/payment-links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ order_id: orderId, nominal: 150000 }),
    });
    expect(created.status).toBe(201);
    const link = (await created.json()) as { payment_url: string };
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link.payment_url);
    await page.click('button[data-method="bca_va"]');
    await page.click('#pay');
    await expect.poll(() => page.locator('#result').textContent(), { timeout: 15_000 }).toContain('Payment successful');
    await context.close();
    await expect
      .poll(() => events.find((e) => e.order_id === orderId && e.status === 'paid'), { timeout: 15_000 })
      .toMatchObject({ type: 'payment.status_changed', mercant_id: 'BROWSER/1', gross_amount: 150000 });
  });
});
