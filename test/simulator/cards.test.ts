import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { call, oid, receiver, s, start, waitFor, type J, type Receiver } from './helpers.js';

const CLIENT_KEY = 'SB-Mid-client-cards-test';
let sim: RunningSimulator;
let rcv: Receiver;
beforeAll(async () => {
  rcv = await receiver();
  sim = await start({ notificationUrl: rcv.url, clientKey: CLIENT_KEY });
});
afterAll(async () => {
  await sim.close();
  await rcv.close();
});

const nextYear = String(new Date().getUTCFullYear() + 1);

/** GET /v2/token the way the browser library does: client_key in the query, no server key. */
async function token(card: string, extra: Record<string, string> = {}): Promise<{ status: number; body: J }> {
  const q = new URLSearchParams({
    client_key: CLIENT_KEY,
    card_number: card,
    card_exp_month: '12',
    card_exp_year: nextYear,
    card_cvv: '123',
    ...extra,
  });
  const r = await call(sim.baseUrl, 'GET', `/v2/token?${q.toString()}`, { auth: false });
  return { status: r.status, body: r.body };
}

async function cardCharge(tokenId: string, authentication?: boolean): Promise<J> {
  const credit_card: J = { token_id: tokenId };
  if (authentication !== undefined) credit_card.authentication = authentication;
  const r = await call(sim.baseUrl, 'POST', '/v2/charge', {
    body: {
      payment_type: 'credit_card',
      transaction_details: { order_id: oid('CC'), gross_amount: 25000 },
      credit_card,
    },
  });
  return r.body;
}

async function submitOtp(url: string, otp: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ otp }).toString(),
    redirect: 'manual',
  });
}

function notified(orderId: string, status: string): Promise<J> {
  return waitFor(
    () => rcv.received.find((r) => r.body.order_id === orderId && r.body.transaction_status === status)?.body,
  );
}

