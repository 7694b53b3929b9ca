import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { midtransSignature, type RunningSimulator } from '../../simulator/index.js';
import {
  basic,
  call,
  chargeBody,
  KEY,
  notifications,
  oid,
  receiver,
  s,
  start,
  waitFor,
  type J,
  type Receiver,
} from './helpers.js';

/** The default merchant (KEY, G123456789) notifies the simulator-wide URL; B has its own; C has none. */
const B = { serverKey: 'SB-Mid-server-merchant-b', clientKey: 'SB-Mid-client-merchant-b', merchantId: 'G987654321' };
const C = { serverKey: 'SB-Mid-server-merchant-c', merchantId: 'G555000111' };
const DEFAULT_MID = 'G123456789';

let sim: RunningSimulator;
let wide: Receiver;
let rcvB: Receiver;
beforeAll(async () => {
  wide = await receiver();
  rcvB = await receiver();
  sim = await start({
    notificationUrl: wide.url,
    timeScale: 0.00002,
    merchants: [{ ...B, notificationUrl: rcvB.url }, C],
  });
});
afterAll(async () => {
  await sim.close();
  await wide.close();
  await rcvB.close();
});

/** A Core bank-transfer charge with a merchant's server key (the default merchant's when none). */
function charge(key: string, orderId: string, headers: Record<string, string> = {}): ReturnType<typeof call> {
  return call(sim.baseUrl, 'POST', '/v2/charge', { body: chargeBody(orderId), headers, auth: basic(key) });
}

const ctl = (path: string, body?: unknown, method = 'POST') => call(sim.baseUrl, method, path, { auth: false, body });

/** The notifications one receiver got for an order, once `n` have arrived. */
async function got(rcv: Receiver, orderId: string, n: number): Promise<J[]> {
  return waitFor(() => {
    const list = rcv.received.filter((r) => r.body.order_id === orderId).map((r) => r.body);
    return list.length >= n ? list : undefined;
  });
}

function signedWith(n: J, key: string): boolean {
  return n.signature_key === midtransSignature(s(n.order_id), s(n.status_code), s(n.gross_amount), key);
}

