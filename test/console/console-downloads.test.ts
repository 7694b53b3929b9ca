/**
 * The console's downloads in both formats: the CSV (`,`) keeps the API's column names and codes, a
 * program's file; the spreadsheet (`;`) writes headers and codes (payment type, status, gateway
 * status, kind, yes/no) in the page's language, in the words the console's pages use. Amounts stay
 * numbers in both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { seedPaymentAt, seedTransaction } from '../helpers/seed.js';

/** The rows of a CSV answer, without its byte-order mark; no cell of these rows holds a separator. */
function rows(body: string, sep: ',' | ';'): Array<Record<string, string>> {
  expect(body.startsWith('\uFEFF')).toBe(true);
  const [head = [], ...lines] = body
    .slice(1)
    .trimEnd()
    .split('\r\n')
    .map((l) => l.split(sep));
  return lines.map((cells) => Object.fromEntries(head.map((h, i) => [h, cells[i] ?? ''])));
}

describe.each(DATABASE_KINDS)('console downloads (%s)', (kind) => {
  let t: LoggedApp;
  const now = new Date();
  const day = (d: Date) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Jakarta' }).format(d);
  // Yesterday and today in Jakarta: a payment made a minute ago is in them at any time of day.
  const days = `from=${day(new Date(now.getTime() - 86_400_000))}&to=${day(now)}`;
  beforeAll(async () => {
    t = await makeLoggedApp(kind, { CONSOLE_TIME_ZONE: 'Asia/Jakarta' });
    // Made a minute ago and paid at once.
    const paid = { status: 'paid', createdHoursAgo: 1 / 60, paidMinutesAfter: 0 } as const;
    await seedPaymentAt(t.store, now, 'DL-VA', { ...paid, type: 'bank_transfer', amount: 150_000 });
    await seedPaymentAt(t.store, now, 'DL-QR', { ...paid, type: 'qris', amount: 40_000 });
    for (const [order, status] of [
      ['DL-VA', 'settlement'],
      ['DL-QR', 'settlement'],
    ] as const) {
      const tx = await t.store.transactions.findByOrderId(order);
      if (tx) await t.store.transactions.update(tx.id, { transactionStatus: status });
    }
    await seedTransaction(t.store, { orderId: 'DL-WAIT', nominal: 25_000 });
  });
  afterAll(async () => t.close());
  const get = async (url: string) => {
    const res = await t.app.inject({ url, headers: { authorization: basicAuth() } });
    expect(res.statusCode, url).toBe(200);
    return res.body;
  };

  it('the transactions: codes in the CSV, words of the page in the spreadsheet, amounts as numbers in both', async () => {
    const csv = rows(await get(`/console/transactions/export?${days}&sep=%2C`), ',');
    const byOrder = (list: Array<Record<string, string>>, key: string) =>
      Object.fromEntries(list.map((r) => [r[key], r]));
    const codes = byOrder(csv, 'order_id');
    expect(codes['DL-VA']).toMatchObject({
      payment_type: 'bank_transfer',
      status: 'paid',
      transaction_status: 'settlement',
      kind: 'payment_link',
      amount_mismatch: 'false',
      nominal: '150000',
    });
    expect(codes['DL-WAIT']).toMatchObject({ payment_type: '', status: 'pending', transaction_status: '' });

    const id = byOrder(rows(await get(`/console/transactions/export?${days}&sep=%3B&lang=id`), ';'), 'ID pesanan');
    expect(id['DL-VA']).toMatchObject({
      'Jenis pembayaran': 'Transfer bank (virtual account)',
      Status: 'lunas',
      'Status di gateway': 'lunas',
      Jenis: 'tautan pembayaran',
      'Jumlah tidak cocok': 'tidak',
      'Jumlah tagihan': '150000',
    });
    expect(id['DL-QR']).toMatchObject({ 'Jenis pembayaran': 'QRIS', Status: 'lunas' });
    // Nothing given is nothing written, not a word for "unknown".
    expect(id['DL-WAIT']).toMatchObject({ 'Jenis pembayaran': '', Status: 'menunggu', 'Status di gateway': '' });

    const en = byOrder(rows(await get(`/console/transactions/export?${days}&sep=%3B&lang=en`), ';'), 'Order ID');
    expect(en['DL-VA']).toMatchObject({
      'Payment type': 'Bank transfer (virtual account)',
      Status: 'paid',
      'Gateway status': 'settled',
      Kind: 'payment link',
      'Amount mismatch': 'no',
    });
  });

  it('the daily report: payment types as codes in the CSV and in words in the spreadsheet, the same sums', async () => {
    const csv = rows(await get(`/console/reports/daily?${days}&sep=%2C`), ',');
    expect(csv.map((r) => [r.payment_type, r.paid_amount])).toEqual([
      ['bank_transfer', '150000'],
      ['qris', '40000'],
    ]);
    const id = rows(await get(`/console/reports/daily?${days}&sep=%3B&lang=id`), ';');
    expect(id.map((r) => [r['Jenis pembayaran'], r.Dibayar])).toEqual([
      ['Transfer bank (virtual account)', '150000'],
      ['QRIS', '40000'],
    ]);
    const en = rows(await get(`/console/reports/daily?${days}&sep=%3B&lang=en`), ';');
    expect(en.map((r) => r['Payment type'])).toEqual(['Bank transfer (virtual account)', 'QRIS']);
  });
});