describe('card tokenisation (/v2/token, /v2/card/register, /v2/point_inquiry)', () => {
  it("a sandbox card gives a token shaped like the gateway's, with the client key alone", async () => {
    const r = await token('4811 1111 1111 1114');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status_code: '200',
      status_message: 'Credit card token is created as Token ID.',
      hash: '481111-1114-mami',
    });
    expect(s(r.body.token_id)).toMatch(/^481111-1114-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const secure = await token('5211111111111117', { secure: 'true', gross_amount: '25000' });
    expect(secure.body).toMatchObject({ status_code: '200', bank: 'bni' });
    expect(s(secure.body.token_id)).toMatch(/^521111-1117-/);
  });

  it('refuses a wrong client key (and no server key) with the Core 401', async () => {
    const q = new URLSearchParams({
      client_key: 'SB-Mid-client-wrong',
      card_number: '4811111111111114',
      card_exp_month: '12',
      card_exp_year: nextYear,
      card_cvv: '123',
    });
    const r = await call(sim.baseUrl, 'GET', `/v2/token?${q.toString()}`, { auth: false });
    expect(r.status).toBe(401);
    expect(r.body.status_code).toBe('401');
  });

  it('validation: Luhn, expiry in the past, malformed CVV and month → 400 validation_messages', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['4811111111111115', {}, 'card_number does not match with luhn algorithm'],
      [
        '4811111111111114',
        { card_exp_year: '2020' },
        'card_exp_month and card_exp_year must be equal or greater than the current month and year',
      ],
      ['4811111111111114', { card_cvv: '12' }, 'card_cvv must be 3 or 4 digits'],
      ['4811111111111114', { card_exp_month: '13' }, 'card_exp_month must be between 01 and 12'],
      ['4811111111111114', { card_cvv: '' }, 'card_cvv is required'],
    ];
    for (const [card, extra, message] of cases) {
      const r = await token(card, extra);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({
        status_code: '400',
        status_message: 'One or more parameters in the payload is invalid.',
      });
      expect(r.body.validation_messages).toEqual([message]);
    }
  });

  it('card/register gives a reusable saved token; /v2/token turns it into a one-charge token; point inquiry answers 402, and the points card its balance', async () => {
    const q = new URLSearchParams({
      client_key: CLIENT_KEY,
      card_number: '4811111111111114',
      card_exp_month: '12',
      card_exp_year: nextYear,
    });
    const reg = await call(sim.baseUrl, 'GET', `/v2/card/register?${q.toString()}`, { auth: false });
    expect(reg.body).toMatchObject({ status_code: '200', masked_card: '481111-1114' });
    const saved = s(reg.body.saved_token_id);
    expect(saved).toMatch(/^481111[A-Za-z]{22}1114$/);
    const two = await call(
      sim.baseUrl,
      'GET',
      `/v2/token?${new URLSearchParams({ client_key: CLIENT_KEY, token_id: saved, two_click: 'true', card_cvv: '123' }).toString()}`,
      { auth: false },
    );
    expect(two.body.status_code).toBe('200');
    expect(s(two.body.token_id)).toMatch(/^481111-1114-/);
    expect(await cardCharge(saved)).toMatchObject({ status_code: '200', transaction_status: 'capture' });
    const point = await call(sim.baseUrl, 'GET', `/v2/point_inquiry/${s(two.body.token_id)}`);
    expect(point.body).toMatchObject({ status_code: '402' });
    // The points card: its balance, capped by the coming charge's gross_amount; a malformed one is a 400.
    const pts = await call(
      sim.baseUrl,
      'GET',
      `/v2/token?${new URLSearchParams({ client_key: CLIENT_KEY, card_number: '4105058689481467', card_exp_month: '12', card_exp_year: String(new Date().getUTCFullYear() + 1), card_cvv: '123' }).toString()}`,
      { auth: false },
    );
    const ptsToken = s(pts.body.token_id);
    expect((await call(sim.baseUrl, 'GET', `/v2/point_inquiry/${ptsToken}`)).body).toMatchObject({
      status_code: '200',
      point_balance_amount: '10000.00',
    });
    expect((await call(sim.baseUrl, 'GET', `/v2/point_inquiry/${ptsToken}?gross_amount=2500`)).body).toMatchObject({
      status_code: '200',
      point_balance_amount: '2500.00',
    });
    expect((await call(sim.baseUrl, 'GET', `/v2/point_inquiry/${ptsToken}?gross_amount=-1`)).body).toMatchObject({
      status_code: '400',
    });
    const unknown = await call(
      sim.baseUrl,
      'GET',
      '/v2/point_inquiry/481111-1114-00000000-0000-0000-0000-000000000000',
    );
    expect(unknown.body).toMatchObject({
      status_code: '411',
      status_message: 'Token id is missing, invalid, or timed out',
    });
    const badSaved = await call(
      sim.baseUrl,
      'GET',
      `/v2/token?${new URLSearchParams({ client_key: CLIENT_KEY, token_id: 'nope' }).toString()}`,
      { auth: false },
    );
    expect(badSaved.body.status_code).toBe('411');
  });

  it('the request log never keeps the card data of the query', async () => {
    await token('4811111111111114');
    const log = await call(sim.baseUrl, 'GET', '/_sim/requests?path=/v2/token', { auth: false });
    expect(log.text).not.toContain('4811111111111114');
    expect(log.text).not.toContain(CLIENT_KEY);
    expect(log.text).toContain('card_number=****');
  });
});

describe('a charge follows the card behind the token', () => {
  it('accept, challenge, deny by FDS, deny by bank; a wrong CVV is declined by the issuer (N7)', async () => {
    const cases: [string, Record<string, string>, J][] = [
      [
        '4811111111111114',
        {},
        {
          status_code: '200',
          transaction_status: 'capture',
          fraud_status: 'accept',
          masked_card: '481111-1114',
          channel_response_code: '00',
        },
      ],
      [
        '5264221038874659',
        {},
        { status_code: '200', transaction_status: 'capture', fraud_status: 'accept', masked_card: '526422-4659' },
      ],
      [
        '4511111111111117',
        {},
        {
          status_code: '201',
          transaction_status: 'capture',
          fraud_status: 'challenge',
          status_message: 'Challenge by FDS',
        },
      ],
      [
        '4611111111111116',
        {},
        { status_code: '202', transaction_status: 'deny', fraud_status: 'deny', status_message: 'Deny by FDS' },
      ],
      [
        '4711111111111115',
        {},
        { status_code: '202', transaction_status: 'deny', fraud_status: 'accept', channel_response_code: '05' },
      ],
      [
        '4811111111111114',
        { card_cvv: '999' },
        {
          status_code: '202',
          transaction_status: 'deny',
          channel_response_code: 'N7',
          channel_response_message: 'Decline for CVV2 failure',
        },
      ],
    ];
    for (const [card, extra, expected] of cases) {
      const t = await token(card, extra);
      expect(await cardCharge(s(t.body.token_id))).toMatchObject(expected);
    }
  });

  it('a gateway-shaped token the simulator never issued still follows its card (BIN + last four)', async () => {
    expect(await cardCharge('461111-1116-5d1e9c5a-0000-4000-8000-000000000000')).toMatchObject({
      status_code: '202',
      fraud_status: 'deny',
      masked_card: '461111-1116',
    });
  });
});

