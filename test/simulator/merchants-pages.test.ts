import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { midtransSignature, type RunningSimulator } from '../../simulator/index.js';
import { arr, basic, call, KEY, oid, receiver, s, start, waitFor, type J, type Receiver } from './helpers.js';

type Midtrans = typeof import('midtrans-client');
type ApiConfigClass = typeof import('midtrans-client/lib/apiConfig');
const require = createRequire(import.meta.url);
const midtrans = require('midtrans-client') as Midtrans;
const ApiConfig = require('midtrans-client/lib/apiConfig') as ApiConfigClass;

const B = { serverKey: 'SB-Mid-server-pages-b', merchantId: 'G200000002' };
const DEFAULT_MID = 'G123456789';

let sim: RunningSimulator;
let wide: Receiver;
let rcvB: Receiver;
let saved: { core: string; snap: string };
beforeAll(async () => {
  wide = await receiver();
  rcvB = await receiver();
  sim = await start({ notificationUrl: wide.url, merchants: [{ ...B, notificationUrl: rcvB.url }] });
  saved = { core: ApiConfig.CORE_SANDBOX_BASE_URL, snap: ApiConfig.SNAP_SANDBOX_BASE_URL };
  ApiConfig.CORE_SANDBOX_BASE_URL = sim.baseUrl;
  ApiConfig.SNAP_SANDBOX_BASE_URL = `${sim.baseUrl}/snap/v1`;
});
afterAll(async () => {
  ApiConfig.CORE_SANDBOX_BASE_URL = saved.core;
  ApiConfig.SNAP_SANDBOX_BASE_URL = saved.snap;
  await sim.close();
  await wide.close();
  await rcvB.close();
});

const ctl = (path: string, body?: unknown, method = 'POST') => call(sim.baseUrl, method, path, { auth: false, body });

function newLink(key: string, orderId: string, plid?: string): ReturnType<typeof call> {
  const td: J = { order_id: orderId, gross_amount: 25000 };
  if (plid !== undefined) td.payment_link_id = plid;
  return call(sim.baseUrl, 'POST', '/v1/payment-links', { auth: basic(key), body: { transaction_details: td } });
}

async function post(url: string, form: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body: new URLSearchParams(form), redirect: 'manual' });
}

