/** The daily accounting report: per day and payment type, in a time zone, as JSON and as a spreadsheet-ready CSV. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, basicAuth, type TestContext } from '../helpers/services.js';
import { seedTransaction } from '../helpers/seed.js';

const op = { authorization: basicAuth() };

describe.each(DATABASE_KINDS)('GET /api/reports/daily (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
    const paid = async (
      orderId: string,
      type: string,
      at: string,
      amounts: {
        nominal: number;
        paid?: number;
        refunded?: number;
        fee?: number;
        status?: 'paid' | 'partially_refunded' | 'refunded';
      },
    ) => {
      const t = await seedTransaction(ctx.store, { orderId, nominal: amounts.nominal });
      await ctx.store.transactions.update(t.id, {
        status: amounts.status ?? 'paid',
        paymentType: type,
        settlementTime: at,
        paidAmount: amounts.paid ?? amounts.nominal,
        refundedAmount: amounts.refunded ?? 0,
        feeAmount: amounts.fee ?? null,
      });
    };
    await paid('D-1', 'qris', '2026-11-20T09:00:00+07:00', { nominal: 100_000, fee: 700 });
    await paid('D-2', 'qris', '2026-11-20T23:30:00+07:00', {
      nominal: 50_000,
      refunded: 20_000,
      status: 'partially_refunded',
      fee: 350,
    });
    await paid('D-3', 'bank_transfer', '2026-11-20T10:00:00+07:00', { nominal: 75_000 });
    // 02:00 in Jakarta on the 21st is still the 20th in UTC.
    await paid('D-4', 'gopay', '2026-11-21T02:00:00+07:00', { nominal: 30_000, paid: 30_210 });
    await paid('D-5', 'qris', '2026-11-23T12:00:00+07:00', { nominal: 9_000 });
    // Not paid: never counted.
    await seedTransaction(ctx.store, { orderId: 'D-6', nominal: 1_000 });
  });
  afterAll(async () => ctx.close());

  const get = (q: string) => ctx.app.inject({ method: 'GET', url: `/api/reports/daily?${q}`, headers: op });

  it('groups by Jakarta day and payment type; sums what was paid, refunded and charged, and what is left', async () => {
    const res = await get('from=2026-11-20&to=2026-11-22');
    expect(res.statusCode).toBe(200);
    expect(res.json().items).toEqual([
      {
        date: '2026-11-20',
        payment_type: 'bank_transfer',
        paid_count: 1,
        paid_amount: 75_000,
        refunded_amount: 0,
        net_amount: 75_000,
        fee_amount: null,
      },
      {
        date: '2026-11-20',
        payment_type: 'qris',
        paid_count: 2,
        paid_amount: 150_000,
        refunded_amount: 20_000,
        net_amount: 150_000 - 20_000 - 1_050,
        fee_amount: 1_050,
      },
      {
        date: '2026-11-21',
        payment_type: 'gopay',
        paid_count: 1,
        paid_amount: 30_210,
        refunded_amount: 0,
        net_amount: 30_210,
        fee_amount: null,
      },
    ]);
    // The rows add up to the paid and refunded amounts /api/transactions shows for those days' payments.
    const listed = (
      await ctx.app.inject({ method: 'GET', url: '/api/transactions?limit=1000', headers: op })
    ).json() as { items: Array<{ order_id: string; paid_amount: number | null; refunded_amount: number }> };
    const ofDays = listed.items.filter((t) => ['D-1', 'D-2', 'D-3', 'D-4'].includes(t.order_id));
    expect(ofDays).toHaveLength(4);
    const rows = res.json().items as Array<{ paid_amount: number; refunded_amount: number }>;
    expect(rows.reduce((a, r) => a + r.paid_amount, 0)).toBe(ofDays.reduce((a, t) => a + (t.paid_amount ?? 0), 0));
    expect(rows.reduce((a, r) => a + r.refunded_amount, 0)).toBe(ofDays.reduce((a, t) => a + t.refunded_amount, 0));
  });

  it('another time zone moves payments to their day there', async () => {
    const res = await get('from=2026-11-20&to=2026-11-20&tz=UTC');
    const items = res.json().items as Array<{ payment_type: string; paid_count: number }>;
    expect(items.map((r) => [r.payment_type, r.paid_count])).toEqual([
      ['bank_transfer', 1],
      ['gopay', 1],
      ['qris', 2],
    ]);
  });

  it('CSV: BOM, header, CRLF, empty fee where unknown, attachment name', async () => {
    const res = await get('from=2026-11-20&to=2026-11-21&format=csv');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="paylink-daily-2026-11-20-2026-11-21.csv"');
    expect(res.body.split('\r\n')).toEqual([
      '\uFEFFdate,payment_type,paid_count,paid_amount,refunded_amount,net_amount,fee_amount',
      '2026-11-20,bank_transfer,1,75000,0,75000,',
      '2026-11-20,qris,2,150000,20000,128950,1050',
      '2026-11-21,gopay,1,30210,0,30210,',
      '',
    ]);
  });

  it('refuses bad dates, reversed or overlong periods and unknown time zones (400)', async () => {
    for (const q of [
      'from=2026-11-31&to=2026-12-01',
      'from=2026-11-22&to=2026-11-20',
      'from=2025-01-01&to=2026-11-20',
      'from=2026-11-20&to=2026-11-21&tz=Mars/Olympus',
      'from=2026-11-20',
      'from=2026-11-20&to=2026-11-21&format=xlsx',
    ]) {
      const res = await get(q);
      expect(res.statusCode, q).toBe(400);
    }
  });

  it("the transaction export: every row of the filters as CSV, the list's fields as columns, formulas neutralised", async () => {
    await seedTransaction(ctx.store, {
      orderId: '=HYPERLINK("http://x.example","click"):1',
      mercantId: '=HYPERLINK("http://x.example","click")',
      nominal: 5_000,
    });
    const res = await ctx.app.inject({ method: 'GET', url: '/api/transactions/export?format=csv', headers: op });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = res.body.split('\r\n').filter((l) => l !== '');
    expect(lines[0]).toMatch(
      /^\uFEFForder_id,gateway_order_id,mercant_id,kind,attempt,nominal,paid_amount,original_amount,refunded_amount,fee_amount,net_amount,amount_mismatch,status,/,
    );
    expect(lines).toHaveLength(1 + 7);
    const evil = lines.find((l) => l.includes('HYPERLINK'));
    expect(evil?.startsWith(`"'=HYPERLINK(""http://x.example"",""click""):1"`)).toBe(true);
    const d2 = lines.find((l) => l.startsWith('D-2,'));
    expect(d2).toMatch(/^D-2,[^,]*,D-2,payment_link,1,50000,50000,,20000,350,,false,partially_refunded,/);
    const paidOnly = await ctx.app.inject({
      method: 'GET',
      url: '/api/transactions/export?format=csv&status=paid',
      headers: op,
    });
    expect(paidOnly.body.split('\r\n').filter((l) => l !== '')).toHaveLength(1 + 4);
    expect(
      (await ctx.app.inject({ method: 'GET', url: '/api/transactions/export?format=xlsx', headers: op })).statusCode,
    ).toBe(400);
  });

  // Last: it adds a payment the tests above do not count.
  it('CSV for a `;` spreadsheet: a formula after a `;` in a cell is text in either file, a negative amount stays a number, `sep` other than `,`/`;` is 400', async () => {
    const t = await seedTransaction(ctx.store, { orderId: 'X2;-2+3', nominal: 10_000 });
    // Refunded in full with the fee kept: the day's net is negative.
    await ctx.store.transactions.update(t.id, {
      status: 'refunded',
      paymentType: 'qris',
      settlementTime: '2026-11-25T09:00:00+07:00',
      paidAmount: 10_000,
      refundedAmount: 10_000,
      feeAmount: 700,
    });

    const daily = await get('from=2026-11-25&to=2026-11-25&format=csv&sep=%3B');
    expect(daily.statusCode).toBe(200);
    expect(daily.body.split('\r\n')).toEqual([
      '\uFEFFdate;payment_type;paid_count;paid_amount;refunded_amount;net_amount;fee_amount',
      '2026-11-25;qris;1;10000;10000;-700;700',
      '',
    ]);
    expect((await get('from=2026-11-25&to=2026-11-25&format=csv&sep=%2C')).body).toContain(
      '2026-11-25,qris,1,10000,10000,-700,700\r\n',
    );

    const exported = async (q: string) => {
      const res = await ctx.app.inject({ method: 'GET', url: `/api/transactions/export?format=csv${q}`, headers: op });
      expect(res.statusCode).toBe(200);
      return res.body.split('\r\n').find((l) => l.includes('X2;'));
    };
    expect(await exported('')).toMatch(/^"X2;'-2\+3",[^,]*,"X2;'-2\+3",payment_link,1,10000,10000,,10000,700,/);
    expect(await exported('&sep=;')).toMatch(/^"X2;'-2\+3";[^;]*;"X2;'-2\+3";payment_link;1;10000;10000;;10000;700;/);
    expect(
      (await ctx.app.inject({ method: 'GET', url: '/api/transactions/export?format=csv&sep=%3B', headers: op })).body,
    ).toMatch(/^\uFEFForder_id;gateway_order_id;mercant_id;/);

    for (const url of [
      '/api/transactions/export?format=csv&sep=%09',
      '/api/transactions/export?format=csv&sep=',
      '/api/reports/daily?from=2026-11-25&to=2026-11-25&format=csv&sep=|',
    ]) {
      const res = await ctx.app.inject({ method: 'GET', url, headers: op });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'querystring.sep' }] });
    }
  });
});
