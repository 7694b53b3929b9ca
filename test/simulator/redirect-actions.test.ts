import { createRequire } from 'node:module';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { arr, call, oid, receiver, s, start, waitFor, type J, type Receiver } from './helpers.js';

// jsqr is a CommonJS bundle whose ES default is its `default` property.
const jsQR = (createRequire(import.meta.url)('jsqr') as typeof import('jsqr')).default;

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

const CUSTOMER = { first_name: 'Budi', email: 'budi@example.com', phone: '08123' };
const ITEMS = [{ id: 'a', name: 'A', price: 30000, quantity: 1 }];

async function charge(paymentType: string, extra: J = {}): Promise<{ status: number; body: J }> {
  const body = {
    payment_type: paymentType,
    transaction_details: { order_id: oid('RD'), gross_amount: 30000 },
    item_details: ITEMS,
    customer_details: CUSTOMER,
    ...extra,
  };
  const r = await call(sim.baseUrl, 'POST', '/v2/charge', { body });
  return { status: r.status, body: r.body };
}

function notified(orderId: string, status: string): Promise<J> {
  return waitFor(
    () => rcv.received.find((r) => r.body.order_id === orderId && r.body.transaction_status === status)?.body,
  );
}

async function pressPay(pageUrl: string): Promise<void> {
  const page = await fetch(pageUrl);
  expect(page.status).toBe(200);
  const html = await page.text();
  const action = /<form method="post" action="([^"]+)"><button id="pay"/.exec(html)?.[1];
  if (action === undefined) throw new Error(`no pay form in ${html}`);
  const r = await fetch(new URL(action, pageUrl), { method: 'POST', redirect: 'manual' });
  expect(r.status).toBe(303);
}

const EXTRAS: Record<string, J> = {
  cimb_clicks: { cimb_clicks: { description: 'Purchase of A' } },
  bri_epay: {},
  danamon_online: {},
  akulaku: {},
  kredivo: {},
  uob_ezpay: {},
};

describe('payment types with a redirect', () => {
  for (const [type, extra] of Object.entries(EXTRAS)) {
    it(`${type}: "201" pending with redirect_url; the hosted page settles it and notifies`, async () => {
      const c = await charge(type, extra);
      expect(c.status).toBe(200);
      expect(c.body).toMatchObject({ status_code: '201', transaction_status: 'pending', payment_type: type });
      const url = s(c.body.redirect_url);
      expect(url).toBe(`${sim.baseUrl}/v2/${type}/redirect/${s(c.body.transaction_id)}`);
      await pressPay(url);
      expect(await notified(s(c.body.order_id), 'settlement')).toMatchObject({
        status_code: '200',
        payment_type: type,
      });
      const st = await call(sim.baseUrl, 'GET', `/v2/${s(c.body.order_id)}/status`);
      expect(st.body).toMatchObject({ transaction_status: 'settlement' });
      expect(await (await fetch(url)).text()).toContain('Payment successful');
    });
  }

  it('their own rules: CIMB Clicks needs a description, Akulaku needs items and customer', async () => {
    const cimb = await charge('cimb_clicks');
    expect(cimb.status).toBe(400);
    expect(cimb.body.validation_messages).toEqual(['cimb_clicks.description is required']);
    const r = await call(sim.baseUrl, 'POST', '/v2/charge', {
      body: { payment_type: 'akulaku', transaction_details: { order_id: oid('RD'), gross_amount: 30000 } },
    });
    expect(r.body.validation_messages).toEqual(['item_details is required', 'customer_details is required']);
  });

  it('a redirect page of another payment type or an unknown transaction is 404', async () => {
    const c = await charge('kredivo');
    expect((await fetch(`${sim.baseUrl}/v2/akulaku/redirect/${s(c.body.transaction_id)}`)).status).toBe(404);
    expect((await fetch(`${sim.baseUrl}/v2/kredivo/redirect/nope`)).status).toBe(404);
  });
});

async function decodeQr(url: string): Promise<string> {
  const r = await fetch(url);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('image/png');
  const png = PNG.sync.read(Buffer.from(await r.arrayBuffer()));
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  if (!code) throw new Error('no QR code in the PNG');
  return code.data;
}

function action(body: J, name: string): J {
  const a = arr(body.actions).find((x) => x.name === name);
  if (!a) throw new Error(`no action ${name}`);
  return a;
}

describe('actions[] of GoPay, ShopeePay and QRIS are served', () => {
  it('QRIS generate-qr-code is a PNG whose QR code is the qr_string', async () => {
    const c = await charge('qris');
    expect(await decodeQr(s(action(c.body, 'generate-qr-code').url))).toBe(s(c.body.qr_string));
  });

  it('GoPay: a real QR PNG, the deeplink page pays, get-status and cancel answer as Core', async () => {
    const c = await charge('gopay');
    const qr = await decodeQr(s(action(c.body, 'generate-qr-code').url));
    expect(qr).toMatch(/^000201/);
    const status = action(c.body, 'get-status');
    expect(status.method).toBe('GET');
    expect((await call(sim.baseUrl, 'GET', new URL(s(status.url)).pathname)).body).toMatchObject({
      transaction_status: 'pending',
    });
    await pressPay(s(action(c.body, 'deeplink-redirect').url));
    expect(await notified(s(c.body.order_id), 'settlement')).toMatchObject({ payment_type: 'gopay' });
    // The page the customer lands on says the outcome once (the window title aside).
    const landed = await (await fetch(s(action(c.body, 'deeplink-redirect').url))).text();
    const body = landed.slice(landed.indexOf('<body>'));
    expect(body.match(/Payment successful/g)).toHaveLength(1);
    expect(body).toContain('<div id="result" data-status="settlement">Payment successful</div>');
    expect(body).toContain('<h1>Thank you</h1>');

    const other = await charge('gopay');
    const cancel = action(other.body, 'cancel');
    expect(cancel.method).toBe('POST');
    expect((await call(sim.baseUrl, 'POST', new URL(s(cancel.url)).pathname)).body).toMatchObject({
      status_code: '200',
      transaction_status: 'cancel',
    });
  });

  it('ShopeePay deeplink-redirect page pays', async () => {
    const c = await charge('shopeepay');
    await pressPay(s(action(c.body, 'deeplink-redirect').url));
    expect(await notified(s(c.body.order_id), 'settlement')).toMatchObject({ payment_type: 'shopeepay' });
  });

  it('a QR code of another payment type or an unknown transaction is 404', async () => {
    const c = await charge('gopay');
    expect((await fetch(`${sim.baseUrl}/v2/qris/${s(c.body.transaction_id)}/qr-code`)).status).toBe(404);
    expect((await fetch(`${sim.baseUrl}/v2/gopay/nope/qr-code`)).status).toBe(404);
    expect((await fetch(`${sim.baseUrl}/v2/shopeepay/${s(c.body.transaction_id)}/deeplink`)).status).toBe(404);
  });
});

describe("out of scope paths answer the gateway's 404 shape", () => {
  it('Iris', async () => {
    for (const [method, path] of [
      ['POST', '/iris/api/v1/payouts'],
      ['GET', '/iris/api/v1/balance'],
      ['POST', '/api/v1/payouts'],
    ] as const) {
      const r = await call(sim.baseUrl, method, path, { body: method === 'POST' ? {} : undefined });
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ status: 404, error: 'Not Found', path });
    }
  });
});
