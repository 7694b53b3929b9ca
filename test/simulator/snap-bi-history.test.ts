/**
 * paylink's BI-SNAP history client against the simulator over HTTP: bad input is refused with the
 * documented codes, the list is filtered by time range and type, and the detail carries the fee,
 * the refunds and a promo's original and discount amounts.
 */
import { generateKeyPairSync } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { SnapBiClient } from '../../src/gateway/snap-bi/client.js';
import { SnapBiHistory, HISTORY_LIST_PATH } from '../../src/gateway/snap-bi/history.js';
import { GatewayError } from '../../src/gateway/port.js';
import { call, oid, start } from './helpers.js';

const merchant = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const CLIENT = { clientId: 'client-history-1', clientSecret: 'secret-history-1', partnerId: 'partner-h' };

let sim: RunningSimulator;
let client: SnapBiClient;
let history: SnapBiHistory;
let n = 0;
const ext = () => `${Date.now()}${String(++n).padStart(6, '0')}`;
const list = (body: Record<string, unknown>) => client.call('history_list', HISTORY_LIST_PATH, body, ext());

beforeAll(async () => {
  sim = await start({ snapBi: { ...CLIENT, merchantPublicKey: merchant.publicKey } });
  client = new SnapBiClient({
    credentials: () =>
      Promise.resolve({
        baseUrl: sim.baseUrl,
        ...CLIENT,
        channelId: '95221',
        privateKey: merchant.privateKey,
      }),
    logger: pino({ level: 'silent' }),
    timeoutMs: 5_000,
  });
  history = new SnapBiHistory(client, () => Promise.resolve(true));
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

const qris = async (orderId: string, amount: number, metadata?: Record<string, unknown>) => {
  const c = await call(sim.baseUrl, 'POST', '/v2/charge', {
    body: {
      payment_type: 'qris',
      transaction_details: { order_id: orderId, gross_amount: amount },
      ...(metadata ? { metadata } : {}),
    },
  });
  expect(c.status).toBe(200);
  expect((await call(sim.baseUrl, 'POST', `/_sim/transactions/${orderId}/pay`, { auth: false })).status).toBe(200);
  return String(c.body.transaction_id);
};

describe('BI-SNAP transaction history', () => {
  it('refuses bad input with the documented codes', async () => {
    const from = '2026-11-26T00:00:00+07:00';
    const to = '2026-11-26T23:59:59+07:00';
    expect((await list({ toDateTime: to })).responseCode).toBe('4001202');
    expect((await list({ fromDateTime: 'yesterday', toDateTime: to })).responseCode).toBe('4001201');
    expect((await list({ fromDateTime: to, toDateTime: from })).responseCode).toBe('4001201');
    expect((await list({ fromDateTime: from, toDateTime: to, pageSize: 51 })).responseCode).toBe('4001201');
    expect((await list({ fromDateTime: from, toDateTime: to, pageNumber: 0 })).responseCode).toBe('4001201');
    expect(
      (await list({ fromDateTime: from, toDateTime: to, additionalInfo: { types: ['REFUND'] } })).responseCode,
    ).toBe('4001201');
    expect((await list({ fromDateTime: from, toDateTime: to, pageSize: 50 })).responseCode).toBe('2001200');
  });

  it('lists the paid transactions of a time range with their fee, and details one with its refund and promo', async () => {
    const before = new Date(Date.now() - 1000);
    const paid = oid('HP');
    const promo = oid('HPROMO');
    const refunded = oid('HR');
    const paidTx = await qris(paid, 10_000);
    await qris(promo, 9_000, { promo: { code: 'HEMAT', original_amount: 10_000, discount_amount: 1_000 } });
    await qris(refunded, 20_000);
    expect(
      (await call(sim.baseUrl, 'POST', `/v2/${refunded}/refund`, { body: { amount: 5_000, reason: 'one back' } }))
        .status,
    ).toBe(200);
    const pending = oid('HPEND');
    await call(sim.baseUrl, 'POST', '/v2/charge', {
      body: { payment_type: 'qris', transaction_details: { order_id: pending, gross_amount: 30_000 } },
    });
    const after = new Date(Date.now() + 1000);

    const rows = await history.list(before, after);
    const mine = rows.filter((r) => [paid, promo, refunded, pending].includes(r.orderId));
    expect(mine.map((r) => [r.orderId, r.status, r.amount, r.fee])).toEqual([
      [paid, 'settlement', 10_000, 70],
      [promo, 'settlement', 9_000, 63],
      [refunded, 'partial_refund', 20_000, 140],
    ]);
    expect(mine[0]).toMatchObject({ transactionId: paidTx, paymentType: 'qris', net: null });
    // Outside the range, and of another type: nothing.
    expect(await history.list(new Date(before.getTime() - 3_600_000), new Date(before.getTime() - 60_000))).toEqual([]);
    const withdrawals = await list({
      fromDateTime: before.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      toDateTime: after.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      additionalInfo: { types: ['WITHDRAWAL'] },
    });
    expect(withdrawals.body.detailData).toEqual([]);

    const detail = await history.detail(refunded);
    expect(detail?.row).toMatchObject({ orderId: refunded, status: 'partial_refund', fee: 140 });
    expect(detail?.refunds.map((r) => r.amount)).toEqual([5_000]);
    expect(detail?.promo).toBeNull();
    const withPromo = await history.detail(promo);
    expect(withPromo?.promo).toEqual({ code: 'HEMAT', originalAmount: 10_000, discountAmount: 1_000 });
    expect(withPromo?.row.originalAmount).toBe(10_000);
    expect(await history.detail(pending)).toBeUndefined();
    expect(await history.detail(paid, 'not-its-transaction-id')).toBeUndefined();
  });

  it('a listing longer than its page bound is refused whole', async () => {
    const start = new Date(Date.now() - 1000);
    for (let i = 0; i < 51; i++) await qris(oid(`HB${i}`), 1_000 + i);
    const bounded = new SnapBiHistory(client, () => Promise.resolve(true), { maxPages: 1 });
    const err: unknown = await bounded.list(start, new Date(Date.now() + 1000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).kind).toBe('bad_response');
    const all = await new SnapBiHistory(client, () => Promise.resolve(true)).list(start, new Date(Date.now() + 1000));
    // Two pages, each transaction once, numbered through.
    expect(all.filter((r) => r.orderId.startsWith('HB')).map((r) => r.amount)).toEqual(
      Array.from({ length: 51 }, (_, i) => 1_000 + i),
    );
    expect(all.map((r) => r.line)).toEqual(all.map((_, i) => i + 1));
    expect(new Set(all.map((r) => r.orderId)).size).toBe(all.length);
  });
});
