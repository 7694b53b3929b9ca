/**
 * An operator who signs in by name, in a real browser: a console page leads to the sign-in page,
 * the session cookie is HttpOnly and SameSite=Strict, the page shows who is signed in with their
 * role and no refund control for a viewer, and signing out ends the session.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { startService, type RunningService } from '../../src/server.js';
import { tempDir } from '../helpers/stores.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
const OPERATOR = { user: 'operator', pass: 'sign-in-browser-test-pass' };
const VIEWER = { user: 'vera', pass: 'viewer-browser-pass-01' };

it.runIf(process.env.PAYLINK_REQUIRE_BROWSER === '1')(
  'Chromium is installed where the browser tests are required',
  () => {
    expect(HAVE_CHROMIUM, `${CHROMIUM} is missing`).toBe(true);
  },
);

describe.skipIf(!HAVE_CHROMIUM)('signing in to the console in a real browser', () => {
  let browser: Browser;
  let service: RunningService;
  let context: BrowserContext;
  const dir = tempDir('paylink-sign-in-browser-');

  beforeAll(async () => {
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: path.join(dir, 'data'),
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'simulator',
      log_user: OPERATOR.user,
      log_pass: OPERATOR.pass,
    });
    service = await startService(config, { stdoutLogs: false });
    const added = await fetch(`${service.url}/api/operators`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${OPERATOR.user}:${OPERATOR.pass}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ username: VIEWER.user, role: 'viewer', password: VIEWER.pass }),
    });
    expect(added.status).toBe(201);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    // No Basic credentials: the sign-in page is the only way in.
    context = await browser.newContext({ viewport: { width: 375, height: 800 }, locale: 'en-US' });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await service?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sign in → a console page as a viewer → sign out', async () => {
    const page = await context.newPage();
    await page.goto(`${service.url}/console/config`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await page.getByLabel('User name').fill(VIEWER.user);
    await page.getByLabel('Password').fill('a-wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByText('Wrong user name or password.').isVisible()).toBe(true);
    await page.getByLabel('Password').fill(VIEWER.pass);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${service.url}/console/config`);
    expect(await page.locator('.who').innerText()).toContain('vera (viewer)');
    expect(await page.getByRole('button', { name: 'Save configuration' }).count()).toBe(0);
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'paylink_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(await page.evaluate('document.cookie')).not.toContain('paylink_session');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in\?ended=1$/);
    expect(await page.getByText('You are signed out.').isVisible()).toBe(true);
    expect((await context.cookies()).filter((c) => c.name === 'paylink_session')).toEqual([]);
    // The old cookie is no good any more, even sent by hand.
    const again = await fetch(`${service.url}/api/me`, {
      headers: { cookie: `paylink_session=${cookie?.value ?? ''}` },
    });
    expect(again.status).toBe(401);
    await page.goto(`${service.url}/console`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
  }, 60_000);
});