describe('pages and links of several merchants', () => {
  it("a link's hosted page is its merchant's: its MID in the page, its purchase notified with its key to its URL", async () => {
    const id = oid('PL');
    const plid = `pl-${id.toLowerCase()}`;
    const mine = await newLink(KEY, id);
    const theirs = await newLink(B.serverKey, id, plid);
    expect([mine.status, theirs.status]).toEqual([200, 200]);
    // The page URL names no merchant: a link id taken by one merchant is taken for all.
    const taken = await newLink(KEY, oid('PL'), plid);
    expect([taken.status, taken.body.error_messages]).toEqual([400, [`This Payment Link ID '${plid}' has been taken`]]);
    const details = await call(sim.baseUrl, 'GET', `/v1/payment-links/${id}`, { auth: basic(B.serverKey) });
    expect(details.body).toMatchObject({ merchant_id: B.merchantId, payment_link_id: plid });
    const url = s(theirs.body.payment_url);
    const page = await (await fetch(url)).text();
    expect(page).toContain(`Merchant ${B.merchantId}`);
    expect(page).not.toContain(DEFAULT_MID);
    const chosen = await post(url, { method: 'bca_va' });
    const instructions = new URL(s(chosen.headers.get('location')), url).toString();
    expect(await (await fetch(instructions)).text()).toContain(`Merchant ${B.merchantId}`);
    expect((await post(`${instructions}/pay`)).status).toBe(303);
    const paid = await waitFor(() => {
      const list = rcvB.received.filter((r) => s(r.body.order_id).startsWith(`${id}-`));
      return list.length >= 2 ? list.map((r) => r.body) : undefined;
    });
    expect(paid.map((n) => [n.transaction_status, n.merchant_id])).toEqual([
      ['pending', B.merchantId],
      ['settlement', B.merchantId],
    ]);
    for (const n of paid)
      expect(n.signature_key).toBe(midtransSignature(s(n.order_id), s(n.status_code), s(n.gross_amount), B.serverKey));
    expect(wide.received.some((r) => s(r.body.order_id).startsWith(id))).toBe(false);
    const mineNow = await call(sim.baseUrl, 'GET', `/v1/payment-links/${id}`);
    expect(mineNow.body).toMatchObject({ merchant_id: DEFAULT_MID, purchases: [] });
  });

  it('Snap: the same order id in two merchants; the control API names the merchant or answers 409', async () => {
    const id = oid('SN');
    const body = { transaction_details: { order_id: id, gross_amount: 12000 } };
    const a = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', { body });
    const b = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', { auth: basic(B.serverKey), body });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(await (await fetch(s(b.body.redirect_url))).text()).toContain(`Merchant ${B.merchantId}`);
    expect(await (await fetch(s(a.body.redirect_url))).text()).toContain(`Merchant ${DEFAULT_MID}`);
    expect((await ctl(`/_sim/transactions/${id}/pay`)).status).toBe(409);
    expect((await ctl(`/_sim/transactions/${id}`, undefined, 'GET')).status).toBe(404);
    // A Snap token is one merchant's only, so naming it is never ambiguous.
    const byToken = await ctl(`/_sim/transactions/${s(b.body.token)}/pay`);
    expect(byToken.body).toMatchObject({ order_id: id, merchant_id: B.merchantId, transaction_status: 'settlement' });
    // Only B has a transaction for the order id: its lookup is not ambiguous.
    expect((await ctl(`/_sim/transactions/${id}`, undefined, 'GET')).body.merchant_id).toBe(B.merchantId);
    expect((await ctl(`/_sim/transactions/${id}/pay?merchant_id=${DEFAULT_MID}`)).body).toMatchObject({
      merchant_id: DEFAULT_MID,
      transaction_status: 'settlement',
    });
    const both = await ctl(`/_sim/transactions/${id}`, undefined, 'GET');
    expect([both.status, both.body.error]).toEqual([409, 'ambiguous']);
    const one = await ctl(`/_sim/transactions/${id}?merchant_id=${B.merchantId}`, undefined, 'GET');
    expect(one.body).toMatchObject({ merchant_id: B.merchantId, transaction_status: 'settlement' });
    const listB = await ctl(`/_sim/transactions?merchant_id=${B.merchantId}`, undefined, 'GET');
    expect(arr(listB.body.transactions).every((t) => t.merchant_id === B.merchantId)).toBe(true);
    expect((await ctl(`/_sim/transactions/${id}/pay?merchant_id=G000000000`)).status).toBe(404);
    const requests = await ctl(`/_sim/requests?merchant_id=${B.merchantId}&path=/snap/`, undefined, 'GET');
    expect(arr(requests.body.requests).length).toBeGreaterThan(0);
    expect(arr(requests.body.requests).every((r) => r.merchant_id === B.merchantId)).toBe(true);
  });

  it('GET /_sim/config lists the merchants by MID and notification URL, never their keys', async () => {
    const r = await ctl('/_sim/config', undefined, 'GET');
    expect(r.body.merchants).toEqual([
      { merchant_id: DEFAULT_MID, notification_url: wide.url },
      { merchant_id: B.merchantId, notification_url: rcvB.url },
    ]);
    expect(r.text).not.toContain(B.serverKey);
    expect(r.text).not.toContain(KEY);
  });

  it('the official midtrans-client works with a second merchant', async () => {
    const core = new midtrans.CoreApi({ isProduction: false, serverKey: B.serverKey, clientKey: 'SB-Mid-client-x' });
    const id = oid('MCB');
    const charged = await core.charge({
      payment_type: 'bank_transfer',
      transaction_details: { order_id: id, gross_amount: 44000 },
      bank_transfer: { bank: 'bca' },
    });
    expect(charged).toMatchObject({ status_code: '201', merchant_id: B.merchantId });
    const status = await core.transaction.status(id);
    expect(status).toMatchObject({ order_id: id, merchant_id: B.merchantId });
    const other = new midtrans.CoreApi({ isProduction: false, serverKey: KEY, clientKey: 'SB-Mid-client-x' });
    await expect(other.transaction.status(id)).rejects.toThrow();
  });
});
