/** The official midtrans-client SnapBi (1.4.3) driving the simulator's BI-SNAP API, and the simulator's own checks. */
import { createVerify, createHash, generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { call, oid, receiver, start, waitFor, type J, type Receiver } from './helpers.js';

interface SnapBiBuilder {
  withBody(b: object): SnapBiBuilder;
  withAccessToken(t: string): SnapBiBuilder;
  withTimeout(ms: number): SnapBiBuilder;
  createPayment(externalId: string): Promise<J>;
  getStatus(externalId: string): Promise<J>;
  cancel(externalId: string): Promise<J>;
  refund(externalId: string): Promise<J>;
  getAccessToken(): Promise<J>;
}
interface SnapBiClass {
  va(): SnapBiBuilder;
  directDebit(): SnapBiBuilder;
  qris(): SnapBiBuilder;
}
interface SnapBiConfigClass {
  SNAP_BI_SANDBOX_BASE_URL: string;
  snapBiClientId: string | null;
  snapBiPrivateKey: string | null;
  snapBiClientSecret: string | null;
  snapBiPartnerId: string | null;
  snapBiChannelId: string | null;
}

const require = createRequire(import.meta.url);
const { SnapBi, SnapBiConfig } = require('midtrans-client') as { SnapBi: SnapBiClass; SnapBiConfig: SnapBiConfigClass };

const merchant = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const CLIENT = { clientId: 'client-snapbi-1', clientSecret: 'secret-snapbi-1', partnerId: 'partner-1' };

let sim: RunningSimulator;
let hook: Receiver;
let savedBase: string;

beforeAll(async () => {
  hook = await receiver();
  sim = await start({
    snapBi: { ...CLIENT, merchantPublicKey: merchant.publicKey, notificationUrl: hook.url.replace(/\/hook$/, '/snap') },
  });
  savedBase = SnapBiConfig.SNAP_BI_SANDBOX_BASE_URL;
  Object.assign(SnapBiConfig, {
    SNAP_BI_SANDBOX_BASE_URL: sim.baseUrl,
    snapBiClientId: CLIENT.clientId,
    snapBiPrivateKey: merchant.privateKey,
    snapBiClientSecret: CLIENT.clientSecret,
    snapBiPartnerId: CLIENT.partnerId,
    snapBiChannelId: '12345',
  });
});
afterAll(async () => {
  SnapBiConfig.SNAP_BI_SANDBOX_BASE_URL = savedBase;
  await sim.close();
  await hook.close();
});

const vaBody = (trxId: string, value = '10000.00') => ({
  partnerServiceId: '   70012',
  customerNo: trxId.slice(-8),
  virtualAccountNo: `   70012${trxId.slice(-8)}`,
  virtualAccountName: 'Jokul Doe',
  trxId,
  totalAmount: { value, currency: 'IDR' },
  additionalInfo: { merchantId: 'G123456789', bank: 'bca' },
});
const vaRef = (trxId: string) => ({
  partnerServiceId: '   70012',
  customerNo: trxId.slice(-8),
  virtualAccountNo: `   70012${trxId.slice(-8)}`,
  inquiryRequestId: trxId,
  trxId,
  additionalInfo: { merchantId: 'G123456789' },
});

describe('midtrans-client SnapBi against the simulator', () => {
  it('token → VA create → status → cancel', async () => {
    const token = await SnapBi.va().getAccessToken();
    expect(token).toMatchObject({ responseCode: '2007300', tokenType: 'Bearer', expiresIn: '900' });
    const trxId = oid('snapva');
    const created = await SnapBi.va().withBody(vaBody(trxId)).createPayment(trxId);
    expect(created).toMatchObject({
      responseCode: '2002700',
      virtualAccountData: { trxId, totalAmount: { value: '10000.00', currency: 'IDR' } },
    });
    const st = await SnapBi.va().withBody(vaRef(trxId)).getStatus(oid('ext'));
    expect(st).toMatchObject({ responseCode: '2002600', virtualAccountData: { paymentFlagStatus: '03' } });
    const cancelled = await SnapBi.va().withBody(vaRef(trxId)).cancel(oid('ext'));
    expect(cancelled).toMatchObject({ responseCode: '2003100' });
    const after = await SnapBi.va().withBody(vaRef(trxId)).getStatus(oid('ext'));
    expect(after).toMatchObject({ virtualAccountData: { paymentFlagStatus: '05' } });
  });

  it('a direct-debit payment: created, paid on the simulator, notified RSA-signed, status, refund', async () => {
    const ref = oid('snapdd');
    const body = {
      partnerReferenceNo: ref,
      chargeToken: '',
      merchantId: 'G123456789',
      urlParam: { url: 'https://shop.example.com/done', type: 'PAY_RETURN', isDeeplink: 'Y' },
      validUpTo: new Date(Date.now() + 600_000).toISOString(),
      payOptionDetails: [
        { payMethod: 'GOPAY', payOption: 'GOPAY_WALLET', transAmount: { value: '25000.00', currency: 'IDR' } },
      ],
      additionalInfo: {},
    };
    const created = await SnapBi.directDebit().withBody(body).createPayment(oid('ext'));
    expect(created).toMatchObject({ responseCode: '2005400', partnerReferenceNo: ref });
    expect(String(created.webRedirectUrl)).toContain(sim.baseUrl);
    const paid = await call(sim.baseUrl, 'POST', `/_sim/transactions/${ref}/pay`, { auth: false });
    expect(paid.status).toBe(200);

    const got = await waitFor(() => hook.received.find((r) => r.body.originalPartnerReferenceNo === ref));
    expect(got.path).toBe('/snap/v1.0/debit/notify');
    expect(got.body).toMatchObject({ latestTransactionStatus: '00', originalReferenceNo: created.referenceNo });
    const raw = JSON.stringify(got.body);
    const signed = `POST:/v1.0/debit/notify:${createHash('sha256').update(raw).digest('hex')}:${String(got.headers['x-timestamp'])}`;
    const publicKey = await (await fetch(`${sim.baseUrl}/_sim/snap-bi/public-key`)).text();
    expect(publicKey).toBe(sim.snapBiPublicKey);
    expect(
      createVerify('RSA-SHA256').update(signed).verify(publicKey, String(got.headers['x-signature']), 'base64'),
    ).toBe(true);
    expect(got.headers['x-partner-id']).toBe(CLIENT.partnerId);

    const st = await SnapBi.directDebit()
      .withBody({ originalPartnerReferenceNo: ref, serviceCode: '54' })
      .getStatus(oid('ext'));
    expect(st).toMatchObject({
      responseCode: '2005500',
      latestTransactionStatus: '00',
      transAmount: { value: '25000.00' },
    });
    const refunded = await SnapBi.directDebit()
      .withBody({
        originalReferenceNo: created.referenceNo,
        partnerRefundNo: oid('rf'),
        reason: 'test',
        refundAmount: { value: '5000.00', currency: 'IDR' },
      })
      .refund(oid('ext'));
    expect(refunded).toMatchObject({ responseCode: '2005800', refundAmount: { value: '5000.00' } });
  });

  it('QRIS: generate, query, cancel', async () => {
    const ref = oid('snapqr');
    const created = await SnapBi.qris()
      .withBody({ partnerReferenceNo: ref, amount: { value: '15000.00', currency: 'IDR' }, merchantId: 'G123456789' })
      .createPayment(ref);
    expect(created).toMatchObject({ responseCode: '2004700', partnerReferenceNo: ref });
    expect(String(created.qrContent)).not.toBe('');
    const st = await SnapBi.qris()
      .withBody({ originalPartnerReferenceNo: ref, merchantId: 'G123456789', serviceCode: '47' })
      .getStatus(oid('ext'));
    expect(st).toMatchObject({ responseCode: '2005100', latestTransactionStatus: '03' });
    const cancelled = await SnapBi.qris()
      .withBody({ originalPartnerReferenceNo: ref, merchantId: 'G123456789', reason: 'x' })
      .cancel(oid('ext'));
    expect(cancelled).toMatchObject({ responseCode: '2007700' });
  });
});

describe('the simulator refuses as the gateway documents', () => {
  it('a token request signed with another key: 4017300', async () => {
    const other = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const saved = SnapBiConfig.snapBiPrivateKey;
    SnapBiConfig.snapBiPrivateKey = other.privateKey;
    try {
      expect(await SnapBi.va().getAccessToken()).toMatchObject({ responseCode: '4017300' });
    } finally {
      SnapBiConfig.snapBiPrivateKey = saved;
    }
  });

  it('a wrong client secret: 401SS00; an unknown or expired token: 401SS01', async () => {
    const saved = SnapBiConfig.snapBiClientSecret;
    SnapBiConfig.snapBiClientSecret = 'not-the-secret';
    try {
      const r = await SnapBi.va()
        .withBody(vaRef(oid('x')))
        .getStatus(oid('ext'));
      expect(r).toMatchObject({ responseCode: '4012600', responseMessage: 'Unauthorized. [Signature]' });
    } finally {
      SnapBiConfig.snapBiClientSecret = saved;
    }
    const unknown = await SnapBi.va()
      .withAccessToken('made-up')
      .withBody(vaRef(oid('x')))
      .getStatus(oid('ext'));
    expect(unknown).toMatchObject({ responseCode: '4012601' });
    const token = String((await SnapBi.va().getAccessToken()).accessToken);
    const live = await SnapBi.va()
      .withAccessToken(token)
      .withBody(vaRef(oid('x')))
      .getStatus(oid('ext'));
    expect(live).toMatchObject({ responseCode: '4042601' });
    await call(sim.baseUrl, 'POST', '/_sim/snap-bi/expire-tokens', { auth: false });
    const expired = await SnapBi.va()
      .withAccessToken(token)
      .withBody(vaRef(oid('x')))
      .getStatus(oid('ext'));
    expect(expired).toMatchObject({ responseCode: '4012601', responseMessage: 'Invalid Token (B2B)' });
  });

  it('the same X-EXTERNAL-ID the same day: the same request answered as before, another body a conflict', async () => {
    const trxId = oid('dupva');
    const first = await SnapBi.va().withBody(vaBody(trxId)).createPayment(trxId);
    expect(first).toMatchObject({ responseCode: '2002700' });
    const again = await SnapBi.va().withBody(vaBody(trxId)).createPayment(trxId);
    expect(again).toEqual(first);
    const other = await SnapBi.va().withBody(vaBody(trxId, '20000.00')).createPayment(trxId);
    expect(other).toMatchObject({ responseCode: '4092700' });
  });
});