describe('several merchants', () => {
  it('the same order id in two merchants is two transactions, each paid, signed with its own key, MID and URL', async () => {
    const id = oid('MM');
    const a = await charge(KEY, id);
    const b = await charge(B.serverKey, id);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toMatchObject({ status_code: '201', merchant_id: DEFAULT_MID });
    expect(b.body).toMatchObject({ status_code: '201', merchant_id: B.merchantId });
    expect(b.body.transaction_id).not.toBe(a.body.transaction_id);

    const ambiguous = await ctl(`/_sim/transactions/${id}/pay`);
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.error).toBe('ambiguous');
    expect(ambiguous.body.message).toContain(DEFAULT_MID);
    expect(ambiguous.body.message).toContain(B.merchantId);
    const paidA = await ctl(`/_sim/transactions/${id}/pay?merchant_id=${DEFAULT_MID}`);
    const paidB = await ctl(`/_sim/transactions/${id}/pay?merchant_id=${B.merchantId}`);
    expect(paidA.body).toMatchObject({ transaction_id: a.body.transaction_id, transaction_status: 'settlement' });
    expect(paidB.body).toMatchObject({ transaction_id: b.body.transaction_id, transaction_status: 'settlement' });
    expect(signedWith(paidB.body, B.serverKey)).toBe(true);

    const toWide = await got(wide, id, 2);
    const toB = await got(rcvB, id, 2);
    expect(toWide.map((n) => [n.transaction_status, n.merchant_id, n.transaction_id])).toEqual([
      ['pending', DEFAULT_MID, a.body.transaction_id],
      ['settlement', DEFAULT_MID, a.body.transaction_id],
    ]);
    expect(toB.map((n) => [n.transaction_status, n.merchant_id, n.transaction_id])).toEqual([
      ['pending', B.merchantId, b.body.transaction_id],
      ['settlement', B.merchantId, b.body.transaction_id],
    ]);
    for (const n of toWide) expect([signedWith(n, KEY), signedWith(n, B.serverKey)]).toEqual([true, false]);
    for (const n of toB) expect([signedWith(n, B.serverKey), signedWith(n, KEY)]).toEqual([true, false]);

    const statusB = await call(sim.baseUrl, 'GET', `/v2/${id}/status`, { auth: basic(B.serverKey) });
    expect(statusB.body).toMatchObject({ transaction_id: b.body.transaction_id, merchant_id: B.merchantId });
    const records = await notifications(sim.baseUrl, `?order_id=${id}&merchant_id=${B.merchantId}`);
    expect(records.map((r) => [r.merchant_id, r.url])).toEqual([
      [B.merchantId, rcvB.url],
      [B.merchantId, rcvB.url],
    ]);
  });

  it('a merchant without a URL notifies the simulator-wide one; X-Override-Notification replaces the merchant URL', async () => {
    const plain = oid('MC');
    await charge(C.serverKey, plain);
    const [n] = await got(wide, plain, 1);
    expect(n?.merchant_id).toBe(C.merchantId);
    expect(n && signedWith(n, C.serverKey)).toBe(true);

    const over = await receiver();
    try {
      const id = oid('MO');
      await charge(B.serverKey, id, { 'x-override-notification': over.url });
      const [o] = await got(over, id, 1);
      expect(o).toMatchObject({ merchant_id: B.merchantId, transaction_status: 'pending' });
      expect(o && signedWith(o, B.serverKey)).toBe(true);
      // No http(s) URL in the header: it is ignored, as the gateway ignores it, and the merchant URL stays.
      const bad = oid('MO');
      await charge(B.serverKey, bad, { 'x-override-notification': 'ftp://x/y, not a url' });
      await got(rcvB, bad, 1);
      const records = await notifications(sim.baseUrl, `?merchant_id=${B.merchantId}`);
      expect(records.filter((r) => r.order_id === id).map((r) => r.url)).toEqual([over.url]);
      expect(over.received.map((r) => r.body.order_id)).toEqual([id]);
      expect(rcvB.received.some((r) => r.body.order_id === id)).toBe(false);
    } finally {
      await over.close();
    }
  });

  it('an unknown key is refused (401) on every API; a merchant sees only its own transactions', async () => {
    const nobody = 'SB-Mid-server-nobody';
    const auth = basic(nobody);
    const core = await charge(nobody, oid());
    expect([core.status, core.body.status_code]).toEqual([401, '401']);
    const snap = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      auth,
      body: { transaction_details: { order_id: oid(), gross_amount: 1000 } },
    });
    expect(snap.status).toBe(401);
    const link = await call(sim.baseUrl, 'POST', '/v1/payment-links', {
      auth,
      body: { transaction_details: { order_id: oid(), gross_amount: 1000 } },
    });
    expect([link.status, link.body.error_messages]).toEqual([401, 'Access denied due to unauthorized request']);
    const onlyB = oid('MB');
    await charge(B.serverKey, onlyB);
    expect((await call(sim.baseUrl, 'GET', `/v2/${onlyB}/status`)).status).toBe(404);
    expect((await call(sim.baseUrl, 'GET', `/v2/${onlyB}/status`, { auth: basic(B.serverKey) })).status).toBe(200);
    const card = '&card_number=4811111111111114&card_exp_month=12&card_exp_year=2040&card_cvv=123';
    const token = (clientKey: string) =>
      call(sim.baseUrl, 'GET', `/v2/token?client_key=${clientKey}${card}`, { auth: false });
    expect((await token(B.clientKey)).status).toBe(200);
    expect((await token('SB-Mid-client-nobody')).status).toBe(401);
  });

  it("an Idempotency-Key is the merchant's own: the same key from two merchants makes two transactions", async () => {
    const id = oid('MI');
    const key = `idem-${id}`;
    const a = await charge(KEY, id, { 'idempotency-key': key });
    const b = await charge(B.serverKey, id, { 'idempotency-key': key });
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.merchant_id).toBe(B.merchantId);
    expect(b.body.transaction_id).not.toBe(a.body.transaction_id);
    const again = await charge(B.serverKey, id, { 'idempotency-key': key });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.transaction_id).toBe(b.body.transaction_id);
  });
});
