/**
 * /docs in a real browser (Debian's /usr/bin/chromium through playwright-core): the first screen
 * shows the introduction and the operation list at desktop and phone widths, nothing is fetched
 * from another host, the options in /docs/init.js are in force, and only served groups are listed.
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
const OPERATOR = { user: 'operator', pass: 'docs-browser-operator-pass' };
const PUBLIC = 'https://paylink.example.test';

it.runIf(process.env.PAYLINK_REQUIRE_BROWSER === '1')(
  'Chromium is installed where the browser tests are required',
  () => {
    expect(HAVE_CHROMIUM, `${CHROMIUM} is missing`).toBe(true);
  },
);

describe.skipIf(!HAVE_CHROMIUM)('/docs in a real browser', () => {
  let browser: Browser;
  let service: RunningService;
  const dir = tempDir('paylink-docs-browser-');

  beforeAll(async () => {
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: path.join(dir, 'data'),
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'simulator',
      API_KEYS: 'docs-browser-api-key-123456',
      PUBLIC_BASE_URL: PUBLIC,
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
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const width of [1280, 375]) {
    it(`at ${width} px the first screen shows the introduction, with nothing from other hosts and no AI, MCP or test-request controls`, async () => {
      const height = 800;
      const context = await browser.newContext({
        viewport: { width, height },
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.pass },
      });
      const page = await context.newPage();
      const elsewhere: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(service.url)) elsewhere.push(r.url());
      });
      expect((await page.goto(`${service.url}/docs`))?.status()).toBe(200);
      const intro = page.locator('h1', { hasText: 'paylink' });
      await intro.first().waitFor({ timeout: 20_000 });
      // One renderer only: a second one (mounted on its own with default options) pushes the content down.
      expect(await intro.count()).toBe(1);
      const box = (await intro.first().boundingBox()) ?? { y: -1, height: 0 };
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThan(height);
      await expect
        .poll(() => page.getByText('Payment Links', { exact: true }).count(), { timeout: 10_000 })
        .toBeGreaterThan(0);
      const html = await page.content();
      for (const text of ['Ask AI', 'Generate MCP']) expect(html, text).not.toContain(text);
      if (width === 1280) {
        // The sidebar lists served groups only (Dev/Test needs LOG_EXPOSE_API), and an operation's sample names this service.
        expect(await page.getByText('Dev/Test', { exact: true }).count()).toBe(0);
        expect(await page.getByText('Payment Operations', { exact: true }).first().isVisible()).toBe(true);
        await page.goto(`${service.url}/docs#tag/payment-links/POST/api/payment-links`);
        await expect
          .poll(() => page.getByText(`${PUBLIC}/api/payment-links`).count(), { timeout: 20_000 })
          .toBeGreaterThan(0);
        expect(await page.content()).not.toContain('Test Request');
      }
      expect(elsewhere).toEqual([]);
      await context.close();
    }, 60_000);
  }

  it('at 375 px an operation index is on the first screen and jumps to an operation; at 1280 px the sidebar does that instead', async () => {
    const open = async (width: number) => {
      const context = await browser.newContext({
        viewport: { width, height: 800 },
        httpCredentials: { username: OPERATOR.user, password: OPERATOR.pass },
      });
      const page = await context.newPage();
      await page.goto(`${service.url}/docs`);
      await page.locator('h1', { hasText: 'paylink' }).first().waitFor({ timeout: 20_000 });
      return { context, page };
    };
    const phone = await open(375);
    const index = phone.page.locator('nav.ops-index');
    expect(await index.isVisible()).toBe(true);
    const groups = phone.page.locator('nav.ops-index .ops-groups a');
    expect(await groups.allTextContents()).toEqual(
      expect.arrayContaining(['Payment Links', 'Payment Operations', 'Health & Config']),
    );
    const box = (await groups.first().boundingBox()) ?? { y: 1000, height: 0 };
    expect(box.y + box.height).toBeLessThan(200);
    await phone.page.locator('nav.ops-index summary').click();
    await phone.page.locator('nav.ops-index a', { hasText: 'POST /createtransaksi' }).click();
    const heading = phone.page.getByRole('heading', { name: 'Create a payment link (ERP shape)' }).first();
    await expect.poll(() => heading.isVisible(), { timeout: 20_000 }).toBe(true);
    await expect
      .poll(async () => {
        const b = await heading.boundingBox();
        return b !== null && b.y >= 0 && b.y < 800;
      })
      .toBe(true);
    await phone.context.close();
    const desk = await open(1280);
    expect(await desk.page.locator('nav.ops-index').count()).toBe(0);
    await desk.context.close();
  }, 90_000);
});
