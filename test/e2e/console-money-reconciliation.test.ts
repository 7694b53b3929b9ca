/**
 * The console's Reconciliation page with real uploads (multipart, as a browser sends the form):
 * the CSRF token is required, the import's counts and rows by result are shown, its exceptions
 * download as formula-safe CSV, and a file that cannot be read answers the page with its line and
 * column, never a 500.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { gatewayIdOf, seedTransaction } from '../helpers/seed.js';
import { formState } from '../helpers/console-forms.js';

const BOUNDARY = '----paylinkTestBoundary7MA4YWxkTrZu0gW';

/** A multipart/form-data body as a browser builds it: the fields in the form's order, the file last. */
function multipart(fields: Array<[string, string]>, file?: { name: string; content: string }): Buffer {
  const parts = fields.map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  if (file)
    parts.push(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: text/csv\r\n\r\n${file.content}\r\n`,
    );
  return Buffer.from(`${parts.join('')}--${BOUNDARY}--\r\n`);
}

describe.each(DATABASE_KINDS)('console reconciliation page (%s)', (kind) => {
  let ctx: TestContext;
  beforeEach(async () => {
    // A report's dates lie within two years before the import's day: the import happens on 2026-11-26.
    ctx = await makeTestApp(
      kind,
      {},
      { simulatorBaseUrl: 'http://127.0.0.1:9', clock: { now: () => new Date('2026-11-26T05:00:00Z') } },
    );
  });
  afterEach(async () => ctx.close());
  const op = { authorization: basicAuth() };
  const get = (url: string) => ctx.app.inject({ url, headers: op });

  async function paid(orderId: string, amount: number, settled: string) {
    const t = await seedTransaction(ctx.store, { orderId, nominal: amount, kind: 'charge' });
    await ctx.store.transactions.update(t.id, {
      status: 'paid',
      transactionStatus: 'settlement',
      paymentType: 'qris',
      paidAmount: amount,
      settlementTime: settled,
    });
  }

  /** Opens the page and posts the upload form with its token and cookie (`csrf: false` leaves the token out). */
  async function upload(
    csv: string | undefined,
    o: { columns?: string; separator?: string; from?: string; to?: string; csrf?: boolean } = {},
  ) {
    const { token, cookie } = formState(await get('/console/reconciliation'));
    expect(token).not.toBe('');
    const separator: Array<[string, string]> = o.separator === undefined ? [] : [['separator', o.separator]];
    const fields: Array<[string, string]> = [
      ...(o.csrf === false ? [] : [['_csrf', token] as [string, string]]),
      ['columns', o.columns ?? ''],
      ...separator,
      ['from', o.from ?? ''],
      ['to', o.to ?? ''],
    ];
    return ctx.app.inject({
      method: 'POST',
      url: '/console/reconciliation',
      headers: { ...op, cookie, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      payload: multipart(fields, csv === undefined ? undefined : { name: 'report.csv', content: csv }),
    });
  }

  const imports = async () =>
    (await ctx.app.inject({ url: '/api/reconciliation/imports', headers: op })).json<{ items: Array<{ id: string }> }>()
      .items;

  it('imports an uploaded report, shows its counts and rows by result, and downloads its exceptions as CSV', async () => {
    await paid('RC/1', 10_000, '2026-11-20T10:00:00+07:00');
    await paid('RC/2', 20_000, '2026-11-21T10:00:00+07:00');
    await paid('RC/3', 30_000, '2026-11-21T11:00:00+07:00');
    await paid('RC/4', 40_000, '2026-11-22T10:00:00+07:00');
    const csv = [
      'Order ID,Transaction Status,Amount,Fee,Settlement Time',
      `${gatewayIdOf('RC/1')},settlement,10000.00,70,2026-11-20 10:00:00`,
      `${gatewayIdOf('RC/2')},settlement,20500.00,140,2026-11-21 10:00:00`,
      `"@SUM(1+1)",settlement,5000,35,2026-11-21 12:00:00`,
      `${gatewayIdOf('RC/4')},settlement,40000,280,2026-11-22 10:00:00`,
    ].join('\r\n');

    const page = await get('/console/reconciliation');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<a href="/console/reconciliation" aria-current="page">Reconciliation</a>');
    expect(page.body).toContain('enctype="multipart/form-data"');
    expect(page.body).toContain('No report imported yet.');
    const indonesian = await get('/console/reconciliation?lang=id');
    expect(indonesian.body).toContain('<h2 id="h-upload">Impor laporan gateway</h2>');
    expect(indonesian.body).toContain('Belum ada laporan yang diimpor.');

    // Without the form's token nothing is read or kept.
    const forged = await upload(csv, { csrf: false });
    expect(forged.statusCode).toBe(403);
    expect(await imports()).toEqual([]);

    const res = await upload(csv);
    expect(res.statusCode).toBe(303);
    const location = String(res.headers.location);
    expect(location).toMatch(/^\/console\/reconciliation\/[0-9a-f-]{36}\?done=imported$/);
    const id = location.slice('/console/reconciliation/'.length, location.indexOf('?'));
    expect((await imports()).map((i) => i.id)).toEqual([id]);

    const shown = await get(location);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('Report imported.');
    for (const [k, n] of Object.entries({
      rows: 4,
      matched: 2,
      missing_here: 1,
      missing_at_gateway: 1,
      amount_mismatch: 1,
      status_mismatch: 0,
    }))
      expect(shown.body).toContain(`<td class="num" data-count="${k}">${n}</td>`);
    expect(shown.body.match(/<tr data-row=/g)).toHaveLength(5);
    // paylink's side of a row is its status in the page's words, as everywhere in the console.
    expect(shown.body).toMatch(/<span class="badge s-paid" data-value="paid">paid<\/span>/);
    expect(shown.body).toContain('<a href="/console/transactions/RC%2F3">RC/3</a>');

    const list = await get('/console/reconciliation');
    expect(list.body).toContain(`<tr data-import="${id}">`);
    expect(list.body).toContain('2026-11-20 – 2026-11-22');

    const only = await get(`/console/reconciliation/${id}?result=amount_mismatch`);
    expect(only.statusCode).toBe(200);
    expect(only.body.match(/<tr data-row=/g)).toHaveLength(1);
    expect(only.body).toContain('data-result="amount_mismatch"');
    expect(only.body).toContain('amount: the report says 20500, paylink 20000');
    expect(only.body).toContain('<option value="amount_mismatch" selected>');
    expect((await get(`/console/reconciliation/${id}?result=nonsense`)).statusCode).toBe(400);
    expect((await get('/console/reconciliation/00000000-0000-0000-0000-000000000000')).statusCode).toBe(404);

    const file = await get(`/console/reconciliation/${id}/exceptions.csv`);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(file.headers['content-disposition']).toBe(`attachment; filename="reconciliation-${id}-exceptions.csv"`);
    const lines = file.body
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    expect(lines[0]).toBe(
      'id,line,result,gateway_order_id,order_id,report_status,report_amount,fee_amount,net_amount,paylink_status,paylink_amount,detail',
    );
    expect(lines.slice(1).map((l) => l.split(',')[2])).toEqual([
      'missing_here',
      'missing_at_gateway',
      'amount_mismatch',
    ]);
    // A cell a spreadsheet would run as a formula is written as text.
    expect(lines[1]).toContain(",missing_here,'@SUM(1+1),");
    expect(lines[2]).toContain(`,missing_at_gateway,${gatewayIdOf('RC/3')},RC/3,`);
    expect((await get('/console/reconciliation/00000000-0000-0000-0000-000000000000/exceptions.csv')).statusCode).toBe(
      404,
    );

    // The same file again is the first import.
    const again = await upload(csv);
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(`/console/reconciliation/${id}?done=again`);
    expect((await get(String(again.headers.location))).body).toContain('This file was imported before');
  });

  it("the exceptions file: a formula after a `;` in a report's cell is text, with `,` or `;` between cells; another `sep` is refused", async () => {
    const res = await upload(
      [
        'Order ID,Transaction Status,Amount',
        `"x;=cmd|'/C calc'!A0",settlement,5000`,
        '"y,@SUM(A1)",settlement,1000',
      ].join('\r\n'),
    );
    expect(res.statusCode).toBe(303);
    const self = String(res.headers.location).split('?')[0] ?? '';
    expect((await get(self)).body).toContain(
      `<a href="${self}/exceptions.csv?sep=%3B" download>CSV with ; (Excel in Indonesian)</a>`,
    );

    const comma = (await get(`${self}/exceptions.csv`)).body.split('\r\n');
    expect(comma[0]).toBe(
      '\uFEFFid,line,result,gateway_order_id,order_id,report_status,report_amount,fee_amount,net_amount,paylink_status,paylink_amount,detail',
    );
    expect(comma.slice(1, 3)).toEqual([
      expect.stringMatching(/^\d+,2,missing_here,"x;'=cmd\|'\/C calc'!A0",,settlement,5000,/),
      expect.stringMatching(/^\d+,3,missing_here,"y,'@SUM\(A1\)",,settlement,1000,/),
    ]);
    const semicolon = await get(`${self}/exceptions.csv?sep=%3B`);
    expect(semicolon.statusCode).toBe(200);
    const lines = semicolon.body.split('\r\n');
    expect(lines[0]).toBe(
      '\uFEFFid;line;result;gateway_order_id;order_id;report_status;report_amount;fee_amount;net_amount;paylink_status;paylink_amount;detail',
    );
    expect(lines.slice(1, 3)).toEqual([
      expect.stringMatching(/^\d+;2;missing_here;"x;'=cmd\|'\/C calc'!A0";;settlement;5000;/),
      expect.stringMatching(/^\d+;3;missing_here;y,'@SUM\(A1\);;settlement;1000;/),
    ]);
    expect((await get(`${self}/exceptions.csv?sep=x`)).statusCode).toBe(400);
  });

  it('a file that cannot be read answers the page with its line and column (400), keeps nothing, and never a 500', async () => {
    const bad = await upload('Order ID,Transaction Status,Amount\r\nA-1,settlement,1000.00\r\nA-2,settlement,12x\r\n');
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^text\/html/);
    expect(bad.body).toContain('Line 3, column &quot;Amount&quot;: &quot;12x&quot; is not an amount in rupiah');
    // The form is there again to send a corrected file.
    expect(bad.body).toContain('enctype="multipart/form-data"');

    const header = await upload('Order,Status\r\nA-1,settlement\r\n');
    expect(header.statusCode).toBe(400);
    expect(header.body).toContain('Line 1: the header has no column for order_id');
    const quote = await upload('Order ID,Transaction Status,Amount\r\n"A-1,settlement,1000\r\n');
    expect(quote.statusCode).toBe(400);
    expect(quote.body).toMatch(/Line \d/);
    const empty = await upload('');
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('The report is empty');
    const noFile = await upload(undefined);
    expect(noFile.statusCode).toBe(400);
    const days = await upload('Order ID,Transaction Status,Amount\r\nA-1,settlement,1000\r\n', {
      from: '2026-11-22',
      to: '2026-11-20',
    });
    expect(days.statusCode).toBe(400);
    expect(days.body).toContain('from and to go together');
    const mapping = await upload('Kode,Status,Jumlah\r\nA-1,settlement,1000\r\n', { columns: 'nonsense:X' });
    expect(mapping.statusCode).toBe(400);
    expect(mapping.body).toContain('columns names an unknown field');

    // A form cut short or not multipart at all is the sender's mistake: a 400, and no import waits for the rest.
    const { token: t2, cookie: c2 } = formState(await get('/console/reconciliation'));
    const cut = [
      ['multipart/form-data', 'no boundary'],
      [
        `multipart/form-data; boundary=${BOUNDARY}`,
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${t2}`,
      ],
      [
        `multipart/form-data; boundary=${BOUNDARY}`,
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${t2}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="r.csv"\r\n\r\nOrder ID,Transaction Status,Amount\r\nA-1,settlement,1000`,
      ],
    ];
    for (const [type, payload] of cut) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/console/reconciliation',
        headers: { ...op, cookie: c2, 'content-type': type ?? '' },
        payload,
      });
      expect(res.statusCode, payload).toBe(400);
      expect(res.body).toContain('The upload is not a complete form');
    }

    // A form of another kind (not multipart) is refused as such.
    const { token, cookie } = formState(await get('/console/reconciliation'));
    const form = await ctx.app.inject({
      method: 'POST',
      url: '/console/reconciliation',
      headers: { ...op, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${encodeURIComponent(token)}`,
    });
    expect(form.statusCode).toBeGreaterThanOrEqual(400);
    expect(form.statusCode).toBeLessThan(500);
    expect(await imports()).toEqual([]);
  });

  it('over a real connection, a refused or unreadable upload is answered and the connection serves the next request', async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const address = ctx.app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const page = await fetch(`${base}/console/reconciliation`, { headers: op });
    const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    // A file of a few MB whose third line cannot be read: reading stops there, the rest is never parsed.
    const big = `Order ID,Transaction Status,Amount\r\nA-1,settlement,1000\r\nA-2,settlement,12x\r\n${'B-1,settlement,1000\r\n'.repeat(150_000)}`;
    const send = (withToken: boolean, csv: string) => {
      const form = new FormData();
      if (withToken) form.append('_csrf', token);
      form.append('file', new Blob([csv], { type: 'text/csv' }), 'report.csv');
      return fetch(`${base}/console/reconciliation`, {
        method: 'POST',
        body: form,
        headers: { ...op, cookie, origin: base },
        redirect: 'manual',
        signal: AbortSignal.timeout(20_000),
      });
    };
    expect((await send(false, big)).status).toBe(403);
    const bad = await send(true, big);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Line 3, column &quot;Amount&quot;');
    const good = await send(true, 'Order ID,Transaction Status,Amount\r\nZ-1,settlement,1000\r\n');
    expect(good.status).toBe(303);
    expect(
      (
        await fetch(`${base}${good.headers.get('location') ?? ''}`, {
          headers: op,
          signal: AbortSignal.timeout(20_000),
        })
      ).status,
    ).toBe(200);
    expect(await imports()).toHaveLength(1);
  }, 60_000);

  it('pages the rows of an import 200 at a time, and its exceptions file holds every one of them', async () => {
    const rows = Array.from({ length: 1005 }, (_, i) => `UNKNOWN-${String(i).padStart(4, '0')},settlement,1000`);
    const res = await upload(['Order ID,Transaction Status,Amount', ...rows].join('\r\n'));
    expect(res.statusCode).toBe(303);
    const first = await get(String(res.headers.location).replace('?done=imported', '?result=missing_here'));
    expect(first.body.match(/<tr data-row=/g)).toHaveLength(200);
    const next = /<p class="pager"><a href="([^"]+)">Next rows<\/a>/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toMatch(/\?result=missing_here&after=\d+$/);
    const second = await get(next ?? '');
    expect(second.body.match(/<tr data-row=/g)).toHaveLength(200);
    expect(second.body).toContain('UNKNOWN-0200');
    expect(second.body).not.toContain('UNKNOWN-0199');
    const file = await get(`${String(res.headers.location).split('?')[0] ?? ''}/exceptions.csv`);
    const lines = file.body.trimEnd().split('\r\n');
    expect(lines).toHaveLength(1 + 1005);
    expect(new Set(lines.slice(1).map((l) => l.split(',')[3])).size).toBe(1005);
  });

  it('a NUL in the uploaded file answers the page with its line and column (400) and keeps nothing', async () => {
    await paid('RC/NUL', 15_000, '2026-11-20T10:00:00+07:00');
    const res = await upload(
      `Order ID,Transaction Status,Amount,Fee\r\n${gatewayIdOf('RC/NUL')},settlement,15000,105\r\nA-\u00002,settlement,1000,7\r\n`,
    );
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('Line 3, column &quot;Order ID&quot;: contains a NUL character (U+0000).');
    expect(res.body).toContain('line 3, column Order ID: contains a NUL character (U+0000)');
    expect(await imports()).toEqual([]);
    expect(await ctx.store.transactions.findByOrderId('RC/NUL')).toMatchObject({ feeAmount: null, netAmount: null });
  });

  it('reads a semicolon file with decimal commas, its separator named in the form', async () => {
    await paid('RC/SEMI', 150_000, '2026-11-20T10:00:00+07:00');
    const csv = `Order ID;Transaction Status;Amount;Fee\r\n${gatewayIdOf('RC/SEMI')};settlement;150000,00;4000,00\r\n`;
    const named = await upload(csv, { separator: 'semicolon' });
    expect(named.statusCode).toBe(303);
    expect(await ctx.store.transactions.findByOrderId('RC/SEMI')).toMatchObject({
      feeAmount: 4000,
      netAmount: 146_000,
    });
    expect((await get(String(named.headers.location))).body).toContain('<td class="num" data-count="matched">1</td>');
    const bad = await upload(csv, { separator: 'pipe' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('separator is one of comma, semicolon, tab.');
    const page = await get('/console/reconciliation?lang=id');
    expect(page.body).toContain('<option value="semicolon">titik koma (;)</option>');
  });

  it('reads another layout through the column names given in the form', async () => {
    await paid('RC/9', 15_000, '2026-11-20T10:00:00+07:00');
    const res = await upload(`Kode;Status Transaksi;Jumlah\r\n${gatewayIdOf('RC/9')};settlement;15000\r\n`, {
      columns: 'order_id:Kode,status:Status Transaksi,amount:Jumlah',
      from: '2026-11-20',
      to: '2026-11-20',
    });
    expect(res.statusCode).toBe(303);
    const shown = await get(String(res.headers.location));
    expect(shown.body).toContain('<td class="num" data-count="matched">1</td>');
    expect(shown.body).toContain('<td class="num" data-count="missing_at_gateway">0</td>');
  });
});
