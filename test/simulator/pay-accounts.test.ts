import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { arr, basic, call, s, start, type J } from './helpers.js';

const OTHER = { serverKey: 'SB-Mid-server-gopay-other', merchantId: 'G222333555' };
const FINISH = 'https://shop.example/gopay-linking-finish';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await start({ merchants: [OTHER] });
});
afterAll(async () => {
  await sim.close();
});

function linkBody(phone: string, extra: J = {}): J {
  return {
    payment_type: 'gopay',
    gopay_partner: { phone_number: phone, country_code: '62', redirect_url: FINISH, ...extra },
  };
}

describe('GoPay account linking', () => {
  it('links PENDING, activates on its page, reads ENABLED with the wallet token, then unbinds', async () => {
    const linked = await call(sim.baseUrl, 'POST', '/v2/pay/account', { body: linkBody('81234567891') });
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({ status_code: '201', payment_type: 'gopay', account_status: 'PENDING' });
    const id = s(linked.body.account_id);
    const actions = arr(linked.body.actions);
    expect(actions.map((a) => a.name)).toEqual(['activation-deeplink', 'activation-link-url', 'activation-link-app']);
    const page = s(actions[0]?.url);
    expect(page).toMatch(new RegExp(`^${sim.baseUrl}/v2/pay/account/gpar_[0-9a-f-]{36}/link$`));

    const pending = await call(sim.baseUrl, 'GET', `/v2/pay/account/${id}`);
    expect(pending.body).toEqual({
      status_code: '201',
      payment_type: 'gopay',
      account_id: id,
      account_status: 'PENDING',
    });
    const early = await call(sim.baseUrl, 'POST', `/v2/pay/account/${id}/unbind`);
    expect(early.status).toBe(412);
    expect(early.body).toMatchObject({ status_code: '412', status_message: 'Account status cannot be updated.' });

    const html = await fetch(page);
    expect(html.status).toBe(200);
    const text = await html.text();
    expect(text).toContain('+6281234567891');
    expect(text).toContain('id="link"');
    const done = await fetch(page, { method: 'POST', redirect: 'manual' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(FINISH);

    const enabled = await call(sim.baseUrl, 'GET', `/v2/pay/account/${id}`);
    expect(enabled.body).toMatchObject({ status_code: '200', account_id: id, account_status: 'ENABLED' });
    const options = arr((enabled.body.metadata as J).payment_options);
    expect(options[0]).toMatchObject({ name: 'GOPAY_WALLET', active: true, balance: { currency: 'IDR' } });
    expect(s(options[0]?.token)).toMatch(/^[0-9a-f-]{36}$/);

    // An ENABLED account can carry a GoPay subscription.
    const sub = await call(sim.baseUrl, 'POST', '/v1/subscriptions', {
      body: {
        name: 'GOPAY-MONTHLY',
        amount: '50000',
        currency: 'IDR',
        payment_type: 'gopay',
        token: s(options[0]?.token),
        schedule: { interval: 1, interval_unit: 'month' },
        gopay: { account_id: id },
      },
    });
    expect(sub.status, sub.text).toBe(200);
    expect(sub.body).toMatchObject({ payment_type: 'gopay', gopay: { account_id: id }, status: 'active' });

    const unbound = await call(sim.baseUrl, 'POST', `/v2/pay/account/${id}/unbind`);
    expect(unbound.status).toBe(200);
    expect(unbound.body).toMatchObject({ status_code: '204', account_id: id, account_status: 'DISABLED' });
    expect((await call(sim.baseUrl, 'POST', `/v2/pay/account/${id}/unbind`)).status).toBe(412);
    expect((await call(sim.baseUrl, 'GET', `/v2/pay/account/${id}`)).body.account_status).toBe('DISABLED');
  });

  it("the sandbox's unregistered and blocked numbers answer 202 with the wallet's message", async () => {
    const unknown = await call(sim.baseUrl, 'POST', '/v2/pay/account', { body: linkBody('123450001') });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ status_code: '202', channel_response_message: 'User Not Found' });
    expect(unknown.body.account_id).toBeUndefined();
    const blocked = await call(sim.baseUrl, 'POST', '/v2/pay/account', { body: linkBody('123450002') });
    expect(blocked.body).toMatchObject({ status_code: '202', channel_response_message: 'Wallet is Blocked' });
  });

  it('refuses a bad number, country code or redirect URL with 400 and the messages', async () => {
    const zero = await call(sim.baseUrl, 'POST', '/v2/pay/account', { body: linkBody('081234567891') });
    expect(zero.status).toBe(400);
    expect(zero.body).toMatchObject({
      status_code: '400',
      validation_messages: ['gopay_partner.phone_number must be numeric digits and must not begin with 0'],
    });
    const bad = await call(sim.baseUrl, 'POST', '/v2/pay/account', {
      body: {
        payment_type: 'shopeepay',
        gopay_partner: { phone_number: '8123', country_code: 'ID', redirect_url: 'x' },
      },
    });
    expect(bad.body.validation_messages).toEqual([
      'payment_type must be gopay',
      'gopay_partner.country_code must be numeric digits',
      'gopay_partner.redirect_url must be an http(s) URL',
    ]);
    const none = await call(sim.baseUrl, 'POST', '/v2/pay/account', { raw: 'null' });
    expect(none.status).toBe(400);
    expect(none.body.validation_messages).toEqual(['payment_type must be gopay', 'gopay_partner is required']);
  });

  it("an unknown account is 404; another merchant's key never sees one; an unknown activation page is 404", async () => {
    const linked = await call(sim.baseUrl, 'POST', '/v2/pay/account', { body: linkBody('81299998888') });
    const id = s(linked.body.account_id);
    const other = await call(sim.baseUrl, 'GET', `/v2/pay/account/${id}`, { auth: basic(OTHER.serverKey) });
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ status_code: '404' });
    expect((await call(sim.baseUrl, 'GET', '/v2/pay/account/nope')).status).toBe(404);
    expect((await call(sim.baseUrl, 'GET', `/v2/pay/account/${id}`, { auth: basic('SB-Mid-server-x') })).status).toBe(
      401,
    );
    const page = await fetch(`${sim.baseUrl}/v2/pay/account/gpar_00000000-0000-0000-0000-000000000000/link`);
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toContain('text/html');
  });
});
