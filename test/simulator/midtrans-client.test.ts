import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { call, KEY, notifications, oid, start } from './helpers.js';

type Midtrans = typeof import('midtrans-client');
type ApiConfigClass = typeof import('midtrans-client/lib/apiConfig');

const require = createRequire(import.meta.url);
const midtrans = require('midtrans-client') as Midtrans;
const ApiConfig = require('midtrans-client/lib/apiConfig') as ApiConfigClass;

let sim: RunningSimulator;
let saved: { core: string; snap: string };

beforeAll(async () => {
  sim = await start();
  saved = { core: ApiConfig.CORE_SANDBOX_BASE_URL, snap: ApiConfig.SNAP_SANDBOX_BASE_URL };
  ApiConfig.CORE_SANDBOX_BASE_URL = sim.baseUrl;
  ApiConfig.SNAP_SANDBOX_BASE_URL = `${sim.baseUrl}/snap/v1`;
});
afterAll(async () => {
  ApiConfig.CORE_SANDBOX_BASE_URL = saved.core;
  ApiConfig.SNAP_SANDBOX_BASE_URL = saved.snap;
  await sim.close();
});

const core = (serverKey = KEY): InstanceType<Midtrans['CoreApi']> =>
  new midtrans.CoreApi({ isProduction: false, serverKey, clientKey: 'SB-Mid-client-x' });
const snap = (serverKey = KEY): InstanceType<Midtrans['Snap']> =>
  new midtrans.Snap({ isProduction: false, serverKey, clientKey: 'SB-Mid-client-x' });

function bcaCharge(orderId: string): object {
  return {
    payment_type: 'bank_transfer',
    transaction_details: { order_id: orderId, gross_amount: 44000 },
    bank_transfer: { bank: 'bca' },
  };
}

async function rejection(p: Promise<unknown>): Promise<InstanceType<Midtrans['MidtransError']>> {
  try {
    await p;
  } catch (err) {
    if (err instanceof midtrans.MidtransError) return err;
    throw err;
  }
  throw new Error('expected a MidtransError');
}

describe('official midtrans-client against the simulator', () => {
  it('Snap createTransaction returns token and redirect_url', async () => {
    const r = await snap().createTransaction({ transaction_details: { order_id: oid('mc'), gross_amount: 10000 } });
    expect(r.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.redirect_url).toBe(`${sim.baseUrl}/snap/v3/redirection/${r.token}`);
    const url = await snap().createTransactionRedirectUrl({
      transaction_details: { order_id: oid('mc'), gross_amount: 10000 },
    });
    expect((await fetch(url)).status).toBe(200);
  });

  it('Snap validation error (gross_amount 0) rejects with HTTP 400 and error_messages', async () => {
    const e = await rejection(
      snap().createTransaction({ transaction_details: { order_id: oid('mc'), gross_amount: 0 } }),
    );
    expect(e.httpStatusCode).toBe(400);
    expect(e.ApiResponse).toMatchObject({ error_messages: expect.any(Array) });
  });

  it('Core charge of a BCA VA: 201 pending with va_numbers; status; cancel 200', async () => {
    const id = oid('mc');
    const c = await core().charge(bcaCharge(id));
    expect(c).toMatchObject({ status_code: '201', transaction_status: 'pending', va_numbers: [{ bank: 'bca' }] });
    const st = await core().transaction.status(id);
    expect(st).toMatchObject({ status_code: '201', order_id: id, transaction_id: c.transaction_id });
    const cancel = await core().transaction.cancel(id);
    expect(cancel).toMatchObject({ status_code: '200', transaction_status: 'cancel' });
  });

  it('Core charge with gross_amount 0 rejects with HTTP 400 and validation_messages', async () => {
    const e = await rejection(
      core().charge({ ...bcaCharge(oid('mc')), transaction_details: { order_id: oid('mc'), gross_amount: 0 } }),
    );
    expect(e.httpStatusCode).toBe(400);
    expect(e.ApiResponse).toMatchObject({ status_code: '400', validation_messages: expect.any(Array) });
  });

  it("expire answers '407' and the client resolves (407 is whitelisted)", async () => {
    const id = oid('mc');
    await core().charge(bcaCharge(id));
    const r = await core().transaction.expire(id);
    expect(r).toMatchObject({ status_code: '407', transaction_status: 'expire' });
    expect(await core().transaction.status(id)).toMatchObject({ status_code: '407' });
  });

  it('approve / deny / refund of a pending VA reject with 412', async () => {
    const id = oid('mc');
    await core().charge(bcaCharge(id));
    for (const p of [
      core().transaction.approve(id),
      core().transaction.deny(id),
      core().transaction.refund(id, { amount: 1 }),
    ]) {
      const e = await rejection(p);
      expect(e.ApiResponse).toMatchObject({ status_code: '412' });
    }
  });

  it('transaction.notification re-fetches the status of a captured notification', async () => {
    const rcvd = await import('./helpers.js').then((h) => h.receiver());
    sim.setNotificationUrl(rcvd.url);
    try {
      const id = oid('mc');
      await core().charge(bcaCharge(id));
      await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
      const [, settled] = await notifications(sim.baseUrl, `?order_id=${id}`);
      const json = JSON.stringify(settled?.payload);
      const r = await core().transaction.notification(json);
      expect(r).toMatchObject({ order_id: id, transaction_status: 'settlement', status_code: '200' });
    } finally {
      sim.setNotificationUrl(undefined);
      await rcvd.close();
    }
  });

  it('unknown order status rejects with MidtransError (404)', async () => {
    const e = await rejection(core().transaction.status('no-such-order'));
    expect(e.httpStatusCode).toBe(404);
    expect(e.ApiResponse).toMatchObject({ status_code: '404', status_message: "Transaction doesn't exist." });
    await call(sim.baseUrl, 'PUT', '/_sim/faults', { auth: false, body: { core_http_status: 'body' } });
    try {
      const e2 = await rejection(core().transaction.status('no-such-order'));
      expect(e2.httpStatusCode).toBe('404');
    } finally {
      await call(sim.baseUrl, 'DELETE', '/_sim/faults', { auth: false });
    }
  });

  it('a wrong server key rejects with 401 on Core and Snap', async () => {
    const e = await rejection(core('SB-Mid-server-wrong').charge(bcaCharge(oid('mc'))));
    expect(e.httpStatusCode).toBe(401);
    expect(e.ApiResponse).toMatchObject({ status_code: '401' });
    const s = await rejection(
      snap('').createTransaction({ transaction_details: { order_id: oid('mc'), gross_amount: 1000 } }),
    );
    expect(s.httpStatusCode).toBe(401);
  });

  it('X-Override-Notification set through the axios defaults is honoured', async () => {
    const h = await import('./helpers.js');
    const rcvd = await h.receiver();
    try {
      const c = core();
      c.httpClient.http_client.defaults.headers.common['X-Override-Notification'] = rcvd.url;
      const id = oid('mc');
      await c.charge(bcaCharge(id));
      await h.waitFor(() => (rcvd.received.length > 0 ? true : undefined));
      expect(rcvd.received[0]?.body.order_id).toBe(id);
    } finally {
      await rcvd.close();
    }
  });
});
