/**
 * The console as a finance operator uses it, in a real browser (Debian's Chromium through
 * playwright-core) against the real simulator over HTTP: a card payment captured but not settled
 * offers no refund and says why (and a refund forced past the page is refused before the gateway is
 * asked); a refund typed the Indonesian way (`50.000`, `Rp 50.000`) is made; the download buttons
 * give the daily report and the transaction list with the page's filters; the overview's totals are
 * the daily report's.
 */
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { OPERATOR } from '../helpers/services.js';

const CHROMIUM = '/usr/bin/chromium';
const RUN = fs.existsSync(CHROMIUM) || process.env.PAYLINK_REQUIRE_BROWSER === '1';
const KEY = 'finance-desk-api-key-0123456789';
const api = { authorization: `Bearer ${KEY}` };

describe.skipIf(!RUN)('the finance desk in a real browser', () => {
  let e: E2EContext;
  let browser: Browser;
  let context: BrowserContext;
  let base: string;
  const problems: string[] = [];

  beforeAll(async () => {
    e = await startE2E('sqlite', { listen: true, env: { API_KEYS: KEY } });
    base = e.url ?? '';
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
      acceptDownloads: true,
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await e?.close();
  });

  async function open(url: string): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico') && !/status of 4\d\d/.test(m.text()))
        problems.push(`${m.text()} ${m.location().url}`);
    });
    page.on('pageerror', (err) => problems.push(err.message));
    const res = await page.goto(`${base}${url}`);
    expect(res?.status(), url).toBe(200);
    return page;
  }

  async function charge(orderId: string, nominal: number, method: object): Promise<{ gateway_order_id: string }> {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      payload: { order_id: orderId, nominal, ...method },
      headers: api,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  }

  async function paidQris(orderId: string, nominal: number): Promise<void> {
    const { gateway_order_id: id } = await charge(orderId, nominal, { payment_type: 'qris' });
    expect((await e.sim.post(`/_sim/transactions/${id}/pay`)).status).toBe(200);
    await expect
      .poll(async () => (await e.services.store.transactions.findByOrderId(orderId))?.status, { timeout: 5_000 })
      .toBe('paid');
  }

  it('a card payment captured but not settled: no refund button, the reason in both languages, a forced refund refused before the gateway', async () => {
    await charge('DESK-CARD', 120_000, {
      payment_type: 'credit_card',
      credit_card: { token_id: '481111-4811111111111114-tok' },
    });
    const tx = await e.services.store.transactions.findByOrderId('DESK-CARD');
    expect([tx?.status, tx?.transactionStatus]).toEqual(['paid', 'capture']);

    const page = await open('/console/transactions/DESK-CARD?lang=id');
    expect(await page.locator('form[action$="/refund"]').count()).toBe(0);
    const why = page.locator('[data-no-refund="unsettled"]');
    await expect(why.textContent()).resolves.toContain('setelah diselesaikan');
    // Cancelling voids it until it settles: that form is offered instead.
    expect(await page.locator('form[action$="/cancel"]').count()).toBe(1);
    // Paid when captured: its paid time shows, and no expiry.
    await expect(page.locator('[data-paid-at]').textContent()).resolves.toMatch(/\d{2}\.\d{2}\.\d{2} WIB/);
    expect(await page.locator('dt', { hasText: 'Kedaluwarsa' }).count()).toBe(0);
    await expect(page.locator('main').textContent()).resolves.toContain('Kartu');
    const en = await open('/console/transactions/DESK-CARD?lang=en');
    await expect(en.locator('[data-no-refund="unsettled"]').textContent()).resolves.toContain(
      'only once it is settled',
    );
    await en.close();

    // The refund form posted anyway (the page's own token, confirmed) is refused on the page, in Indonesian.
    const csrf = await page.locator('form[action$="/check"] input[name="_csrf"]').getAttribute('value');
    const forced = await page.request.post(`${base}/console/transactions/DESK-CARD/refund?lang=id`, {
      form: { _csrf: csrf ?? '', amount: '10.000', confirm: '1' },
    });
    expect(forced.status()).toBe(409);
    const body = await forced.text();
    expect(body).toContain('setelah diselesaikan');
    expect(body).not.toContain('Merchant cannot modify');
    // And through the API: a clear 409 from the catalogue, not the gateway's 412.
    const viaApi = await e.app.inject({
      method: 'POST',
      url: '/api/payments/DESK-CARD/refund',
      payload: { amount: 10_000 },
      headers: api,
    });
    expect(viaApi.statusCode).toBe(409);
    expect(viaApi.json()).toMatchObject({ code: 'PAYMENT_NOT_SETTLED', payment_status: 'paid' });
    expect(await e.sim.requests('/refund')).toEqual([]);
    await page.close();
  });

  it('a refund amount typed as 50.000 or Rp 50.000 is read as rupiah; a wrong one says how to write it', async () => {
    await paidQris('DESK-QR', 150_000);
    const page = await open('/console/transactions/DESK-QR?lang=id');
    await page.locator('input[name="amount"]').fill('abc');
    await page.getByRole('button', { name: 'Kembalikan dana' }).click();
    await expect(page.locator('[role="alert"]').textContent()).resolves.toContain(
      'bukan jumlah rupiah: tulis seperti 50000, 50.000 atau Rp 50.000',
    );

    await page.locator('input[name="amount"]').fill('50.000');
    await page.getByRole('button', { name: 'Kembalikan dana' }).click();
    await expect(page.locator('[data-confirm-amount]').textContent()).resolves.toBe('Rp 50.000');
    await Promise.all([
      page.waitForURL(/done=refund/),
      page.getByRole('button', { name: 'Konfirmasi pengembalian dana' }).click(),
    ]);
    await expect(page.locator('[data-refunded]').getAttribute('data-refunded')).resolves.toBe('50000');

    await page.locator('input[name="amount"]').fill('Rp 20.000');
    await page.getByRole('button', { name: 'Kembalikan dana' }).click();
    await expect(page.locator('[data-confirm-amount]').textContent()).resolves.toBe('Rp 20.000');
    await Promise.all([
      page.waitForURL(/done=refund/),
      page.getByRole('button', { name: 'Konfirmasi pengembalian dana' }).click(),
    ]);
    await expect(page.locator('[data-refunded]').getAttribute('data-refunded')).resolves.toBe('70000');
    expect(problems).toEqual([]);
    await page.close();
  });

  /** The rows of a downloaded CSV, without its byte-order mark. */
  async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; rows: string[][] }> {
    const [download] = await Promise.all([page.waitForEvent('download'), click()]);
    const text = fs.readFileSync(await download.path(), 'utf8');
    expect(text.startsWith('\uFEFF')).toBe(true);
    const sep = text.split('\r\n')[0]?.includes(';') ? ';' : ',';
    return {
      name: download.suggestedFilename(),
      rows: text
        .slice(1)
        .trimEnd()
        .split('\r\n')
        .map((l) => l.split(sep)),
    };
  }

  it("the download buttons give the page's filtered transactions and the daily report, this month by default, as a spreadsheet with the page's headers", async () => {
    await paidQris('DESK-DL', 40_000);
    const page = await open('/console/transactions?lang=id&payment_type=qris');
    const month = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Jakarta' }).format(new Date());
    await expect(page.locator('input[name="from"]').last().inputValue()).resolves.toBe(`${month.slice(0, 8)}01`);
    await expect(page.locator('input[name="to"]').last().inputValue()).resolves.toBe(month);

    const tx = await downloaded(page, () => page.getByRole('button', { name: 'Unduh transaksi' }).click());
    expect(tx.name).toBe(`paylink-transactions-${month.slice(0, 8)}01-${month}.csv`);
    const [head = [], ...rows] = tx.rows;
    expect(head).toEqual(expect.arrayContaining(['ID pesanan', 'ID pesanan di gateway', 'mercant_id', 'Akun']));
    expect(head.every((h) => h !== '')).toBe(true);
    const order = head.indexOf('ID pesanan');
    const type = head.indexOf('Jenis pembayaran');
    // The page's filter went with it: only the QRIS payments, not the card one.
    expect(rows.map((r) => r[order]).sort()).toEqual(['DESK-DL', 'DESK-QR']);
    // The spreadsheet writes the payment type in the page's words, as the console shows it.
    expect(new Set(rows.map((r) => r[type]))).toEqual(new Set(['QRIS']));

    const daily = await downloaded(page, () => page.getByRole('button', { name: 'Unduh laporan harian' }).click());
    expect(daily.rows[0]).toEqual([
      'Tanggal',
      'Jenis pembayaran',
      'Jumlah pembayaran',
      'Dibayar',
      'Dikembalikan',
      'Diterima bersih',
      'Biaya gateway',
    ]);
    const qris = daily.rows.slice(1).filter((r) => r[1] === 'QRIS');
    expect(qris.reduce((a, r) => a + Number(r[3]), 0)).toBe(190_000);
    expect(qris.reduce((a, r) => a + Number(r[4]), 0)).toBe(70_000);

    // The comma variant keeps the API's column names.
    await page.locator('select[name="sep"]').selectOption(',');
    const csv = await downloaded(page, () => page.getByRole('button', { name: 'Unduh laporan harian' }).click());
    expect(csv.rows[0]).toEqual([
      'date',
      'payment_type',
      'paid_count',
      'paid_amount',
      'refunded_amount',
      'net_amount',
      'fee_amount',
    ]);
    expect(csv.rows.slice(1).some((r) => r[1] === 'qris')).toBe(true);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("the overview's totals are the daily report's, live, with refunds and net", async () => {
    const rupiah = (s: string | null) => Number((s ?? '').replace(/[^\d]/g, ''));
    const read = async (page: Page, attr: string) =>
      ['', '-refunded', '-net', '-count'].map(async (k) =>
        rupiah(await page.locator(`[data-money="${attr}${k}"]`).textContent()),
      );
    const page = await open('/console');
    for (const attr of ['today', '7d', '30d']) {
      const [paid, refunded, net, count] = await Promise.all(await read(page, attr));
      const href = (await page.locator(`[data-download="daily-${attr}"]`).getAttribute('href')) ?? '';
      const range = new URL(href, base).searchParams;
      const res = await page.request.get(`${base}/api/reports/daily?from=${range.get('from')}&to=${range.get('to')}`);
      const items = ((await res.json()) as { items: Array<Record<string, number>> }).items;
      const sum = (k: string) => items.reduce((a, r) => a + (r[k] ?? 0), 0);
      expect([paid, refunded, net, count], attr).toEqual([
        sum('paid_amount'),
        sum('refunded_amount'),
        sum('net_amount'),
        sum('paid_count'),
      ]);
    }
    const [paid30] = await Promise.all(await read(page, '30d'));
    // Everything paid in these tests: the card (120.000) and the QRIS payments (150.000 and 40.000).
    expect(paid30).toBe(310_000);
    // Live: a payment made now is on the next look, not a minute later.
    await paidQris('DESK-LIVE', 5_000);
    await page.reload();
    const [paidNow] = await Promise.all(await read(page, 'today'));
    const [paid30Now] = await Promise.all(await read(page, '30d'));
    expect(paid30Now).toBe(315_000);
    expect(paidNow).toBeGreaterThanOrEqual(5_000);
    await expect(page.locator('[data-as-of]').textContent()).resolves.toMatch(/\d{2}[.:]\d{2}[.:]\d{2} WIB/);
    expect(problems).toEqual([]);
    await page.close();
  });
});
