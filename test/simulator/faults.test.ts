import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { arr, basic, call, charge, chargeBody, oid, s, start } from './helpers.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(async () => {
  await sim.close();
});
afterEach(async () => {
  await call(sim.baseUrl, 'DELETE', '/_sim/faults', { auth: false });
});

const faults = (body: unknown) => call(sim.baseUrl, 'PUT', '/_sim/faults', { auth: false, body });

describe('fault settings', () => {
  it('PUT validates, GET returns, DELETE clears', async () => {
    expect((await faults({ error_rate: 2 })).status).toBe(400);
    expect((await faults({ bogus: true })).status).toBe(400);
    expect((await faults({ status: 200 })).status).toBe(400);
    expect((await faults({ core_http_status: 'weird' })).status).toBe(400);
    expect((await faults({ latency_ms: -1 })).status).toBe(400);
    const ok = await faults({ latency_ms: 5, duplicate_rate: 0.5, reorder: true, core_http_status: 'body' });
    expect(ok.status).toBe(200);
    expect((await call(sim.baseUrl, 'GET', '/_sim/faults', { auth: false })).body).toMatchObject({
      latency_ms: 5,
      duplicate_rate: 0.5,
      reorder: true,
      core_http_status: 'body',
      error_rate: 0,
    });
    const cleared = await call(sim.baseUrl, 'DELETE', '/_sim/faults', { auth: false });
    expect(cleared.body).toMatchObject({
      latency_ms: 0,
      duplicate_rate: 0,
      reorder: false,
      core_http_status: 'mirror',
    });
  });

  it('latency delays gateway answers only', async () => {
    await faults({ latency_ms: 600 });
    let t = Date.now();
    await call(sim.baseUrl, 'GET', '/v2/x/status');
    expect(Date.now() - t).toBeGreaterThanOrEqual(590);
    t = Date.now();
    await call(sim.baseUrl, 'GET', '/_sim/faults', { auth: false });
    await fetch(`${sim.baseUrl}/payment-links/none`);
    expect(Date.now() - t).toBeLessThan(500);
  });

  it('error_rate answers the configured status with each API’s error body and does nothing', async () => {
    await faults({ error_rate: 1, status: 503 });
    const id = oid();
    const core = await charge(sim.baseUrl, id);
    expect(core.status).toBe(503);
    expect(core.body).toMatchObject({ status_code: '503' });
    const snap = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: id, gross_amount: 1 } },
    });
    expect(snap.status).toBe(503);
    expect(Array.isArray(snap.body.error_messages)).toBe(true);
    const link = await call(sim.baseUrl, 'POST', '/v1/payment-links', {
      body: { transaction_details: { order_id: id, gross_amount: 1 } },
    });
    expect(link.status).toBe(503);
    expect((await call(sim.baseUrl, 'GET', '/_sim/faults', { auth: false })).status).toBe(200);
    await call(sim.baseUrl, 'DELETE', '/_sim/faults', { auth: false });
    expect((await call(sim.baseUrl, 'GET', `/v2/${id}/status`)).status).toBe(404);
    expect((await charge(sim.baseUrl, id)).body.status_code).toBe('201');
  });

  it('error_rate 0.5 with a seed fails some and passes some', async () => {
    await faults({ error_rate: 0.5 });
    const statuses = new Set<number>();
    for (let i = 0; i < 20; i++) statuses.add((await call(sim.baseUrl, 'GET', '/v2/x/status')).status);
    expect([...statuses].sort()).toEqual([404, 500]);
  });

  it('timeout_rate performs the operation, then never answers; an Idempotency-Key retry gets the stored answer', async () => {
    await faults({ timeout_rate: 1 });
    const id = oid();
    const key = `to-${id}`;
    const attempt = fetch(`${sim.baseUrl}/v2/charge`, {
      method: 'POST',
      headers: { authorization: basic(), 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(chargeBody(id)),
      signal: AbortSignal.timeout(300),
    });
    await expect(attempt).rejects.toThrow();
    await call(sim.baseUrl, 'DELETE', '/_sim/faults', { auth: false });
    const st = await call(sim.baseUrl, 'GET', `/v2/${id}/status`);
    expect(st.body).toMatchObject({ status_code: '201', transaction_status: 'pending' });
    const retry = await charge(sim.baseUrl, id, {}, { 'idempotency-key': key });
    expect(retry.body).toMatchObject({ status_code: '201', transaction_id: st.body.transaction_id });
    expect((await charge(sim.baseUrl, id)).body.status_code).toBe('406');
  });

  it('a held request does not keep close() waiting', async () => {
    const other = await start();
    await call(other.baseUrl, 'PUT', '/_sim/faults', { auth: false, body: { timeout_rate: 1 } });
    const pending = fetch(`${other.baseUrl}/v2/x/status`, { headers: { authorization: basic() } }).then(
      (r) => r.status,
      () => 'aborted',
    );
    await new Promise((r) => setTimeout(r, 50));
    const t = Date.now();
    await other.close();
    expect(Date.now() - t).toBeLessThan(2000);
    expect(await pending).toBe('aborted');
  });

  it("core_http_status 'body' answers business errors with HTTP 200; validation and auth stay 400/401", async () => {
    await faults({ core_http_status: 'body' });
    const id = oid();
    await charge(sim.baseUrl, id);
    const dup = await charge(sim.baseUrl, id);
    expect(dup.status).toBe(200);
    expect(dup.body.status_code).toBe('406');
    const missing = await call(sim.baseUrl, 'GET', '/v2/none/status');
    expect(missing.status).toBe(200);
    expect(missing.body.status_code).toBe('404');
    expect((await call(sim.baseUrl, 'POST', `/v2/${id}/approve`)).status).toBe(200);
    expect((await call(sim.baseUrl, 'POST', '/v2/charge', { body: chargeBody(oid(), 0) })).status).toBe(400);
    expect((await call(sim.baseUrl, 'GET', '/v2/none/status', { auth: false })).status).toBe(401);
  });

  it('faults never touch hosted pages or the control API', async () => {
    const t = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: oid(), gross_amount: 1000 } },
    });
    await faults({ error_rate: 1 });
    expect((await fetch(s(t.body.redirect_url))).status).toBe(200);
    expect((await call(sim.baseUrl, 'GET', '/_sim/transactions', { auth: false })).status).toBe(200);
  });
});

describe('request log', () => {
  it('records gateway calls with method, path, body and idempotency key, never secrets', async () => {
    const id = oid();
    await charge(
      sim.baseUrl,
      id,
      { payment_type: 'credit_card', credit_card: { token_id: 'secret-token' } },
      { 'idempotency-key': `log-${id}` },
    );
    await call(sim.baseUrl, 'GET', `/v2/${id}/status`);
    const r = await call(sim.baseUrl, 'GET', `/_sim/requests?path=${id}`, { auth: false });
    const mine = arr(
      (await call(sim.baseUrl, 'GET', '/_sim/requests?path=/v2/charge', { auth: false })).body.requests,
    ).filter((x) => x.idempotency_key === `log-${id}`);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      method: 'POST',
      path: '/v2/charge',
      api: 'core',
      status: 200,
      body: { credit_card: { token_id: '****' } },
    });
    expect(JSON.stringify(mine[0])).not.toContain('secret-token');
    expect(JSON.stringify(mine[0])).not.toContain('SB-Mid-server-test-key');
    expect(arr(r.body.requests).map((x) => x.method)).toEqual(['GET']);
  });
});