describe('3-D Secure (credit_card.authentication: true)', () => {
  it('answers "201" pending with a redirect_url; the OTP page captures and notifies; status shows capture', async () => {
    const t = await token('4811111111111114');
    const c = await cardCharge(s(t.body.token_id), true);
    expect(c).toMatchObject({
      status_code: '201',
      transaction_status: 'pending',
      fraud_status: 'accept',
      masked_card: '481111-1114',
    });
    const url = s(c.redirect_url);
    expect(url).toBe(`${sim.baseUrl}/v2/token/rba/redirect/481111-1114-${s(c.transaction_id)}`);
    await notified(s(c.order_id), 'pending');
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="otp"');
    const done = await submitOtp(url, '112233');
    expect(done.status).toBe(303);
    const n = await notified(s(c.order_id), 'capture');
    expect(n).toMatchObject({ status_code: '200', fraud_status: 'accept', eci: '05', channel_response_code: '00' });
    const st = await call(sim.baseUrl, 'GET', `/v2/${s(c.order_id)}/status`);
    expect(st.body).toMatchObject({ transaction_status: 'capture', status_code: '200' });
    expect(st.body).not.toHaveProperty('redirect_url');
    expect(await (await fetch(url)).text()).toContain('Payment successful');
  });

  it('the deny card is denied after 3DS; a wrong OTP is "not authenticated"; a second submit changes nothing', async () => {
    const deny = await cardCharge(s((await token('4611111111111116')).body.token_id), true);
    await submitOtp(s(deny.redirect_url), '112233');
    expect(await notified(s(deny.order_id), 'deny')).toMatchObject({ status_code: '202', fraud_status: 'deny' });
    const wrong = await cardCharge(s((await token('4811111111111114')).body.token_id), true);
    await submitOtp(s(wrong.redirect_url), '000000');
    expect(await notified(s(wrong.order_id), 'deny')).toMatchObject({
      status_code: '202',
      channel_response_message: 'Card is not authenticated.',
      eci: '07',
    });
    await submitOtp(s(wrong.redirect_url), '112233');
    const st = await call(sim.baseUrl, 'GET', `/v2/${s(wrong.order_id)}/status`);
    expect(st.body.transaction_status).toBe('deny');
    expect(await (await fetch(s(wrong.redirect_url))).text()).toContain('Payment failed');
  });

  it("the control API's pay passes the 3DS and follows the card", async () => {
    const ok = await cardCharge(s((await token('4811111111111114')).body.token_id), true);
    const paid = await call(sim.baseUrl, 'POST', `/_sim/transactions/${s(ok.order_id)}/pay`, { auth: false });
    expect(paid.body).toMatchObject({ transaction_status: 'capture', fraud_status: 'accept', eci: '05' });
    const challenged = await cardCharge(s((await token('5510111111111115')).body.token_id), true);
    const r = await call(sim.baseUrl, 'POST', `/_sim/transactions/${s(challenged.order_id)}/pay`, { auth: false });
    expect(r.body).toMatchObject({
      transaction_status: 'capture',
      fraud_status: 'challenge',
      status_code: '201',
      eci: '02',
    });
  });

  it('a 3DS page for another card or an unknown transaction is 404', async () => {
    const c = await cardCharge(s((await token('4811111111111114')).body.token_id), true);
    const forged = s(c.redirect_url).replace('481111-1114', '521111-1117');
    expect((await fetch(forged)).status).toBe(404);
    expect(
      (await fetch(`${sim.baseUrl}/v2/token/rba/redirect/481111-1114-00000000-0000-0000-0000-000000000000`)).status,
    ).toBe(404);
  });

  it('an unfinished 3DS charge expires after its 10 minutes like any pending charge (control expire)', async () => {
    const c = await cardCharge(s((await token('4811111111111114')).body.token_id), true);
    expect(typeof c.expiry_time).toBe('string');
    const r = await call(sim.baseUrl, 'POST', `/v2/${s(c.order_id)}/expire`);
    expect(r.body).toMatchObject({ status_code: '407', transaction_status: 'expire' });
  });
});
