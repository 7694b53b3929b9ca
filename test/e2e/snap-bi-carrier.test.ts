/**
 * Which API carried a payment, over HTTP against the simulator: a charge made through BI-SNAP is
 * recorded as `snap_bi` (a legacy one as `legacy`) and the ERP's answer does not change; once its
 * method is taken off BI-SNAP, the payment is still checked, through the legacy API with
 * `transaction-source: SNAP_API`. A BI-SNAP notification leaves a notification row; one signed for
 * the default account and posted to another account's path is refused there.
 */
import { createHash, createSign, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { basicAuth } from '../helpers/services.js';

const KEY = 'erp-key-carrier-0123456789';
const pair = () =>
  generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
const merchant = pair();
const gatewayKeys = pair();
const otherGatewayKeys = pair();
const CLIENT = { clientId: 'carrier-client', clientSecret: 'carrier-secret', partnerId: 'carrier-partner' };
const op = { authorization: basicAuth(), 'content-type': 'application/json' };

describe.each(DATABASE_KINDS)('the API that carried a payment (%s)', (kind) => {
  let e: E2EContext;

  beforeAll(async () => {
    e = await startE2E(kind, {
      listen: true,
      serviceOptions: { runtimeConfigCacheMs: 0 },
      env: {
        API_KEYS: KEY,
        MIDTRANS_SNAP_BI_CLIENT_ID: CLIENT.clientId,
        MIDTRANS_SNAP_BI_CLIENT_SECRET: CLIENT.clientSecret,
        MIDTRANS_SNAP_BI_PARTNER_ID: CLIENT.partnerId,
        MIDTRANS_SNAP_BI_CHANNEL_ID: '95221',
        MIDTRANS_SNAP_BI_PRIVATE_KEY: merchant.privateKey,
        MIDTRANS_SNAP_BI_PUBLIC_KEY: gatewayKeys.publicKey,
      },
      simulator: {
        snapBi: { ...CLIENT, merchantPublicKey: merchant.publicKey, privateKey: gatewayKeys.privateKey },
      },
    });
    e.simulator.setSnapBiNotificationUrl(`${e.url ?? ''}/webhook/snap-bi`);
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: op,
      payload: { gateway: { snap_bi: { methods: ['bank_transfer', 'gopay'] } } },
    });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(async () => e.close());

  const charge = async (payload: Record<string, unknown>) => {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      headers: { authorization: `Bearer ${KEY}` },
      payload,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as Record<string, unknown> & { gateway_order_id: string };
  };
  const stored = async (orderId: string) => {
    const tx = await e.services.store.transactions.findByOrderId(orderId);
    if (!tx) throw new Error(`no record of ${orderId}`);
    return tx;
  };

  it('a BI-SNAP charge is recorded as snap_bi, a legacy one as legacy; the ERP answer is unchanged', async () => {
    const va = await charge({
      order_id: `CAR-VA-${kind}`,
      nominal: 60_000,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bca' },
    });
    const legacy = await charge({
      order_id: `CAR-CS-${kind}`,
      nominal: 60_000,
      payment_type: 'cstore',
      cstore: { store: 'alfamart' },
    });
    expect((await stored(`CAR-VA-${kind}`)).carrier).toBe('snap_bi');
    expect((await stored(`CAR-CS-${kind}`)).carrier).toBe('legacy');
    for (const answer of [va, legacy]) expect(JSON.stringify(answer)).not.toMatch(/carrier|snap_bi/);
    const status = await e.app.inject({
      method: 'GET',
      url: `/api/payments/${encodeURIComponent(`CAR-VA-${kind}`)}/status`,
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(status.statusCode, status.body).toBe(200);
    expect(status.body).not.toMatch(/carrier|snap_bi/);
  });

  it('off BI-SNAP, a BI-SNAP payment is checked and refunded through the legacy API with transaction-source: SNAP_API', async () => {
    const d = await charge({ order_id: `CAR-GP-${kind}`, nominal: 40_000, payment_type: 'gopay' });
    expect((await stored(`CAR-GP-${kind}`)).carrier).toBe('snap_bi');
    // The gateway answers the legacy status call only with the header: without it, an unknown order.
    expect((await e.sim.post(`/_sim/transactions/${d.gateway_order_id}/pay`)).status).toBe(200);
    expect((await e.sim.gateway('GET', `/v2/${d.gateway_order_id}/status`)).status).toBe(404);
    const off = await e.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: op,
      payload: { gateway: { snap_bi: { methods: ['bank_transfer'] } } },
    });
    expect(off.statusCode, off.body).toBe(200);
    const status = await e.app.inject({
      method: 'GET',
      url: `/api/payments/${encodeURIComponent(`CAR-GP-${kind}`)}/status`,
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json()).toMatchObject({ status: 'paid' });
    const refund = await e.app.inject({
      method: 'POST',
      url: `/api/payments/${encodeURIComponent(`CAR-GP-${kind}`)}/refund`,
      headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': `car-rf-${kind}` },
      payload: { amount: 15_000 },
    });
    expect(refund.statusCode, refund.body).toBe(200);
    expect((await stored(`CAR-GP-${kind}`)).refundedAmount).toBe(15_000);
  });

  it('off BI-SNAP, ending a pending BI-SNAP payment cancels it through the legacy API (it documents no expire for one)', async () => {
    const on = await e.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: op,
      payload: { gateway: { snap_bi: { methods: ['bank_transfer', 'shopeepay'] } } },
    });
    expect(on.statusCode, on.body).toBe(200);
    const d = await charge({ order_id: `CAR-SP-${kind}`, nominal: 20_000, payment_type: 'shopeepay' });
    expect((await stored(`CAR-SP-${kind}`)).carrier).toBe('snap_bi');
    const off = await e.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: op,
      payload: { gateway: { snap_bi: { methods: ['bank_transfer'] } } },
    });
    expect(off.statusCode, off.body).toBe(200);
    const expired = await e.app.inject({
      method: 'POST',
      url: `/api/payments/${encodeURIComponent(`CAR-SP-${kind}`)}/expire`,
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(expired.statusCode, expired.body).toBe(200);
    expect((await e.sim.gateway('GET', `/v2/${d.gateway_order_id}/status`)).status).toBe(404);
    expect((await stored(`CAR-SP-${kind}`)).transactionStatus).toBe('cancel');
  });

  const sign = (privateKey: string, path: string, body: string, ts: string) =>
    createSign('RSA-SHA256')
      .update(`POST:${path}:${createHash('sha256').update(body).digest('hex')}:${ts}`)
      .sign(privateKey, 'base64');
  const notify = (url: string, body: string, signature: string, ts: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-timestamp': ts, 'x-signature': signature },
      body,
    });

  it('a BI-SNAP notification leaves a notification row with what became of it', async () => {
    const va = await charge({
      order_id: `CAR-NT-${kind}`,
      nominal: 25_000,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bni' },
    });
    expect((await e.sim.post(`/_sim/transactions/${va.gateway_order_id}/pay`)).status).toBe(200);
    const deadline = Date.now() + 10_000;
    let rows = await e.services.store.notifications.listForOrder(va.gateway_order_id);
    while (!rows.some((r) => r.source === 'webhook') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      rows = await e.services.store.notifications.listForOrder(va.gateway_order_id);
    }
    const tx = await stored(`CAR-NT-${kind}`);
    expect(tx.status).toBe('paid');
    const row = rows.find((r) => r.source === 'webhook');
    expect(row).toMatchObject({
      transactionRef: tx.id,
      transactionStatus: 'settlement',
      statusCode: '00',
      result: expect.stringMatching(/^(applied|duplicate)$/),
    });
    expect(JSON.parse(row?.payload ?? '{}')).toMatchObject({ trxId: va.gateway_order_id });
  });

  it("the per-account path reaches that account only: the default account's signature is refused on another's", async () => {
    const created = await e.app.inject({
      method: 'POST',
      url: '/api/accounts',
      headers: op,
      payload: {
        id: 'toko-b',
        config: {
          gateway: {
            mode: 'simulator',
            server_key: 'SB-Mid-server-carrier-b-0001',
            merchant_id: 'G000000777',
            snap_bi: { public_key: otherGatewayKeys.publicKey },
          },
        },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const qr = `CAR-QR-${kind}-unknown`;
    const path = '/v1.0/qr/qr-mpm-notify';
    const body = JSON.stringify({
      originalReferenceNo: 'ref-b-1',
      originalPartnerReferenceNo: qr,
      latestTransactionStatus: '00',
      amount: { value: '10000.00', currency: 'IDR' },
    });
    const ts = '2026-11-27T10:00:00+07:00';
    const base = e.url ?? '';
    const forA = sign(gatewayKeys.privateKey, path, body, ts);
    const forB = sign(otherGatewayKeys.privateKey, path, body, ts);
    const b = e.services.store.forAccount('toko-b');

    expect((await notify(`${base}/webhook/snap-bi/toko-b${path}`, body, forA, ts)).status).toBe(401);
    expect(await b.notifications.listForOrder(qr)).toEqual([]);
    expect((await notify(`${base}/webhook/snap-bi${path}`, body, forB, ts)).status).toBe(401);

    const accepted = await notify(`${base}/webhook/snap-bi/toko-b${path}`, body, forB, ts);
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toEqual({ responseCode: '2005200', responseMessage: 'Successful' });
    expect(await b.notifications.listForOrder(qr)).toEqual([
      expect.objectContaining({ account: 'toko-b', result: 'ignored', reason: 'unknown order' }),
    ]);
    expect(await e.services.store.notifications.listForOrder(qr)).toEqual([]);
  });
});
