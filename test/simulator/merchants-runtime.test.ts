/**
 * Merchants taken while the simulator runs (what paylink's simulator mode does for each account):
 * served at once with a ledger and notification URL of their own, refused when a key or MID is
 * another merchant's, updated in place under the same name, and removed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { midtransSignature, type RunningSimulator } from '../../simulator/index.js';
import { basic, call, chargeBody, KEY, oid, receiver, s, start, waitFor, type J, type Receiver } from './helpers.js';

const STARTED = { serverKey: 'SB-Mid-server-started-b', merchantId: 'G987654321' };
const ADDED = { serverKey: 'SB-Mid-server-added-x', merchantId: 'GX00000001' };

let sim: RunningSimulator;
let wide: Receiver;
let rcvX: Receiver;
beforeAll(async () => {
  wide = await receiver();
  rcvX = await receiver();
  sim = await start({ notificationUrl: wide.url, timeScale: 0.00002, merchants: [STARTED] });
});
afterAll(async () => {
  await sim.close();
  await wide.close();
  await rcvX.close();
});

const charge = (key: string, orderId: string) =>
  call(sim.baseUrl, 'POST', '/v2/charge', { body: chargeBody(orderId), auth: basic(key) });
const pay = (orderId: string, mid: string) =>
  call(sim.baseUrl, 'POST', `/_sim/transactions/${orderId}/pay?merchant_id=${mid}`, {
    auth: false,
    body: { payment_type: 'bank_transfer' },
  });

describe('merchants added while running', () => {
  it('a key or MID another merchant uses is refused, naming the field and the other merchant, and changes nothing', () => {
    expect(sim.merchantProblems('x', { serverKey: KEY, merchantId: 'GX00000009' })).toEqual([
      'x: server_key is already used by the default merchant',
    ]);
    expect(sim.merchantProblems('x', { serverKey: 'SB-other', merchantId: STARTED.merchantId })).toEqual([
      'x: merchant_id is already used by merchants[0]',
    ]);
    expect(sim.merchantProblems('x', { serverKey: 'SB-other', merchantId: 'bad mid' })).toHaveLength(1);
    expect(() => sim.upsertMerchant('x', { serverKey: STARTED.serverKey, merchantId: 'GX00000009' })).toThrow(
      /x: server_key is already used by merchants\[0\]/,
    );
    expect(sim.removeMerchant('x')).toBe(false);
  });

  it('is served at once with its own ledger, signing with its key and notifying its own URL', async () => {
    sim.upsertMerchant('x', { ...ADDED, notificationUrl: rcvX.url });
    const id = oid('RT');
    expect((await charge(ADDED.serverKey, id)).status).toBe(200);
    // The same order id is free at another merchant.
    expect((await charge(KEY, id)).status).toBe(200);
    expect((await pay(id, ADDED.merchantId)).status).toBe(200);
    const note = await waitFor(() =>
      rcvX.received.map((r) => r.body).find((b: J) => b.order_id === id && b.transaction_status === 'settlement'),
    );
    expect(note.merchant_id).toBe(ADDED.merchantId);
    expect(note.signature_key).toBe(
      midtransSignature(s(note.order_id), s(note.status_code), s(note.gross_amount), ADDED.serverKey),
    );
    // A second merchant may not take its MID; the same name again may change its own settings.
    expect(sim.merchantProblems('y', { serverKey: 'SB-y', merchantId: ADDED.merchantId })).toEqual([
      'y: merchant_id is already used by x',
    ]);
    expect(sim.merchantProblems('x', { ...ADDED, notificationUrl: rcvX.url })).toEqual([]);
  });

  it('the same name replaces its keys and keeps its ledger; removed, its key is refused', async () => {
    const id = oid('RT');
    expect((await charge(ADDED.serverKey, id)).status).toBe(200);
    sim.upsertMerchant('x', { serverKey: 'SB-Mid-server-added-x2', merchantId: ADDED.merchantId });
    expect((await charge(ADDED.serverKey, oid('RT'))).status).toBe(401);
    const status = await call(sim.baseUrl, 'GET', `/v2/${id}/status`, { auth: basic('SB-Mid-server-added-x2') });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ order_id: id, merchant_id: ADDED.merchantId });
    expect(sim.removeMerchant('x')).toBe(true);
    expect((await charge('SB-Mid-server-added-x2', oid('RT'))).status).toBe(401);
  });
});
