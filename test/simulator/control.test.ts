import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { arr, call, charge, oid, start } from './helpers.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(async () => {
  await sim.close();
});

const ctl = (path: string, body?: unknown, method = 'POST') => call(sim.baseUrl, method, path, { auth: false, body });

describe('control API', () => {
  it('pay settles a pending charge, and pay on a Snap order creates and settles the transaction', async () => {
    const id = oid();
    await charge(sim.baseUrl, id);
    expect((await ctl(`/_sim/transactions/${id}/pay`)).body).toMatchObject({
      transaction_status: 'settlement',
      status_code: '200',
      order_id: id,
    });
    expect((await ctl(`/_sim/transactions/${id}/pay`)).status).toBe(409);
    const snapId = oid();
    await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: snapId, gross_amount: 5000 } },
    });
    const paid = await ctl(`/_sim/transactions/${snapId}/pay`, { payment_type: 'qris' });
    expect(paid.body).toMatchObject({
      order_id: snapId,
      transaction_status: 'settlement',
      payment_type: 'qris',
      issuer: 'gopay',
      transaction_type: 'on-us',
    });
  });

  it('pay with a card payment type captures; challenge, deny and refund work as forced transitions', async () => {
    const id = oid();
    await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: id, gross_amount: 50000 } },
    });
    expect((await ctl(`/_sim/transactions/${id}/pay`, { payment_type: 'credit_card' })).body).toMatchObject({
      transaction_status: 'capture',
      fraud_status: 'accept',
    });
    expect((await ctl(`/_sim/transactions/${id}/challenge`)).body).toMatchObject({
      transaction_status: 'capture',
      fraud_status: 'challenge',
      status_code: '201',
    });
    expect((await ctl(`/_sim/transactions/${id}/deny`)).body).toMatchObject({
      transaction_status: 'deny',
      status_code: '202',
    });
    const r = oid();
    await charge(sim.baseUrl, r);
    await ctl(`/_sim/transactions/${r}/pay`);
    expect((await ctl(`/_sim/transactions/${r}/refund`, { amount: 1000 })).body).toMatchObject({
      transaction_status: 'partial_refund',
    });
  });

  it('unknown ids → 404, unknown actions → 404, bad payment_type → 400', async () => {
    expect((await ctl('/_sim/transactions/none/pay')).status).toBe(404);
    expect((await ctl('/_sim/transactions/none/expire')).status).toBe(404);
    const id = oid();
    await charge(sim.baseUrl, id);
    expect((await ctl(`/_sim/transactions/${id}/explode`)).status).toBe(404);
    const snapId = oid();
    await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: snapId, gross_amount: 5000 } },
    });
    expect((await ctl(`/_sim/transactions/${snapId}/pay`, { payment_type: 'bitcoin' })).status).toBe(400);
  });

  it('lists and shows transactions; config can be read and changed; reset clears state', async () => {
    const id = oid();
    await charge(sim.baseUrl, id);
    const one = await ctl(`/_sim/transactions/${id}`, undefined, 'GET');
    expect(one.body).toMatchObject({ order_id: id, _sim: { method: 'bca_va', source: { kind: 'core' } } });
    expect(
      arr((await ctl('/_sim/transactions', undefined, 'GET')).body.transactions).some((t) => t.order_id === id),
    ).toBe(true);
    expect((await ctl('/_sim/config', { time_scale: 0 }, 'PUT')).status).toBe(400);
    expect((await ctl('/_sim/config', { nope: 1 }, 'PUT')).status).toBe(400);
    expect((await ctl('/_sim/config', { notification_url: 'ftp://x' }, 'PUT')).status).toBe(400);
    const cfg = await ctl('/_sim/config', { notification_url: 'http://127.0.0.1:9/hook', time_scale: 0.5 }, 'PUT');
    expect(cfg.body).toMatchObject({
      notification_url: 'http://127.0.0.1:9/hook',
      time_scale: 0.5,
      base_url: sim.baseUrl,
    });
    await ctl('/_sim/config', { notification_url: null }, 'PUT');
    await ctl('/_sim/faults', { latency_ms: 1 }, 'PUT');
    expect((await ctl('/_sim/reset')).body).toEqual({ reset: true });
    expect((await call(sim.baseUrl, 'GET', `/v2/${id}/status`)).status).toBe(404);
    expect(arr((await ctl('/_sim/requests', undefined, 'GET')).body.requests)).toHaveLength(1);
    expect((await ctl('/_sim/faults', undefined, 'GET')).body.latency_ms).toBe(0);
    expect((await charge(sim.baseUrl, id)).body.status_code).toBe('201');
  });

  it('unknown control paths answer JSON 404', async () => {
    const r = await ctl('/_sim/nothing', undefined, 'GET');
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('not_found');
  });
});
