import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { midtransSignature, type RunningSimulator } from '../../simulator/index.js';
import {
  arr,
  call,
  charge,
  KEY,
  notifications,
  oid,
  receiver,
  start,
  waitFor,
  type J,
  type Receiver,
} from './helpers.js';

/** Each test owns its simulator and receivers, so tests can run concurrently; `fin` is the test's onTestFinished. */
type Fin = (fn: () => Promise<void>) => void;

async function setup(
  fin: Fin,
  answer?: Parameters<typeof receiver>[0],
  timeScale = 0.00002,
): Promise<{ sim: RunningSimulator; rcv: Receiver }> {
  const rcv = await receiver(answer);
  const sim = await start({ notificationUrl: rcv.url, timeScale });
  fin(() => sim.close());
  fin(() => rcv.close());
  return { sim, rcv };
}

async function settled(base: string, orderId: string, predicate: (n: J) => boolean, timeoutMs = 6000): Promise<J[]> {
  return waitFor(async () => {
    const list = await notifications(base, `?order_id=${orderId}`);
    return list.length > 0 && list.every(predicate) ? list : undefined;
  }, timeoutMs);
}
const finished = (n: J): boolean => ['delivered', 'failed', 'dropped', 'no_url'].includes(String(n.outcome));

describe('notification payload', () => {
  it('midtransSignature matches a fixed SHA-512 vector', () => {
    expect(midtransSignature('order-101o-1578557780', '200', '162500.00', 'SB-Mid-server-abc')).toBe(
      '25508650908c99096e5b4842c4665843fc79eb4b34c6a1862719016c8468a2a20e1d0c5c6b226b67941ac295f4f3b2889e9ac67d0e626c85a01d6b43c5c96d9b',
    );
  });

  it('carries the real fields, headers and a signature that verifies', async ({ onTestFinished: fin }) => {
    const { sim, rcv } = await setup(fin);
    const id = oid();
    await charge(sim.baseUrl, id, { custom_field2: 'cf2', metadata: { a: 1 } });
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
    await waitFor(() => (rcv.received.length >= 2 ? true : undefined));
    const [pending, settlement] = rcv.received;
    expect(pending?.headers['content-type']).toBe('application/json');
    expect(pending?.headers.accept).toBe('application/json');
    expect(pending?.headers['user-agent']).toBe('Veritrans');
    expect(pending?.body).toMatchObject({
      transaction_status: 'pending',
      status_code: '201',
      status_message: 'midtrans payment notification',
      custom_field2: 'cf2',
      metadata: { a: 1 },
    });
    expect(settlement?.body).toMatchObject({
      transaction_status: 'settlement',
      status_code: '200',
      order_id: id,
      gross_amount: '150000.00',
      currency: 'IDR',
      payment_type: 'bank_transfer',
      merchant_id: 'G123456789',
      fraud_status: 'accept',
    });
    for (const r of rcv.received) {
      const b = r.body;
      const expected = createHash('sha512')
        .update(`${String(b.order_id)}${String(b.status_code)}${String(b.gross_amount)}${KEY}`)
        .digest('hex');
      expect(b.signature_key).toBe(expected);
      expect(String(b.transaction_time)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    }
    expect(String(settlement?.body.settlement_time)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(arr(settlement?.body.va_numbers)[0]).toMatchObject({ bank: 'bca' });
  });

  it('uses status_code 202 for expire, cancel and deny, 200 for refund (sent twice, then with bank_confirmed_at)', async ({
    onTestFinished: fin,
  }) => {
    const { sim, rcv } = await setup(fin);
    const ids = { expire: oid(), cancel: oid(), deny: oid(), refund: oid() };
    for (const [action, id] of Object.entries(ids)) {
      await charge(sim.baseUrl, id, action === 'refund' ? { payment_type: 'gopay' } : {});
      if (action === 'refund') await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
      await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/${action}`, { auth: false });
    }
    await waitFor(() => (rcv.received.length >= 10 ? true : undefined));
    const last = (id: string): J[] => rcv.received.filter((r) => r.body.order_id === id).map((r) => r.body);
    expect(last(ids.expire).at(-1)).toMatchObject({ transaction_status: 'expire', status_code: '202' });
    expect(last(ids.cancel).at(-1)).toMatchObject({ transaction_status: 'cancel', status_code: '202' });
    expect(last(ids.deny).at(-1)).toMatchObject({ transaction_status: 'deny', status_code: '202' });
    const refunds = last(ids.refund).filter((b) => b.transaction_status === 'refund');
    expect(refunds).toHaveLength(2);
    expect(refunds.map((b) => b.status_code)).toEqual(['200', '200']);
    expect(arr(refunds[0]?.refunds)[0]?.bank_confirmed_at).toBeUndefined();
    expect(arr(refunds[1]?.refunds)[0]?.bank_confirmed_at).toBeDefined();
  });

  it('expires a pending transaction automatically at expiry_time and notifies', async ({ onTestFinished: fin }) => {
    const { sim, rcv } = await setup(fin);
    const id = oid();
    await charge(sim.baseUrl, id, { custom_expiry: { expiry_duration: 1, unit: 'second' } });
    await waitFor(
      () =>
        rcv.received.some((r) => r.body.order_id === id && r.body.transaction_status === 'expire') ? true : undefined,
      4000,
    );
    expect((await call(sim.baseUrl, 'GET', `/v2/${id}/status`)).body.status_code).toBe('407');
  });

  it('honours X-Override-Notification and X-Append-Notification (max 3 URLs)', async ({ onTestFinished: fin }) => {
    const { sim, rcv } = await setup(fin);
    const extra = await receiver();
    const extra2 = await receiver();
    fin(() => extra.close());
    fin(() => extra2.close());
    const o = oid();
    await charge(sim.baseUrl, o, {}, { 'x-override-notification': `${extra.url},${extra2.url}` });
    const a = oid();
    await charge(sim.baseUrl, a, {}, { 'x-append-notification': extra.url });
    const snapId = oid();
    await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: snapId, gross_amount: 1000 } },
      headers: { 'x-override-notification': extra2.url },
    });
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${snapId}/pay`, { auth: false });
    await waitFor(() => (extra2.received.length >= 3 ? true : undefined));
    const ids = (r: Receiver): unknown[] => r.received.map((x) => x.body.order_id);
    expect(ids(rcv)).toEqual([a]);
    expect(ids(extra)).toEqual([o, a]);
    expect(ids(extra2)).toEqual([o, snapId, snapId]);
    const four = oid();
    const urls = ['a', 'b', 'c', 'd'].map((x) => `http://127.0.0.1:9/${x}`).join(',');
    await charge(sim.baseUrl, four, {}, { 'x-override-notification': urls });
    const t = await call(sim.baseUrl, 'GET', `/_sim/transactions/${four}`, { auth: false });
    expect(t.body._sim).toMatchObject({
      notify: { override: ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b', 'http://127.0.0.1:9/c'] },
    });
  });
});

describe('retry schedule by receiver answer', () => {
  const cases: [string, (n: number) => number, number][] = [
    ['503 then 200 → 2 attempts', (n) => (n === 0 ? 503 : 200), 2],
    ['500 always → 1 retry', () => 500, 2],
    ['503 always → 4 retries', () => 503, 5],
    ['404 always → 2 retries', () => 404, 3],
    ['400 always → 2 retries', () => 400, 3],
    ['302 → no retry', () => 302, 1],
    ['418 → 5 retries', () => 418, 6],
  ];
  for (const [name, answer, attempts] of cases) {
    it.concurrent(name, async ({ onTestFinished: fin }) => {
      const { sim, rcv } = await setup(fin, answer);
      const id = oid();
      await charge(sim.baseUrl, id);
      const list = await settled(sim.baseUrl, id, finished);
      expect(list).toHaveLength(1);
      expect(arr(list[0]?.attempts)).toHaveLength(attempts);
      expect(rcv.received).toHaveLength(attempts);
      expect(list[0]?.outcome).toBe(answer(attempts - 1) === 200 ? 'delivered' : 'failed');
    });
  }

  it('retries are spaced by the scaled 2/10/30/90/210-minute schedule', async ({ onTestFinished: fin }) => {
    const { sim, rcv } = await setup(fin, () => 503, 0.0001);
    await charge(sim.baseUrl, oid());
    await waitFor(() => (rcv.received.length >= 5 ? true : undefined), 6000);
    const gaps = rcv.received.slice(1).map((r, i) => r.at - (rcv.received[i]?.at ?? 0));
    const scaled = [2, 10, 30, 90].map((m) => m * 60_000 * 0.0001);
    gaps.forEach((g, i) => {
      expect(g).toBeGreaterThanOrEqual((scaled[i] ?? 0) * 0.5 - 5);
      expect(g).toBeLessThanOrEqual((scaled[i] ?? 0) + 400);
    });
  });

  it.concurrent('connection refused → 5 retries', async ({ onTestFinished: fin }) => {
    const dead = await receiver();
    await dead.close();
    const sim = await start({ notificationUrl: dead.url, timeScale: 0.00002 });
    fin(() => sim.close());
    const id = oid();
    await charge(sim.baseUrl, id);
    const [n] = await settled(sim.baseUrl, id, finished);
    expect(arr(n?.attempts)).toHaveLength(6);
    expect(String(arr(n?.attempts)[0]?.error)).toMatch(/ECONNREFUSED|connect/i);
  });

  it('a timeout counts as a failure (short timeout option)', async ({ onTestFinished: fin }) => {
    const rcv = await receiver();
    const slow = await import('node:http').then(
      ({ createServer }) =>
        new Promise<{ url: string; close: () => Promise<void> }>((resolve) => {
          const srv = createServer(() => undefined);
          srv.listen(0, '127.0.0.1', () => {
            const addr = srv.address();
            const port = typeof addr === 'object' && addr ? addr.port : 0;
            resolve({
              url: `http://127.0.0.1:${port}/`,
              close: () =>
                new Promise((r) => {
                  srv.closeAllConnections();
                  srv.close(() => r());
                }),
            });
          });
        }),
    );
    const sim = await start({ notificationUrl: slow.url, timeScale: 0.00002, notificationTimeoutMs: 50 });
    fin(() => sim.close());
    fin(() => slow.close());
    fin(() => rcv.close());
    const id = oid();
    await charge(sim.baseUrl, id);
    const [n] = await settled(sim.baseUrl, id, finished, 8000);
    expect(arr(n?.attempts)).toHaveLength(6);
    expect(String(arr(n?.attempts)[0]?.error)).toMatch(/timeout|abort/i);
  });

  it('307 is followed with the same POST body', async ({ onTestFinished: fin }) => {
    const target = await receiver();
    fin(() => target.close());
    const { sim, rcv } = await setup(fin, (n, req) =>
      req.url === '/hook' ? { status: 307, location: target.url } : 200,
    );
    const id = oid();
    await charge(sim.baseUrl, id);
    await waitFor(() => (target.received.length >= 1 ? true : undefined));
    expect(target.received[0]?.body.order_id).toBe(id);
    expect(rcv.received).toHaveLength(1);
    const [n] = await settled(sim.baseUrl, id, finished);
    expect(n?.outcome).toBe('delivered');
    expect(arr(n?.attempts)[0]?.redirects).toEqual([target.url]);
  });
});

describe('notification faults', () => {
  it('duplicate_rate=1 sends every notification twice', async ({ onTestFinished: fin }) => {
    const { sim, rcv } = await setup(fin);
    await call(sim.baseUrl, 'PUT', '/_sim/faults', { auth: false, body: { duplicate_rate: 1 } });
    const id = oid();
    await charge(sim.baseUrl, id);
    await waitFor(() => (rcv.received.length >= 2 ? true : undefined));
    expect(rcv.received.map((r) => r.body.transaction_id)).toEqual([
      rcv.received[0]?.body.transaction_id,
      rcv.received[0]?.body.transaction_id,
    ]);
    expect((await notifications(sim.baseUrl, `?order_id=${id}`)).map((n) => n.duplicate)).toEqual([false, true]);
  });

  it('drop_rate=1 never sends (reconciliation must find it)', async ({ onTestFinished: fin }) => {
    const { sim, rcv } = await setup(fin);
    await call(sim.baseUrl, 'PUT', '/_sim/faults', { auth: false, body: { drop_rate: 1 } });
    const id = oid();
    await charge(sim.baseUrl, id);
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
    await new Promise((r) => setTimeout(r, 100));
    expect(rcv.received).toHaveLength(0);
    expect((await notifications(sim.baseUrl, `?order_id=${id}`)).map((n) => n.outcome)).toEqual(['dropped', 'dropped']);
    expect((await call(sim.baseUrl, 'GET', `/v2/${id}/status`)).body.transaction_status).toBe('settlement');
  });

  it('reorder holds a transaction’s notifications and sends them newest first', async ({ onTestFinished: fin }) => {
    const { sim, rcv } = await setup(fin);
    await call(sim.baseUrl, 'PUT', '/_sim/faults', { auth: false, body: { reorder: true } });
    const id = oid();
    await charge(sim.baseUrl, id);
    await new Promise((r) => setTimeout(r, 50));
    expect(rcv.received).toHaveLength(0);
    expect((await notifications(sim.baseUrl, `?order_id=${id}`))[0]?.outcome).toBe('held');
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
    await waitFor(() => (rcv.received.length >= 2 ? true : undefined));
    expect(rcv.received.map((r) => r.body.transaction_status)).toEqual(['settlement', 'pending']);
    // the held pending notification is what the gateway said then: no payment in it yet
    const pending = rcv.received.find((r) => r.body.transaction_status === 'pending');
    expect(pending?.body.settlement_time).toBeUndefined();
    expect(arr(pending?.body.payment_amounts ?? [])).toHaveLength(0);
  });

  it('clearing reorder releases held notifications', async ({ onTestFinished: fin }) => {
    const { sim, rcv } = await setup(fin);
    await call(sim.baseUrl, 'PUT', '/_sim/faults', { auth: false, body: { reorder: true } });
    await charge(sim.baseUrl, oid());
    await call(sim.baseUrl, 'DELETE', '/_sim/faults', { auth: false });
    await waitFor(() => (rcv.received.length >= 1 ? true : undefined));
    expect(rcv.received[0]?.body.transaction_status).toBe('pending');
  });

  it('without a notification URL the notification is recorded as no_url; the URL can be set later', async ({
    onTestFinished: fin,
  }) => {
    const sim = await start();
    const rcv = await receiver();
    fin(() => sim.close());
    fin(() => rcv.close());
    const id = oid();
    await charge(sim.baseUrl, id);
    expect((await notifications(sim.baseUrl, `?order_id=${id}`))[0]?.outcome).toBe('no_url');
    sim.setNotificationUrl(rcv.url);
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
    await waitFor(() => (rcv.received.length >= 1 ? true : undefined));
    expect(rcv.received[0]?.body.transaction_status).toBe('settlement');
  });
});
