import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { arr, call, oid, receiver, s, start, waitFor, type Receiver } from './helpers.js';

let sim: RunningSimulator;
let rcv: Receiver;
beforeAll(async () => {
  rcv = await receiver();
  sim = await start({ notificationUrl: rcv.url });
});
afterAll(async () => {
  await sim.close();
  await rcv.close();
});

async function post(url: string, form: Record<string, string> = {}, follow = false): Promise<Response> {
  return fetch(url, { method: 'POST', body: new URLSearchParams(form), redirect: follow ? 'follow' : 'manual' });
}

async function newLink(extra: Record<string, unknown> = {}): Promise<{ orderId: string; url: string }> {
  const orderId = oid('HL');
  const r = await call(sim.baseUrl, 'POST', '/v1/payment-links', {
    body: {
      transaction_details: { order_id: orderId, gross_amount: 150000 },
      item_details: [{ id: 'x', name: '<script>alert("x")</script> & Co', price: 150000, quantity: 1 }],
      title: 'Invoice <b>42</b>',
      ...extra,
    },
  });
  expect(r.status).toBe(200);
  return { orderId, url: s(r.body.payment_url) };
}

describe('hosted payment-link page', () => {
  it('shows merchant, amount, escaped items and one button per method in a POST form', async () => {
    const { orderId, url } = await newLink({ enabled_payments: ['bca_va', 'other_qris', 'credit_card'] });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('Rp 150.000');
    expect(html).toContain(orderId);
    expect(html).toContain('G123456789');
    expect(html).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; Co');
    expect(html).not.toContain('<script>');
    expect(html).toContain('Invoice &#60;b&#62;42&#60;/b&#62;');
    expect(html).toMatch(/<form method="post"[^>]*>/);
    for (const m of ['bca_va', 'other_qris', 'credit_card'])
      expect(html).toContain(`<button type="submit" name="method" value="${m}" data-method="${m}">`);
    expect(html).not.toContain('data-method="gopay"');
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
  });

  it('after choosing a method (a card) the customer can go back and pay with another one', async () => {
    const { orderId, url } = await newLink({ enabled_payments: ['credit_card', 'bca_va'] });
    const card = await post(url, { method: 'credit_card' });
    expect(card.status).toBe(303);
    const cardPage = new URL(s(card.headers.get('location')), url).toString();
    const html = await (await fetch(cardPage)).text();
    // Without going back, the link page keeps sending the customer to the attempt under way.
    const again = await fetch(url, { redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(new URL(s(again.headers.get('location')), url).toString()).toBe(cardPage);
    const form =
      /<form method="post" action="([^"]+)"><button id="switch-method" type="submit">Choose another method<\/button>/.exec(
        html,
      );
    expect(form?.[1]).toBeDefined();
    const back = await post(new URL(s(form?.[1]), url).toString());
    expect(back.status).toBe(303);
    expect(new URL(s(back.headers.get('location')), url).toString()).toBe(url);
    const methods = await (await fetch(url, { redirect: 'manual' })).text();
    expect(methods).toContain('data-method="bca_va"');
    const va = await post(url, { method: 'bca_va' });
    expect(va.status).toBe(303);
    const vaPage = await (await fetch(new URL(s(va.headers.get('location')), url))).text();
    expect(vaPage).toContain('Virtual account');
    const payForm = /<form method="post" action="([^"]+)"><button id="pay"/.exec(vaPage);
    const done = await post(new URL(s(payForm?.[1]), url).toString(), {}, true);
    expect(await done.text()).toContain('<div id="result">Payment successful</div>');
    const details = await call(sim.baseUrl, 'GET', `/v1/payment-links/${orderId}`);
    expect(arr(details.body.purchases).map((p) => p.payment_status)).toEqual(['PENDING', 'SETTLEMENT']);
  });

  it('method → instructions with #pay → result page; settled with notifications', async () => {
    const { orderId, url } = await newLink();
    const chosen = await post(url, { method: 'bca_va' });
    expect(chosen.status).toBe(303);
    const instructionsUrl = new URL(s(chosen.headers.get('location')), url).toString();
    const page = await (await fetch(instructionsUrl)).text();
    expect(page).toContain('<button id="pay" type="submit">Pay now</button>');
    const details = await call(sim.baseUrl, 'GET', `/v1/payment-links/${orderId}`);
    const purchase = arr(details.body.purchases)[0];
    expect(purchase?.payment_status).toBe('PENDING');
    const status = await call(sim.baseUrl, 'GET', `/v2/${s(purchase?.order_id)}/status`);
    expect(page).toContain(s(arr(status.body.va_numbers)[0]?.va_number));
    const form = /<form method="post" action="([^"]+)"><button id="pay"/.exec(page);
    const done = await post(new URL(s(form?.[1]), url).toString(), {}, true);
    expect(done.status).toBe(200);
    expect(await done.text()).toMatch(/<div id="result">Payment successful<\/div>/);
    expect((await call(sim.baseUrl, 'GET', `/v2/${s(purchase?.order_id)}/status`)).body.transaction_status).toBe(
      'settlement',
    );
    await waitFor(() =>
      rcv.received.filter((r) => r.body.order_id === purchase?.order_id).length >= 2 ? true : undefined,
    );
    expect(
      rcv.received.filter((r) => r.body.order_id === purchase?.order_id).map((r) => r.body.transaction_status),
    ).toEqual(['pending', 'settlement']);
    expect((await fetch(url)).status).toBe(410);
  });

  it('a revisit while a purchase is pending goes back to its instructions', async () => {
    const { url } = await newLink();
    const chosen = await post(url, { method: 'other_qris' });
    const again = await fetch(url, { redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(chosen.headers.get('location'));
    const html = await (await fetch(url)).text();
    expect(html).toContain('QR string');
  });

  it("a pending purchase reserves the link's only use: choosing again leads back to it, no second purchase", async () => {
    const { orderId, url } = await newLink({ usage_limit: 1 });
    const first = await post(url, { method: 'other_qris' });
    const second = await post(url, { method: 'bca_va' });
    expect(second.status).toBe(303);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    const details = await call(sim.baseUrl, 'GET', `/v1/payment-links/${orderId}`);
    expect(arr(details.body.purchases)).toHaveLength(1);
  });

  it('an expiry too large for any date is refused with 400, not a link dead at birth', async () => {
    const r = await call(sim.baseUrl, 'POST', '/v1/payment-links', {
      body: {
        transaction_details: { order_id: oid('HL'), gross_amount: 1000 },
        usage_limit: 1,
        expiry: { duration: 999999999999999, unit: 'days' },
      },
    });
    expect(r.status).toBe(400);
  });

  it('unknown link 404, deleted link 410, invalid method 400', async () => {
    expect((await fetch(`${sim.baseUrl}/payment-links/nope`)).status).toBe(404);
    const { orderId, url } = await newLink({ enabled_payments: ['gopay'] });
    expect((await post(url, { method: 'bca_va' })).status).toBe(400);
    await call(sim.baseUrl, 'DELETE', `/v1/payment-links/${orderId}`);
    const gone = await fetch(url);
    expect(gone.status).toBe(410);
    expect(await gone.text()).toContain('deactivated');
  });
});

