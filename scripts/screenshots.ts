/**
 * `npm run screenshots`: starts the service with the embedded simulator and a small ERP receiver,
 * makes a few payments (one partly refunded, one whose ERP delivery fails, one QRIS charge left
 * pending), and writes a PNG of every console page in English and in Indonesian, and of /docs, at
 * 1280 and 375 px wide into docs/images/ with Debian's Chromium.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { loadConfig } from '../src/config/env.js';
import { startService } from '../src/server.js';
import { startErpReceiver } from '../test/helpers/erp-receiver.js';

const OUT = path.resolve('docs/images');
const OPERATOR = { user: 'operator', pass: 'screenshots-operator-pass' };
const API_KEY = 'screenshots-api-key-0123456789abcdef';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-screens-'));
const erp = await startErpReceiver({});
const service = await startService(
  loadConfig({
    PORT: '0',
    DATA_DIR: path.join(dir, 'data'),
    LOG_DIR: path.join(dir, 'logs'),
    MIDTRANS_MODE: 'simulator',
    API_KEYS: API_KEY,
    ERP_NOTIFY_URL: erp.url,
    log_user: OPERATOR.user,
    log_pass: OPERATOR.pass,
  }),
  { stdoutLogs: false },
);
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const api = (p: string, body: unknown) =>
  fetch(`${service.url}${p}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function pay(context: BrowserContext, orderId: string, nominal: number, method = 'other_qris'): Promise<void> {
  const link = (await (await api('/api/payment-links', { order_id: orderId, nominal })).json()) as {
    payment_url: string;
  };
  const page = await context.newPage();
  await page.goto(link.payment_url);
  await page.click(`button[data-method="${method}"]`);
  await page.click('#pay');
  await page.locator('#result', { hasText: 'Payment successful' }).waitFor({ timeout: 15_000 });
  await page.close();
}

try {
  fs.mkdirSync(OUT, { recursive: true });
  const context = await browser.newContext({
    httpCredentials: { username: OPERATOR.user, password: OPERATOR.pass },
    viewport: { width: 1280, height: 860 },
  });
  await pay(context, 'INV/2026/0042:1', 150000);
  await pay(context, 'INV/2026/0043:1', 275000, 'bca_va');
  await api('/api/payment-links', { order_id: 'INV/2026/0044:1', nominal: 99000 });
  await new Promise((r) => setTimeout(r, 500));
  await api(`/api/payments/${encodeURIComponent('INV/2026/0042:1')}/refund`, {
    amount: 50000,
    reason: 'one item returned',
  });
  erp.setMode({ kind: 'fail', status: 503 });
  await pay(context, 'INV/2026/0045:1', 42000);
  await new Promise((r) => setTimeout(r, 1500));
  // A QRIS charge left pending: its page shows the QR code.
  await api('/api/charge', { order_id: 'INV/2026/0046:1', nominal: 64000, payment_type: 'qris' });
  const tx = (id: string) => `/console/transactions/${encodeURIComponent(id)}`;
  // A gateway report of today's payments: one row changed in amount and one paylink never saw.
  const op = { authorization: `Basic ${Buffer.from(`${OPERATOR.user}:${OPERATOR.pass}`).toString('base64')}` };
  const listed = (await (await fetch(`${service.url}/api/transactions?status=paid`, { headers: op })).json()) as {
    items: Array<{ gateway_order_id: string; paid_amount: number | null; nominal: number }>;
  };
  const stamp = new Date().toLocaleString('sv-SE', { timeZone: 'Asia/Jakarta' });
  const rows = listed.items.map(
    (t, i) =>
      `${t.gateway_order_id},settlement,${i === 0 ? (t.paid_amount ?? t.nominal) + 1000 : (t.paid_amount ?? t.nominal)},${Math.round((t.paid_amount ?? t.nominal) * 0.007)},${stamp}`,
  );
  const report = [
    'Order ID,Transaction Status,Amount,Fee,Settlement Time',
    ...rows,
    `INV-NEVER-SEEN,settlement,25000,175,${stamp}`,
  ].join('\r\n');
  const importAnswer = await fetch(`${service.url}/api/reconciliation/imports`, {
    method: 'POST',
    headers: { ...op, 'content-type': 'text/csv' },
    body: report,
  });
  const imported = (await importAnswer.json()) as { id: string };
  if (importAnswer.status !== 201)
    throw new Error(`the report import answered ${importAnswer.status}: ${JSON.stringify(imported)}`);
  const logFile = fs.readdirSync(path.join(dir, 'logs')).find((f) => f.endsWith('.log'));
  const shots: Array<[string, string]> = [
    ['console-overview', '/console'],
    ['console-transactions', '/console/transactions'],
    ['console-transaction', tx('INV/2026/0042:1')],
    ['console-transaction-qris', tx('INV/2026/0046:1')],
    ['console-transaction-va', tx('INV/2026/0043:1')],
    ['console-deliveries', '/console/deliveries'],
    ['console-logs', '/console/logs?q=gateway'],
    ...(logFile
      ? [['console-log-file', `/console/logs/view?file=${encodeURIComponent(logFile)}`] as [string, string]]
      : []),
    ['console-config', '/console/config'],
    ['console-reconciliation', '/console/reconciliation'],
    ['console-reconciliation-import', `/console/reconciliation/${imported.id}`],
  ];
  const withLang = (url: string, lang: string) => `${service.url}${url}${url.includes('?') ? '&' : '?'}lang=${lang}`;
  const page = await context.newPage();
  let written = 0;
  for (const [width, suffix] of [
    [1280, ''],
    [375, '-375'],
  ] as const) {
    await page.setViewportSize({ width, height: width === 375 ? 800 : 860 });
    for (const lang of ['en', 'id']) {
      for (const [name, url] of shots) {
        await page.goto(withLang(url, lang));
        await page.screenshot({
          path: path.join(OUT, `${name}-${lang}${suffix}.png`),
          fullPage: name !== 'console-logs' && name !== 'console-log-file',
        });
        written += 1;
      }
      // The confirmation a refund asks for first (not confirmed here).
      await page.goto(withLang(tx('INV/2026/0042:1'), lang));
      await page.locator('input[name="amount"]').fill('25000');
      await page.locator('form[action$="/refund"] button[type="submit"]').click();
      await page.locator('[data-confirm="refund"]').waitFor({ timeout: 10_000 });
      await page.screenshot({ path: path.join(OUT, `console-confirm-refund-${lang}${suffix}.png`), fullPage: true });
      written += 1;
    }
  }
  // /docs loaded wide (its operations opened), then narrowed: the reference renders its content once.
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto(`${service.url}/docs`);
  await page.getByText('Payment Operations', { exact: true }).first().click();
  await page.getByText('Refund a paid payment, all of it or a part').first().waitFor({ timeout: 20_000 });
  await page.getByText('Refund a paid payment, all of it or a part').first().click();
  await page.waitForTimeout(1500);
  await page.screenshot({ path: path.join(OUT, 'docs.png') });
  await page.setViewportSize({ width: 375, height: 800 });
  await page.waitForTimeout(1500);
  await page.screenshot({ path: path.join(OUT, 'docs-375.png') });
  written += 2;
  await context.close();
  console.log(`wrote ${written} screenshots to ${OUT}`);
} finally {
  await browser.close();
  await service.stop();
  await erp.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
