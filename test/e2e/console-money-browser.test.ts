/**
 * The money pages in a real browser (Debian's Chromium through playwright-core): the overview's
 * charts are drawn, a report is uploaded through the Reconciliation page's plain form, its rows are
 * filtered with the page's own form, a bad file shows its line and column, and the console's
 * Content-Security-Policy refuses nothing on these pages.
 */
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, OPERATOR, type TestContext } from '../helpers/services.js';
import { gatewayIdOf, seedTransaction } from '../helpers/seed.js';

const CHROMIUM = '/usr/bin/chromium';
const RUN = fs.existsSync(CHROMIUM) || process.env.PAYLINK_REQUIRE_BROWSER === '1';

describe.skipIf(!RUN)('the money pages in a real browser', () => {
  let ctx: TestContext;
  let browser: Browser;
  let context: BrowserContext;
  let base: string;
  /** What the browser reported as an error: CSP refusals, script errors. */
  const problems: string[] = [];

  beforeAll(async () => {
    ctx = await makeTestApp('sqlite', {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const address = ctx.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
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
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await ctx?.close();
  });

  async function open(url: string): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (m) => {
      // The browser's own request for /favicon.ico (the console has none) is no problem of the page.
      if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico'))
        problems.push(`${m.text()} ${m.location().url}`);
    });
    page.on('pageerror', (e) => problems.push(e.message));
    const res = await page.goto(`${base}${url}`);
    expect(res?.status()).toBe(200);
    return page;
  }

  it('draws the overview charts', async () => {
    const t = await seedTransaction(ctx.store, { orderId: 'BR/1', nominal: 75_000, kind: 'charge' });
    await ctx.store.transactions.update(t.id, {
      status: 'paid',
      paymentType: 'qris',
      paidAmount: 75_000,
      settlementTime: new Date().toISOString(),
    });
    const page = await open('/console');
    await expect(page.locator('[data-money="today"]').textContent()).resolves.toBe('Rp 75.000');
    for (const id of ['chart-per-day', 'chart-success', 'chart-time-to-pay']) {
      const box = await page.locator(`#${id}`).boundingBox();
      expect(box?.width, id).toBeGreaterThan(200);
      expect(box?.height, id).toBeGreaterThan(10);
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  it('uploads a report through the form, filters its rows, and shows a bad file its line and column', async () => {
    for (const [orderId, amount] of [
      ['BR/2', 10_000],
      ['BR/3', 20_000],
    ] as const) {
      const t = await seedTransaction(ctx.store, { orderId, nominal: amount, kind: 'charge' });
      await ctx.store.transactions.update(t.id, {
        status: 'paid',
        paymentType: 'qris',
        paidAmount: amount,
        settlementTime: '2026-11-20T10:00:00+07:00',
      });
    }
    const csv = `Order ID,Transaction Status,Amount,Settlement Time\r\n${gatewayIdOf('BR/2')},settlement,10000,2026-11-20 10:00:00\r\nNOT-HERE-1,settlement,5000,2026-11-20 11:00:00\r\n`;
    const page = await open('/console/reconciliation');
    await page
      .locator('input[name="file"]')
      .setInputFiles({ name: 'report.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await Promise.all([
      page.waitForURL(/\/console\/reconciliation\/[0-9a-f-]{36}\?done=imported$/),
      page.getByRole('button', { name: 'Import' }).click(),
    ]);
    await expect(page.locator('[role="status"]').textContent()).resolves.toContain('Report imported.');
    await expect(page.locator('td[data-count="matched"]').textContent()).resolves.toBe('1');
    await expect(page.locator('td[data-count="missing_here"]').textContent()).resolves.toBe('1');
    await expect(page.locator('td[data-count="missing_at_gateway"]').textContent()).resolves.toBe('1');
    expect(await page.locator('tr[data-row]').count()).toBe(3);

    await page.locator('select[name="result"]').selectOption('missing_here');
    await Promise.all([page.waitForURL(/result=missing_here/), page.getByRole('button', { name: 'Show' }).click()]);
    expect(await page.locator('tr[data-row]').count()).toBe(1);
    await expect(page.locator('tr[data-row] td.mono').first().textContent()).resolves.toBe('NOT-HERE-1');

    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download the exceptions (CSV)' }).click();
    const file = await (await download).path();
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\r\n');
    expect(lines.slice(1).map((l) => l.split(',')[2])).toEqual(['missing_here', 'missing_at_gateway']);

    const again = await open('/console/reconciliation');
    await again.locator('input[name="file"]').setInputFiles({
      name: 'bad.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('Order ID,Transaction Status,Amount\r\nA-1,settlement,1000\r\nA-2,settlement,12x\r\n'),
    });
    const [answer] = await Promise.all([
      again.waitForResponse((r) => r.request().method() === 'POST'),
      again.getByRole('button', { name: 'Import' }).click(),
    ]);
    expect(answer.status()).toBe(400);
    await expect(again.locator('[role="alert"]').textContent()).resolves.toContain(
      'Line 3, column "Amount": "12x" is not an amount in rupiah',
    );
    expect(await again.locator('input[name="file"]').count()).toBe(1);
    expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);
  }, 60_000);
});