describe('hosted Snap page', () => {
  it('card: pick → pay → capture; the used token page answers 410', async () => {
    const orderId = oid('HS');
    const t = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: orderId, gross_amount: 20000 } },
    });
    const url = s(t.body.redirect_url);
    const html = await (await fetch(url)).text();
    expect(html).toContain('Rp 20.000');
    expect(html).toContain('data-method="bca_va"');
    const instructions = await post(url, { method: 'credit_card' }, true);
    const page = await instructions.text();
    expect(page).toContain('id="pay"');
    expect((await call(sim.baseUrl, 'GET', `/v2/${orderId}/status`)).body).toMatchObject({
      transaction_status: 'pending',
      payment_type: 'credit_card',
    });
    const action = /action="([^"]+)"><button id="pay"/.exec(page)?.[1];
    const done = await post(new URL(s(action), url).toString(), {}, true);
    expect(await done.text()).toContain('Payment successful');
    expect((await call(sim.baseUrl, 'GET', `/v2/${orderId}/status`)).body).toMatchObject({
      transaction_status: 'capture',
      fraud_status: 'accept',
      status_code: '200',
    });
    expect((await fetch(url)).status).toBe(410);
  });

  it('unknown token 404', async () => {
    expect((await fetch(`${sim.baseUrl}/snap/v3/redirection/00000000-0000-0000-0000-000000000000`)).status).toBe(404);
  });
});
