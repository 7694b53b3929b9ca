/**
 * BI-SNAP end to end: with bank_transfer and qris routed through BI-SNAP, a VA and a QRIS payment
 * made through /api/charge and paid on the simulator reach a real ERP receiver as the same
 * payment.status_changed event a legacy payment produces; a notification whose body differs by one
 * whitespace byte from what was signed is refused and writes nothing.
 */
import { createHash, createSign, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { basicAuth } from '../helpers/services.js';

const KEY = 'erp-key-snapbi-0123456789';
const pair = () =>
  generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
const merchant = pair();
const gatewayKeys = pair();
const CLIENT = { clientId: 'e2e-snapbi-client', clientSecret: 'e2e-snapbi-secret', partnerId: 'e2e-partner' };

describe.each(DATABASE_KINDS)('BI-SNAP payments reach the ERP like legacy ones (%s)', (kind) => {
  let e: E2EContext;
  let erp: ErpReceiver;

  beforeAll(async () => {
    erp = await startErpReceiver();
    e = await startE2E(kind, {
      listen: true,
      serviceOptions: { runtimeConfigCacheMs: 0 },
      env: {
        API_KEYS: KEY,
        ERP_NOTIFY_URL: erp.url,
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
    e.services.outbox.start();
    e.simulator.setSnapBiNotificationUrl(`${e.url ?? ''}/webhook/snap-bi`);
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { authorization: basicAuth(), 'content-type': 'application/json' },
      payload: { gateway: { snap_bi: { methods: ['bank_transfer', 'qris'] } } },
    });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(async () => {
    await e.close();
    await erp.close();
  });

  const charge = async (payload: Record<string, unknown>) => {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      headers: { authorization: `Bearer ${KEY}` },
      payload,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { gateway_order_id: string };
  };
  const paidEvent = async (orderId: string) => {
    await erp.waitFor(
      (r) => r.deliveries.some((d) => d.json?.order_id === orderId && d.json.status === 'paid'),
      15_000,
    );
    return erp.deliveries.find((d) => d.json?.order_id === orderId && d.json.status === 'paid')?.json;
  };

  it('a VA and a QRIS payment through BI-SNAP arrive as payment.status_changed paid', async () => {
    const va = await charge({
      order_id: `SNAPBI-VA-${kind}`,
      nominal: 75_000,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bca' },
    });
    const qr = await charge({ order_id: `SNAPBI-QR-${kind}`, nominal: 42_000, payment_type: 'qris' });
    for (const id of [va.gateway_order_id, qr.gateway_order_id])
      expect((await e.sim.post(`/_sim/transactions/${id}/pay`)).status).toBe(200);
    const vaEvent = await paidEvent(`SNAPBI-VA-${kind}`);
    expect(vaEvent).toMatchObject({
      type: 'payment.status_changed',
      order_id: `SNAPBI-VA-${kind}`,
      gateway_order_id: va.gateway_order_id,
      status: 'paid',
      transaction_status: 'settlement',
      payment_type: 'bank_transfer',
      gross_amount: 75_000,
    });
    expect(await paidEvent(`SNAPBI-QR-${kind}`)).toMatchObject({
      status: 'paid',
      payment_type: 'qris',
      gross_amount: 42_000,
    });
    const notes = (await e.sim.get('/_sim/snap-bi/notifications')).body as {
      notifications: Array<{ outcome: string; path: string }>;
    };
    expect(notes.notifications.filter((n) => n.outcome === 'delivered').map((n) => n.path)).toEqual(
      expect.arrayContaining(['/v1.0/transfer-va/payment', '/v1.0/qr/qr-mpm-notify']),
    );
  });

  it('a notification with one whitespace byte changed is refused and writes nothing', async () => {
    const qr = await charge({ order_id: `SNAPBI-WS-${kind}`, nominal: 10_000, payment_type: 'qris' });
    const body = JSON.stringify({
      originalReferenceNo: 'ref-1',
      originalPartnerReferenceNo: qr.gateway_order_id,
      latestTransactionStatus: '00',
      transactionStatusDesc: 'SUCCESS',
      amount: { value: '10000.00', currency: 'IDR' },
    });
    const ts = '2026-11-27T10:00:00+07:00';
    const path = '/v1.0/qr/qr-mpm-notify';
    const signature = createSign('RSA-SHA256')
      .update(`POST:${path}:${createHash('sha256').update(body).digest('hex')}:${ts}`)
      .sign(gatewayKeys.privateKey, 'base64');
    const post = (raw: string) =>
      fetch(`${e.url ?? ''}/webhook/snap-bi${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-timestamp': ts, 'x-signature': signature },
        body: raw,
      });
    const before = erp.deliveries.length;
    const tampered = await post(body.replace('"00",', '"00", '));
    expect(tampered.status).toBe(401);
    expect((await e.services.store.transactions.findByOrderId(`SNAPBI-WS-${kind}`))?.status).toBe('pending');
    const genuine = await post(body);
    expect(genuine.status).toBe(200);
    expect(await genuine.json()).toEqual({ responseCode: '2005200', responseMessage: 'Successful' });
    // Signed but not paid at the gateway: the status API says pending, so nothing changes either.
    expect((await e.services.store.transactions.findByOrderId(`SNAPBI-WS-${kind}`))?.status).toBe('pending');
    expect(
      erp.deliveries.slice(before).filter((d) => d.json?.order_id === `SNAPBI-WS-${kind}` && d.json.status === 'paid'),
    ).toEqual([]);
  });
});
