/**
 * Reconciliation against a dashboard-style report made from the simulator's own settlements over
 * three days, with one row paylink never saw, one amount changed and one paid order left out: the
 * import finds exactly those exceptions, keeps the fee and net of the matched rows, and a second
 * import of the same file changes nothing.
 */
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { basicAuth } from '../helpers/services.js';
import { jakartaDay } from '../../src/platform/time.js';

const KEY = 'erp-key-recon-0123456789';
const op = { authorization: basicAuth() };

/** Day `d` of the report (Jakarta): it starts six days ago, as a report must lie within two years before the import's day. */
const day = (d: number) => jakartaDay(new Date(Date.now() + (d - 6) * 86_400_000).toISOString());
/** The gateway's spelling of a Jakarta time on day `d` of the report. */
const when = (d: number, hh: number) => `${day(d)} ${String(hh).padStart(2, '0')}:15:00`;

describe.each(DATABASE_KINDS)('POST /api/reconciliation/imports (%s)', (kind) => {
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E(kind, { env: { API_KEYS: KEY } });
  });
  afterEach(async () => e.close());

  async function paidCharge(
    orderId: string,
    nominal: number,
    day: number,
  ): Promise<{ gatewayOrderId: string; transactionId: string }> {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      headers: { authorization: `Bearer ${KEY}` },
      payload: { order_id: orderId, nominal, payment_type: 'qris' },
    });
    expect(res.statusCode).toBe(201);
    const { gateway_order_id: gatewayOrderId, transaction_id: transactionId } = res.json() as {
      gateway_order_id: string;
      transaction_id: string;
    };
    expect((await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    await e.app.inject({
      method: 'GET',
      url: `/api/payments/${encodeURIComponent(orderId)}/status`,
      headers: { authorization: `Bearer ${KEY}` },
    });
    // The settlement happened on the report's day `day` (the simulator settles now).
    const tx = await e.services.store.transactions.findByOrderId(orderId);
    await e.services.store.transactions.update(tx?.id ?? '', {
      settlementTime: `${when(day, 10).replace(' ', 'T')}+07:00`,
    });
    return { gatewayOrderId, transactionId };
  }

  const upload = (csv: string, query = '') =>
    e.app.inject({
      method: 'POST',
      url: `/api/reconciliation/imports${query}`,
      headers: { ...op, 'content-type': 'text/csv' },
      payload: Readable.from([Buffer.from(csv)]),
    });

  it('finds exactly the planted exceptions, keeps fee and net, and a second import of the file is the first one', async () => {
    const paid: Array<{
      orderId: string;
      gatewayOrderId: string;
      transactionId: string;
      nominal: number;
      day: number;
    }> = [];
    for (let i = 0; i < 9; i++) {
      const nominal = 10_000 * (i + 1);
      const day = i % 3;
      paid.push({ orderId: `REC/${i}`, nominal, day, ...(await paidCharge(`REC/${i}`, nominal, day)) });
    }
    const header =
      '\uFEFFOrder ID,Transaction ID,Payment Type,Transaction Status,Amount,Fee,Transaction Time,Settlement Time,Customer Email';
    const lines = paid
      // One paid order is left out of the report.
      .filter((p) => p.orderId !== 'REC/4')
      .map((p) => {
        // One amount is changed.
        const amount = p.orderId === 'REC/7' ? p.nominal + 500 : p.nominal;
        return `${p.gatewayOrderId},${p.transactionId},qris,settlement,"${amount.toLocaleString('en-US')}.00",${Math.round(p.nominal * 0.007)},${when(p.day, 9)},${when(p.day, 10)},"a@b.example"`;
      });
    // One row paylink never saw (a formula-looking email must stay a plain value).
    lines.splice(
      3,
      0,
      `NEVER-SEEN-1,tx-never,gopay,settlement,25000.00,175,${when(1, 11)},${when(1, 12)},"=cmd|' /C calc'!A0"`,
    );
    const csv = [header, ...lines].join('\r\n') + '\r\n';

    const first = await upload(csv);
    expect(first.statusCode).toBe(201);
    const summary = first.json() as Record<string, unknown>;
    expect(summary).toMatchObject({
      rows: 9,
      matched: 7,
      missing_here: 1,
      missing_at_gateway: 1,
      amount_mismatch: 1,
      status_mismatch: 0,
      covers_from: day(0),
      covers_to: day(2),
    });

    const detail = (
      await e.app.inject({ method: 'GET', url: `/api/reconciliation/imports/${String(summary.id)}`, headers: op })
    ).json() as {
      items: Array<{
        result: string;
        gateway_order_id: string;
        order_id: string | null;
        line: number | null;
        fee_amount: number | null;
      }>;
    };
    const exceptions = detail.items
      .filter((r) => r.result !== 'matched')
      .map((r) => [r.result, r.order_id ?? r.gateway_order_id]);
    expect(exceptions.sort()).toEqual([
      ['amount_mismatch', 'REC/7'],
      ['missing_at_gateway', 'REC/4'],
      ['missing_here', 'NEVER-SEEN-1'],
    ]);
    expect(detail.items.find((r) => r.result === 'missing_here')?.line).toBe(5);
    // Fee and net of matched rows are kept on the payment.
    expect(await e.services.store.transactions.findByOrderId('REC/2')).toMatchObject({
      feeAmount: 210,
      netAmount: 30_000 - 210,
    });

    const again = await upload(csv);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(summary);
    const list = (await e.app.inject({ method: 'GET', url: '/api/reconciliation/imports', headers: op })).json() as {
      items: unknown[];
    };
    expect(list.items).toHaveLength(1);

    const only = (
      await e.app.inject({
        method: 'GET',
        url: `/api/reconciliation/imports/${String(summary.id)}?result=missing_here`,
        headers: op,
      })
    ).json() as { items: unknown[] };
    expect(only.items).toHaveLength(1);
  });

  it("reads the withdrawal report's Refund Type and Transaction Split columns: a chargeback is its own result, a split share no amount mismatch", async () => {
    const w: Array<{ orderId: string; gatewayOrderId: string; transactionId: string; nominal: number }> = [];
    for (let i = 0; i < 4; i++) {
      const nominal = 10_000 * (i + 1);
      w.push({ orderId: `WD/${i}`, nominal, ...(await paidCharge(`WD/${i}`, nominal, 0)) });
    }
    const [plain, chargedBack, refunded, split] = w;
    const row = (
      p: (typeof w)[number] | undefined,
      status: string,
      amount: number,
      refundType: string,
      splitCells = ',,',
    ) =>
      `${p?.gatewayOrderId},${p?.transactionId},${status},${amount}.00,70,${when(0, 10)},${refundType},${splitCells}`;
    const csv = [
      'Order ID,Transaction ID,Transaction Status,Amount,Fee,Settlement Time,Refund Type,Transaction Type,Sender,Receiver',
      row(plain, 'settlement', 10_000, ''),
      row(chargedBack, 'refund', 20_000, 'Chargeback'),
      row(refunded, 'refund', 30_000, 'Normal Refund'),
      // One party's share of a split transaction: 12,000 of the 40,000 paid.
      row(split, 'settlement', 12_000, '', 'SPLIT,G100000001,G200000002'),
    ].join('\r\n');
    const res = await upload(csv);
    expect(res.statusCode).toBe(201);
    const summary = res.json() as Record<string, unknown>;
    expect(summary).toMatchObject({
      rows: 4,
      matched: 2,
      chargeback: 1,
      status_mismatch: 1,
      amount_mismatch: 0,
      missing_here: 0,
      missing_at_gateway: 0,
    });
    const detail = (
      await e.app.inject({ method: 'GET', url: `/api/reconciliation/imports/${String(summary.id)}`, headers: op })
    ).json() as { items: Array<{ result: string; order_id: string | null; detail: string | null }> };
    const results = Object.fromEntries(detail.items.map((r) => [r.order_id, r.result]));
    expect(results).toEqual({ 'WD/0': 'matched', 'WD/1': 'chargeback', 'WD/2': 'status_mismatch', 'WD/3': 'matched' });
    expect(detail.items.find((r) => r.result === 'chargeback')?.detail).toBe(
      "chargeback of 20000: paylink holds the payment as paid; the customer's bank took the money back",
    );
    // The chargeback row is listed under its own result, in both console languages.
    const filtered = (
      await e.app.inject({
        method: 'GET',
        url: `/api/reconciliation/imports/${String(summary.id)}?result=chargeback`,
        headers: op,
      })
    ).json() as { items: unknown[] };
    expect(filtered.items).toHaveLength(1);
    for (const [lang, word] of [
      ['en', 'chargeback'],
      ['id', 'Bank pelanggan menarik kembali dananya'],
    ] as const) {
      const page = await e.app.inject({
        url: `/console/reconciliation/${String(summary.id)}?lang=${lang}`,
        headers: op,
      });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(word);
    }

    const bad = await upload(
      ['Order ID,Transaction Status,Amount,Refund Type', `${plain?.gatewayOrderId},refund,1000.00,Maybe`].join('\r\n'),
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      detail: 'Line 2, column "Refund Type": "Maybe" is neither a chargeback nor a normal refund.',
    });
  });

  it('names the line and column of a malformed file (400) and keeps nothing of it', async () => {
    const bad = await upload('Order ID,Transaction Status,Amount\r\nA-1,settlement,1000.00\r\nA-2,settlement,12x\r\n');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      detail: expect.stringMatching(/^Line 3, column "Amount": "12x" is not an amount/),
    });
    const noColumn = await upload('Order,Status\r\nA-1,settlement\r\n');
    expect(noColumn.statusCode).toBe(400);
    expect(noColumn.json()).toMatchObject({
      detail: expect.stringMatching(/^Line 1: the header has no column for order_id/),
    });
    const quote = await upload('Order ID,Transaction Status,Amount\r\n"A-1,settlement,1000\r\n');
    expect(quote.statusCode).toBe(400);
    expect(quote.json()).toMatchObject({ detail: expect.stringMatching(/^Line \d/) });
    // A body in another type is not a report: 415, never a 500 (JSON `null` parses to nothing).
    for (const payload of ['null', '{"rows":[]}', '"Order ID,Amount"']) {
      const json = await e.app.inject({
        method: 'POST',
        url: '/api/reconciliation/imports',
        headers: { ...op, 'content-type': 'application/json' },
        payload,
      });
      expect(json.statusCode).toBe(415);
      expect(json.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', detail: expect.stringMatching(/text\/csv/) });
    }
    const none = await e.app.inject({ method: 'POST', url: '/api/reconciliation/imports', headers: op });
    expect(none.statusCode).toBe(400);
    const list = (await e.app.inject({ method: 'GET', url: '/api/reconciliation/imports', headers: op })).json() as {
      items: unknown[];
    };
    expect(list.items).toEqual([]);
  });

  it('over a real connection, the report streams in and is imported (201), then found again (200)', async () => {
    const paid = await paidCharge('REAL-1', 40_000, 1);
    const base = await e.app.listen({ host: '127.0.0.1', port: 0 });
    const csv = `Order ID,Transaction Status,Amount,Settlement Time\r\n${paid.gatewayOrderId},settlement,40000.00,${when(1, 10)}\r\nREAL-NEVER,settlement,1000,${when(1, 11)}\r\n`;
    const send = () =>
      fetch(`${base}/api/reconciliation/imports`, {
        method: 'POST',
        headers: { ...op, 'content-type': 'text/csv' },
        body: csv,
      });
    const first = await send();
    expect(first.status).toBe(201);
    expect(await first.json()).toMatchObject({ rows: 2, matched: 1, missing_here: 1 });
    expect((await send()).status).toBe(200);
  });

  it('reads other layouts through a column mapping', async () => {
    const { gatewayOrderId } = await paidCharge('REC-MAP', 15_000, 0);
    const res = await upload(
      `Kode;Status Transaksi;Jumlah\r\n${gatewayOrderId};settlement;15000\r\n`,
      `?columns=${encodeURIComponent('order_id:Kode,status:Status Transaksi,amount:Jumlah')}`,
    );
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ rows: 1, matched: 1 });
    expect((await upload('x', '?columns=nonsense:X')).statusCode).toBe(400);
  });
});
