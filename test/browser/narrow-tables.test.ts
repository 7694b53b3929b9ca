/**
 * At 375 px (a phone) the transaction list and the overview's per-type table fit the screen in both
 * languages: no table scrolls sideways, whatever the payment types and order ids, in Chromium.
 */
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { OPERATOR } from '../helpers/services.js';
import { seedPaymentAt, seedTransaction } from '../helpers/seed.js';

const CHROMIUM = '/usr/bin/chromium';
const RUN = fs.existsSync(CHROMIUM) || process.env.PAYLINK_REQUIRE_BROWSER === '1';

describe.skipIf(!RUN)('tables at 375 px', () => {
  let e: E2EContext;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    e = await startE2E('sqlite', { listen: true });
    const now = new Date();
    // The widest words of both languages: the longest payment types, statuses and amounts.
    const paid = { status: 'paid', createdHoursAgo: 2, paidMinutesAfter: 5 } as const;
    await seedPaymentAt(e.store, now, 'INV/2026/11/000123:1', { ...paid, type: 'bank_transfer', amount: 12_500_000 });
    await seedPaymentAt(e.store, now, 'INV/2026/11/000124:1', { ...paid, type: 'danamon_online', amount: 150_000 });
    await seedPaymentAt(e.store, now, 'INV/2026/11/000125:1', {
      status: 'partially_refunded',
      type: 'credit_card',
      createdHoursAgo: 3,
      paidMinutesAfter: 1,
      amount: 999_999_999,
    });
    await seedPaymentAt(e.store, now, 'INV/2026/11/000126:1', { ...paid, type: 'permata', amount: 40_000 });
    await seedTransaction(e.store, { orderId: 'INV/2026/11/000127:1', nominal: 25_000 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    context = await browser.newContext({
      httpCredentials: { username: OPERATOR.user, password: OPERATOR.pass },
      viewport: { width: 375, height: 800 },
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await e?.close();
  });

  /** Each table on the page whose content is wider than its box, with how much; and whether the page itself is. */
  async function overflow(url: string, selector: string) {
    const page = await context.newPage();
    await page.goto(`${e.url ?? ''}${url}`);
    // A string: the test is compiled without the DOM's types, and this runs in the page.
    const found = (await page.evaluate(`(() => {
      const wide = [...document.querySelectorAll(${JSON.stringify(selector)})]
        .filter((el) => el.offsetParent !== null)
        .map((el) => ({
          id: el.querySelector('th')?.textContent ?? 'table',
          by: el.scrollWidth - el.clientWidth,
        }))
        .filter((w) => w.by > 0);
      const root = document.documentElement;
      return { wide, page: root.scrollWidth - root.clientWidth, rows: document.querySelectorAll(${JSON.stringify(`${selector} tbody tr`)}).length };
    })()`)) as { wide: Array<{ id: string; by: number }>; page: number; rows: number };
    await page.close();
    return found;
  }

  it('the transaction list, Created column included, fits in both languages', async () => {
    for (const lang of ['en', 'id']) {
      const found = await overflow(`/console/transactions?lang=${lang}`, '.table-wrap');
      expect(found.rows, lang).toBeGreaterThanOrEqual(5);
      expect(found.wide, lang).toEqual([]);
      expect(found.page, lang).toBe(0);
    }
  });

  it("the overview's per-type table fits in both languages", async () => {
    for (const lang of ['en', 'id']) {
      // The per-type table: its rows name their payment type.
      const found = await overflow(`/console?lang=${lang}`, '.table-wrap:has(tr[data-type])');
      expect(found.rows, lang).toBeGreaterThanOrEqual(4);
      expect(found.wide, lang).toEqual([]);
      expect(found.page, lang).toBe(0);
    }
  });
});
