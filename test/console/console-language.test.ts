/**
 * The console in English and Bahasa Indonesia: every page in the language picked by `?lang`, the
 * `paylink_lang` cookie or `Accept-Language`, with a toggle on every page, `<html lang>` to match,
 * dates written for the language and one label (WIB) for Jakarta time.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { seedTransaction } from '../helpers/seed.js';
import { consoleMessages } from '../../src/http/console/i18n/console.js';

const PAGES = [
  '/console',
  '/console/transactions',
  '/console/transactions/SO-LANG%3A1',
  '/console/deliveries',
  '/console/logs?q=nothing-matches-this',
  '/console/config',
];

/** The text a person reads: tags, and the values of attributes nobody reads, removed. */
function visibleText(body: string): string {
  return body
    .replace(/<svg[\s\S]*?<\/svg>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&[a-z#0-9]+;/g, ' ')
    .replace(/\s+/g, ' ');
}

describe.each(DATABASE_KINDS)('console languages (%s)', (kind) => {
  let t: TestContext;
  beforeEach(async () => {
    t = await makeTestApp(kind, {
      MIDTRANS_MODE: 'simulator',
      MIDTRANS_API_BASE_URL: 'http://127.0.0.1:9',
      CONSOLE_TIME_ZONE: 'Asia/Jakarta',
    });
    await seedTransaction(t.services.store, {
      orderId: 'SO-LANG:1',
      status: 'paid',
      nominal: 150000,
      paymentType: 'qris',
      gatewayTransactionId: 'gw-lang',
      settlementTime: '2026-11-22T03:05:00.000Z',
    });
  });
  afterEach(async () => t.close());
  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ url, headers: { authorization: basicAuth(), ...headers } });

  it('English by default, with its words, English dates and WIB on every page', async () => {
    for (const url of PAGES) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toContain('<html lang="en">');
      expect(res.body, url).toContain('>Transactions</a>');
      expect(res.body, url).toContain('times in WIB');
      expect(res.body, url).not.toMatch(/GMT[+-]\d/);
      expect(String(res.headers['set-cookie'] ?? ''), url).not.toContain('paylink_lang');
    }
    const page = await get('/console/transactions/SO-LANG%3A1');
    expect(page.body).toContain('2026-11-22 10:05:00 WIB');
    expect(page.body).toContain('Rp 150.000');
  });

  it('?lang=id gives every page in Indonesian with Indonesian dates, and sets the cookie that keeps it', async () => {
    for (const url of PAGES) {
      const res = await get(`${url}${url.includes('?') ? '&' : '?'}lang=id`);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toContain('<html lang="id">');
      expect(res.body, url).toContain('>Transaksi</a>');
      expect(res.body, url).toContain('waktu dalam WIB');
      expect(res.body, url).not.toMatch(/GMT[+-]\d/);
      expect(String(res.headers['set-cookie']), url).toMatch(/^paylink_lang=id; Path=\/;/);
    }
    const page = await get('/console/transactions/SO-LANG%3A1?lang=id');
    expect(page.body).toContain('22 Nov 2026 10.05.00 WIB');
    expect(page.body).toContain('Rp 150.000');
    expect(page.body).toContain('>lunas</span>');
    // Remembered: the cookie alone keeps Indonesian, and ?lang=en switches back (and sets the cookie again).
    expect((await get('/console/deliveries', { cookie: 'paylink_lang=id' })).body).toContain('<html lang="id">');
    const back = await get('/console/deliveries?lang=en', { cookie: 'paylink_lang=id' });
    expect(back.body).toContain('<html lang="en">');
    expect(String(back.headers['set-cookie'])).toMatch(/^paylink_lang=en;/);
  });

  it('Accept-Language: id picks Indonesian; an explicit cookie wins over it', async () => {
    expect((await get('/console', { 'accept-language': 'id' })).body).toContain('<html lang="id">');
    expect((await get('/console', { 'accept-language': 'fr, id;q=0.8, en;q=0.5' })).body).toContain('Ringkasan');
    expect((await get('/console', { 'accept-language': 'id', cookie: 'paylink_lang=en' })).body).toContain(
      '<html lang="en">',
    );
  });

  it('every page has the language toggle, keeping the page and its other parameters', async () => {
    for (const url of PAGES) {
      const res = await get(url);
      const path = url.split('?')[0] ?? url;
      expect(res.body, url).toMatch(
        new RegExp(
          `<a href="${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\?(?:[^"]*&amp;)?lang=en"[^>]*>English</a>`,
        ),
      );
      expect(res.body, url).toMatch(
        new RegExp(
          `<a href="${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\?(?:[^"]*&amp;)?lang=id"[^>]*>Bahasa Indonesia</a>`,
        ),
      );
    }
    expect((await get('/console/logs?q=nothing-matches-this')).body).toContain(
      'href="/console/logs?q=nothing-matches-this&amp;lang=id"',
    );
  });

  it("what went wrong is headed in the page's language, with the code and the service's own message after it", async () => {
    const missing = await get('/console/transactions/NOPE?lang=id');
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('<html lang="id">');
    expect(missing.body).toContain('<p>Tidak ditemukan. (NOT_FOUND)</p>');
    expect(missing.body).toContain('<li>Tidak ada pembayaran &quot;NOPE&quot;.</li>');
    const forged = await t.app.inject({
      method: 'POST',
      url: '/console/transactions/SO-LANG%3A1/check',
      payload: '_csrf=forged',
      headers: {
        authorization: basicAuth(),
        cookie: 'paylink_lang=id',
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain('Formulir ini kedaluwarsa atau tidak berasal dari konsol ini');
    expect((await get('/console/transactions/NOPE')).body).toContain('<p>Not found. (NOT_FOUND)</p>');
  });

  it('no English sentence of the catalogue is left on an Indonesian page', async () => {
    // Every English message that differs from its Indonesian one, in its phrases of 12 characters or more.
    const english = Object.entries(consoleMessages.en)
      .filter(([k, en]) => en !== consoleMessages.id[k as keyof typeof consoleMessages.id])
      .flatMap(([, en]) => en.split(/\{\w+\}|[:;,.()]/))
      .map((part) => part.trim())
      .filter((part) => part.length >= 12 && !/[<>&"]/.test(part));
    expect(english.length).toBeGreaterThan(50);
    for (const url of PAGES) {
      const text = visibleText((await get(url, { cookie: 'paylink_lang=id' })).body);
      for (const part of english) expect(text, `${url}: ${part}`).not.toContain(part);
    }
  });
});
