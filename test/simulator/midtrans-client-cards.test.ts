import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { KEY, oid, receiver, s, start, waitFor, type Receiver } from './helpers.js';

type Midtrans = typeof import('midtrans-client');
type ApiConfigClass = typeof import('midtrans-client/lib/apiConfig');

const require = createRequire(import.meta.url);
const midtrans = require('midtrans-client') as Midtrans;
const ApiConfig = require('midtrans-client/lib/apiConfig') as ApiConfigClass;

const CLIENT_KEY = 'SB-Mid-client-mc-cards';
let sim: RunningSimulator;
let rcv: Receiver;
let saved: string;

beforeAll(async () => {
  rcv = await receiver();
  sim = await start({ notificationUrl: rcv.url, clientKey: CLIENT_KEY });
  saved = ApiConfig.CORE_SANDBOX_BASE_URL;
  ApiConfig.CORE_SANDBOX_BASE_URL = sim.baseUrl;
});
afterAll(async () => {
  ApiConfig.CORE_SANDBOX_BASE_URL = saved;
  await sim.close();
  await rcv.close();
});

const core = (): InstanceType<Midtrans['CoreApi']> =>
  new midtrans.CoreApi({ isProduction: false, serverKey: KEY, clientKey: CLIENT_KEY });
const card = (number: string): object => ({
  card_number: number,
  card_exp_month: '12',
  card_exp_year: String(new Date().getUTCFullYear() + 1),
  card_cvv: '123',
  client_key: CLIENT_KEY,
});

describe('midtrans-client: cards and numeric order ids', () => {
  it('cardToken → 3DS charge → OTP on the redirect page → notification → transaction.status', async () => {
    const t = await core().cardToken(card('4811 1111 1111 1114'));
    expect(t).toMatchObject({ status_code: '200' });
    const orderId = oid('mc3ds');
    const c = await core().charge({
      payment_type: 'credit_card',
      transaction_details: { order_id: orderId, gross_amount: 12145 },
      credit_card: { token_id: s(t.token_id), authentication: true },
    });
    expect(c).toMatchObject({ status_code: '201', transaction_status: 'pending' });
    const done = await fetch(s(c.redirect_url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'otp=112233',
      redirect: 'manual',
    });
    expect(done.status).toBe(303);
    await waitFor(() =>
      rcv.received.find((r) => r.body.order_id === orderId && r.body.transaction_status === 'capture'),
    );
    expect(await core().transaction.status(orderId)).toMatchObject({
      status_code: '200',
      transaction_status: 'capture',
      fraud_status: 'accept',
      masked_card: '481111-1114',
    });
  });

  it("the clients' own card flow: token, register, point inquiry (BNI card: balance; another: 402), one-click charge with the saved token", async () => {
    const t = await core().cardToken(card('5264 2210 3887 4659'));
    expect(t.status_code).toBe('200');
    const reg = await core().cardRegister(card('4811 1111 1111 1114'));
    expect(reg.status_code).toBe('200');
    expect(await core().cardPointInquiry(s(t.token_id))).toMatchObject({
      status_code: '200',
      status_message: 'Success, Credit Card Point inquiry is successful',
      point_balance_amount: '10000.00',
    });
    const plain = await core().cardToken(card('4811 1111 1111 1114'));
    await expect(core().cardPointInquiry(s(plain.token_id))).rejects.toThrow(/402/);
    const one = await core().charge({
      payment_type: 'credit_card',
      transaction_details: { order_id: oid('mc1c'), gross_amount: 12145 },
      credit_card: { token_id: s(reg.saved_token_id) },
    });
    expect(one).toMatchObject({ status_code: '200', transaction_status: 'capture', fraud_status: 'accept' });
  });

  it('cardPointInquiry for the BNI points card answers the documented success; the card then charges as usual', async () => {
    const t = await core().cardToken(card('4105 0586 8948 1467'));
    expect(t.status_code).toBe('200');
    const inquiry = await core().cardPointInquiry(s(t.token_id));
    expect(inquiry).toEqual({
      status_code: '200',
      status_message: 'Success, Credit Card Point inquiry is successful',
      transaction_time: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      point_balance_amount: '10000.00',
    });
    const c = await core().charge({
      payment_type: 'credit_card',
      transaction_details: { order_id: oid('mcpt'), gross_amount: 12145 },
      credit_card: { token_id: s(t.token_id) },
    });
    expect(c).toMatchObject({ status_code: '200', transaction_status: 'capture', masked_card: '410505-1467' });
  });

  it('a Core charge with a numeric order_id, then status by its digits', async () => {
    const id = Date.now() * 1000 + 7;
    const c = await core().charge({
      payment_type: 'bank_transfer',
      transaction_details: { order_id: id, gross_amount: 44145 },
      bank_transfer: { bank: 'bca' },
    });
    expect(c).toMatchObject({ status_code: '201', order_id: String(id) });
    expect(await core().transaction.status(String(id))).toMatchObject({
      order_id: String(id),
      transaction_status: 'pending',
    });
  });

  it('charge(null) from the Python client\'s test: "null" gives the unexpected 500', async () => {
    const r = await fetch(`${sim.baseUrl}/v2/charge`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${KEY}:`).toString('base64')}`,
      },
      body: 'null',
    });
    expect(r.status).toBe(500);
    expect(JSON.stringify(await r.json())).toContain('unexpected');
  });
});
