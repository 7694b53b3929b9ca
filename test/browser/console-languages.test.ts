/**
 * The console's languages in a real browser (Debian's Chromium through playwright-core): the toggle
 * switches the page and the cookie keeps the choice on the next pages; a browser set to Indonesian
 * gets Indonesian without choosing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { startService, type RunningService } from '../../src/server.js';
import { tempDir } from '../helpers/stores.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
const OPERATOR = { user: 'operator', pass: 'console-languages-test-pass' };

describe.skipIf(!HAVE_CHROMIUM)('the console in two languages, in a real browser', () => {
  let browser: Browser;
  let service: RunningService;
  const dir = tempDir('paylink-console-langs-');

  beforeAll(async () => {
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: path.join(dir, 'data'),
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'simulator',
      API_KEYS: 'console-languages-api-key-1',
      log_user: OPERATOR.user,
      log_pass: OPERATOR.pass,
    });
    service = await startService(config, { stdoutLogs: false });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the toggle switches to Indonesian, the cookie keeps it on the next page, and back to English', async () => {
    const context = await browser.newContext({
      httpCredentials: { username: OPERATOR.user, password: OPERATOR.pass },
      locale: 'en-US',
    });
    const page = await context.newPage();
    await page.goto(`${service.url}/console/transactions`);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.locator('h1').textContent()).toBe('Transactions');
    await page.getByRole('link', { name: 'Bahasa Indonesia' }).click();
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('id');
    expect(await page.locator('h1').textContent()).toBe('Transaksi');
    expect(await page.getByRole('button', { name: 'Cari' }).count()).toBe(1);
    expect((await context.cookies()).find((c) => c.name === 'paylink_lang')?.value).toBe('id');
    // The next page, reached by its plain link, stays Indonesian.
    await page.getByRole('link', { name: 'Konfigurasi' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Konfigurasi');
    expect(await page.locator('html').getAttribute('lang')).toBe('id');
    expect(await page.getByRole('button', { name: 'Simpan konfigurasi' }).count()).toBe(1);
    await page.getByRole('link', { name: 'English' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Configuration');
    expect((await context.cookies()).find((c) => c.name === 'paylink_lang')?.value).toBe('en');
    await context.close();
  });

  it('a browser set to Indonesian gets Indonesian without choosing', async () => {
    const context = await browser.newContext({
      httpCredentials: { username: OPERATOR.user, password: OPERATOR.pass },
      locale: 'id-ID',
    });
    const page = await context.newPage();
    await page.goto(`${service.url}/console`);
    expect(await page.locator('html').getAttribute('lang')).toBe('id');
    expect(await page.locator('h1').textContent()).toBe('Ringkasan');
    expect(await page.locator('header').textContent()).toContain('waktu dalam WIB');
    await context.close();
  });
});
