/**
 * The hosted pages in a real browser (Debian's /usr/bin/chromium through playwright-core): the
 * language follows the browser and the toggle, the choice is remembered, and the QRIS page's QR
 * code is drawn on screen and scans back to the transaction's qr_string.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type ConsoleMessage } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { call, oid, s, start } from './helpers.js';

// jsqr is a CommonJS bundle whose ES default is its `default` property.
const jsQR = (createRequire(import.meta.url)('jsqr') as typeof import('jsqr')).default;

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);

it.runIf(process.env.PAYLINK_REQUIRE_BROWSER === '1')(
  'Chromium is installed where the browser tests are required',
  () => {
    expect(HAVE_CHROMIUM, `${CHROMIUM} is missing`).toBe(true);
  },
);

describe.skipIf(!HAVE_CHROMIUM)('hosted pages in a real browser', () => {
  let browser: Browser;
  let sim: RunningSimulator;

  beforeAll(async () => {
    sim = await start();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sim?.close();
  });

  async function newLink(methods: string[]): Promise<string> {
    const r = await call(sim.baseUrl, 'POST', '/v1/payment-links', {
      body: { transaction_details: { order_id: oid('BR'), gross_amount: 150000 }, enabled_payments: methods },
    });
    return s(r.body.payment_url);
  }

  it('an Indonesian browser gets Indonesian; the toggle switches to English and the choice is remembered', async () => {
    const context = await browser.newContext({ locale: 'id-ID' });
    const page = await context.newPage();
    await page.goto(await newLink(['bca_va']));
    expect(await page.getAttribute('html', 'lang')).toBe('id');
    expect(await page.locator('h2').textContent()).toBe('Pilih metode pembayaran');
    await page.click('a[data-lang="en"]');
    await page.waitForURL(/\?lang=en$/);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await page.locator('h2').textContent()).toBe('Choose a payment method');
    // Another link, no ?lang: the cookie keeps English over the browser's Indonesian.
    await page.goto(await newLink(['bca_va']));
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await page.click('button[data-method="bca_va"]');
    expect(await page.locator('#pay').textContent()).toBe('Pay now');
    await page.click('a[data-lang="id"]');
    await page.waitForURL(/\?lang=id$/);
    expect(await page.locator('#pay').textContent()).toBe('Bayar sekarang');
    await page.click('#pay');
    expect(await page.locator('#result').textContent()).toBe('Pembayaran berhasil');
    await context.close();
  });

  it("the QRIS page shows its QR code, and scanning it gives the transaction's qr_string", async () => {
    const context = await browser.newContext({ deviceScaleFactor: 2 });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await page.goto(await newLink(['other_qris']));
    await page.click('button[data-method="other_qris"]');
    // Under the page's Content-Security-Policy the stylesheet still applies (allowed by its hash).
    expect(
      await page
        .locator('#amount')
        .evaluate(
          (el) =>
            (globalThis as unknown as { getComputedStyle(e: unknown): { fontWeight: string } }).getComputedStyle(el)
              .fontWeight,
        ),
    ).toBe('700');
    const svg = page.locator('#qr svg');
    const box = await svg.boundingBox({ timeout: 5000 });
    expect(box?.width).toBeGreaterThan(100);
    expect(box?.height).toBeGreaterThan(100);
    const orderId = s(await page.locator('#order-id').textContent());
    const qrString = s((await call(sim.baseUrl, 'GET', `/v2/${orderId}/status`)).body.qr_string);
    const png = PNG.sync.read(await svg.screenshot());
    const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
    expect(code?.data).toBe(qrString);
    expect(await page.locator('#qr-string').textContent()).toBe(qrString);
    // No Content-Security-Policy violation (Chromium reports each as a console error).
    expect(problems).toEqual([]);
    await context.close();
  });
});
