import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';

const KEY = 'erp-key-0123456789';
const ENDPOINTS: Array<{ method: 'GET' | 'POST' | 'DELETE'; url: string; payload?: object }> = [
  { method: 'POST', url: '/api/payment-links', payload: { order_id: 'A-1', nominal: 1000 } },
  {
    method: 'POST',
    url: '/createtransaksi',
    payload: { mercant_id: 'M', item: [{ name: 'a', price: 1000, quantity: 1 }] },
  },
  { method: 'GET', url: '/api/payment-links/A-1' },
  { method: 'DELETE', url: '/api/payment-links/A-1' },
  { method: 'POST', url: '/api/charge', payload: { order_id: 'C-1', nominal: 1000, payment_type: 'qris' } },
  { method: 'POST', url: '/api/snap/token', payload: { order_id: 'S-1', nominal: 1000 } },
  { method: 'GET', url: '/api/payments/A-1/status' },
];

describe.each(DATABASE_KINDS)('API keys on the payment endpoints (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, { API_KEYS: `other-key,${KEY}` }, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => ctx.close());

  it.each(ENDPOINTS)(
    '$method $url: missing, wrong, Basic → 401 problem+json; Bearer and X-API-Key pass',
    async (ep) => {
      const bad: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer wrong' },
        { 'x-api-key': 'wrong' },
        { authorization: `Basic ${Buffer.from(`${KEY}:`).toString('base64')}` },
        { authorization: KEY },
      ];
      for (const headers of bad) {
        const res = await ctx.app.inject({ method: ep.method, url: ep.url, payload: ep.payload, headers });
        expect(res.statusCode, JSON.stringify(headers)).toBe(401);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(res.json()).toMatchObject({
          code: 'UNAUTHORIZED',
          status: 401,
          request_id: res.headers['x-request-id'],
        });
      }
      for (const headers of [{ authorization: `Bearer ${KEY}` }, { 'x-api-key': KEY }]) {
        const res = await ctx.app.inject({ method: ep.method, url: ep.url, payload: ep.payload, headers });
        // Past auth the request runs: the stored link is read (200), every gateway call fails
        // because nothing listens on port 9 (503, the gateway's code — never a 401 or a 500).
        expect([200, 503], `${JSON.stringify(headers)} → ${res.body}`).toContain(res.statusCode);
        if (res.statusCode === 503) expect(res.json().code).toMatch(/^GATEWAY_/);
      }
    },
  );
});

describe.each(DATABASE_KINDS)('Idempotency-Key on creating POSTs (%s)', (kind) => {
  let e: E2EContext;
  const auth = { authorization: `Bearer ${KEY}` };
  beforeEach(async () => {
    e = await startE2E(kind, { env: { API_KEYS: KEY } });
  });
  afterEach(async () => e.close());
  const post = (url: string, payload: object, key?: string) =>
    e.app.inject({ method: 'POST', url, payload, headers: { ...auth, ...(key ? { 'idempotency-key': key } : {}) } });
  const creates = async () => (await e.sim.requests()).filter((r) => r.method === 'POST').length;

  it('same key and body replays the first response byte for byte; a different body is 422; no extra gateway calls', async () => {
    const body = { mercant_id: 'INV/1', item: [{ id: 'x', name: 'Thing', price: 2500, quantity: 2 }] };
    const first = await post('/createtransaksi', body, 'key-1');
    expect(first.statusCode).toBe(201);
    for (let i = 0; i < 3; i++) {
      const again = await post('/createtransaksi', body, 'key-1');
      expect(again.statusCode).toBe(201);
      expect(again.body).toBe(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
    }
    const changed = await post(
      '/createtransaksi',
      { ...body, item: [{ id: 'x', name: 'Thing', price: 2500, quantity: 3 }] },
      'key-1',
    );
    expect(changed.statusCode).toBe(422);
    expect(changed.json()).toMatchObject({ code: 'IDEMPOTENCY_MISMATCH' });
    expect(await creates()).toBe(1);
    // The same key on another endpoint is another key space.
    expect((await post('/api/payment-links', { order_id: 'P-1', nominal: 5 }, 'key-1')).statusCode).toBe(201);
  });

  it('validation failures are not remembered: a corrected retry with the same key succeeds', async () => {
    const bad = await post('/api/payment-links', { order_id: 'V-1', nominal: 0 }, 'key-v');
    expect(bad.statusCode).toBe(400);
    const good = await post('/api/payment-links', { order_id: 'V-1', nominal: 10 }, 'key-v');
    expect(good.statusCode).toBe(201);
  });

  it('keys longer than 255 characters or with control characters are 400', async () => {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/payment-links',
      payload: { order_id: 'L', nominal: 1 },
      headers: { ...auth, 'idempotency-key': 'k'.repeat(256) },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await post('/api/payment-links', { order_id: 'L', nominal: 1 }, 'k'.repeat(255))).statusCode).toBe(201);
  });

  it('50 concurrent requests with one key make exactly one gateway call; the rest are replays or 409 in flight', async () => {
    await e.sim.put('/_sim/faults', { latency_ms: 150 });
    const body = { order_id: 'CONC-1', nominal: 99000 };
    const results = await Promise.all(Array.from({ length: 50 }, () => post('/api/payment-links', body, 'conc-key')));
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 201).length).toBeGreaterThanOrEqual(1);
    expect(codes.every((c) => c === 201 || c === 409)).toBe(true);
    // the gateway answers after 150 ms: the others arrive while the first is in flight
    expect(codes.filter((c) => c === 409).length).toBeGreaterThan(0);
    for (const r of results.filter((x) => x.statusCode === 409)) {
      expect(r.json()).toMatchObject({ code: 'IDEMPOTENCY_IN_FLIGHT' });
      expect(r.headers['retry-after']).toBe('1');
    }
    const bodies = new Set(results.filter((r) => r.statusCode === 201).map((r) => r.body));
    expect(bodies.size).toBe(1);
    expect(await creates()).toBe(1);
    const replay = await post('/api/payment-links', body, 'conc-key');
    expect(replay.statusCode).toBe(201);
    expect(replay.body).toBe([...bodies][0]);
  });

  it('a gateway timeout is not remembered: the retry with the same key recovers the link', async () => {
    await e.close();
    e = await startE2E(kind, { env: { API_KEYS: KEY }, serviceOptions: { gatewayTimeoutMs: 300 } });
    await e.sim.put('/_sim/faults', { timeout_rate: 1 });
    expect(
      (await post('/createtransaksi', { mercant_id: 'TO', item: [{ name: 'a', price: 10, quantity: 1 }] }, 'k-to'))
        .statusCode,
    ).toBe(504);
    await e.sim.del('/_sim/faults');
    const retry = await post(
      '/createtransaksi',
      { mercant_id: 'TO', item: [{ name: 'a', price: 10, quantity: 1 }] },
      'k-to',
    );
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toMatchObject({ order_id: 'TO:1', status: 'pending' });
    expect(await creates()).toBe(1);
  });
});

describe.each(DATABASE_KINDS)('payment link routes (%s)', (kind) => {
  let e: E2EContext;
  const auth = { authorization: `Bearer ${KEY}` };
  beforeEach(async () => {
    e = await startE2E(kind, { env: { API_KEYS: KEY } });
  });
  afterEach(async () => e.close());
  const post = (url: string, payload: object) => e.app.inject({ method: 'POST', url, payload, headers: auth });

  it('two order ids that sanitize alike are a 409 collision, never a merge', async () => {
    expect((await post('/api/payment-links', { order_id: 'A/1', nominal: 10 })).statusCode).toBe(201);
    const res = await post('/api/payment-links', { order_id: 'A:1', nominal: 10 });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'ORDER_ID_COLLISION', gateway_order_id: 'A.1' });
    expect((await e.sim.requests('/v1/payment-links')).length).toBe(1);
  });

  it('a charge or Snap token whose order id sanitizes like an existing one is a 409 collision, and the gateway is not asked', async () => {
    expect((await post('/api/charge', { order_id: 'C/1', nominal: 10_000, payment_type: 'qris' })).statusCode).toBe(
      201,
    );
    expect((await post('/api/snap/token', { order_id: 'D/1', nominal: 10_000 })).statusCode).toBe(201);
    const before = (await e.sim.requests('/v2/')).length;
    for (const [url, payload, held] of [
      ['/api/charge', { order_id: 'C:1', nominal: 10_000, payment_type: 'qris' }, 'C.1'],
      ['/api/snap/token', { order_id: 'C:1', nominal: 10_000 }, 'C.1'],
      ['/api/charge', { order_id: 'D:1', nominal: 10_000, payment_type: 'qris' }, 'D.1'],
      ['/api/snap/token', { order_id: 'D:1', nominal: 10_000 }, 'D.1'],
    ] as const) {
      const res = await post(url, payload);
      expect(res.statusCode, `${url} ${payload.order_id}`).toBe(409);
      expect(res.json()).toMatchObject({ code: 'ORDER_ID_COLLISION', gateway_order_id: held });
    }
    expect(await e.services.store.transactions.findByOrderId('C:1')).toBeUndefined();
    expect(await e.services.store.transactions.findByOrderId('D:1')).toBeUndefined();
    expect((await e.services.store.transactions.findByOrderId('C/1'))?.kind).toBe('charge');
    expect((await e.sim.requests('/v2/')).length).toBe(before);
  });

  it('an ERP order_id that sanitizes like an existing one is a 409 collision, and the refused insert keeps nothing', async () => {
    expect((await post('/api/payment-links', { order_id: 'B/1', nominal: 10 })).statusCode).toBe(201);
    const item = [{ id: 'SKU-1', name: 'n', price: 10, quantity: 1 }];
    const res = await post('/createtransaksi', { mercant_id: 'B', order_id: 'B:1', item });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'ORDER_ID_COLLISION', gateway_order_id: 'B.1' });
    expect(await e.services.store.transactions.findByOrderId('B:1')).toBeUndefined();
    expect((await e.services.store.transactions.findByOrderId('B/1'))?.status).toBe('pending');
    expect((await e.sim.requests('/v1/payment-links')).length).toBe(1);
  });

  it('ERP shape: explicit order_id, customer trimmed, enabled_payments and default expiry from runtime settings', async () => {
    await e.services.runtimeConfig.save(
      { links: { enabled_payments: ['bca_va', 'gopay'], default_expiry_minutes: 90 } },
      0,
      'test',
    );
    const res = await post('/createtransaksi', {
      mercant_id: 'SO/9',
      order_id: 'SO/9:x',
      item: [{ id: 1, name: 'n', price: '700', quantity: '2' }],
      customer: { first_name: ' Ani ', email: 'ani@example.co.id' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      order_id: 'SO/9:x',
      gateway_order_id: 'SO.9.x',
      mercant_id: 'SO/9',
      nominal: 1400,
    });
    const created = Date.parse(res.json().created_at);
    expect(Date.parse(res.json().expire_at) - created).toBeGreaterThan(89 * 60_000);
    expect(Date.parse(res.json().expire_at) - created).toBeLessThanOrEqual(90 * 60_000);
    const gw = (await e.sim.requests('/v1/payment-links'))[0]?.body as Record<string, unknown>;
    expect(gw).toMatchObject({
      enabled_payments: ['bca_va', 'gopay'],
      expiry: { duration: 90, unit: 'minutes' },
      customer_details: { first_name: 'Ani', email: 'ani@example.co.id' },
      item_details: [{ id: '1', name: 'n', price: 700, quantity: 2 }],
    });
    // Same explicit order with other items → 409; an active link with other items and no order_id → 409 as well.
    expect(
      (
        await post('/createtransaksi', {
          mercant_id: 'SO/9',
          order_id: 'SO/9:x',
          item: [{ name: 'n', price: 1, quantity: 1 }],
        })
      ).statusCode,
    ).toBe(409);
    expect(
      (await post('/createtransaksi', { mercant_id: 'SO/9', item: [{ name: 'n', price: 1, quantity: 1 }] })).statusCode,
    ).toBe(409);
  });

  it('ERP shape: a pending link past its expiry counts as expired → next attempt; a refused attempt is retried under its own number', async () => {
    await e.close();
    let shiftMs = 0;
    e = await startE2E(kind, {
      env: { API_KEYS: KEY },
      serviceOptions: { clock: { now: () => new Date(Date.now() + shiftMs) } },
    });
    const body = {
      mercant_id: 'EXP',
      item: [{ name: 'a', price: 100, quantity: 1 }],
      expire_at: new Date(Date.now() + 3_600_000).toISOString(),
    };
    expect((await post('/createtransaksi', body)).json()).toMatchObject({ order_id: 'EXP:1' });
    shiftMs = 2 * 3_600_000;
    const next = await post('/createtransaksi', {
      ...body,
      expire_at: new Date(Date.now() + shiftMs + 3_600_000).toISOString(),
    });
    expect(next.statusCode).toBe(201);
    expect(next.json()).toMatchObject({ order_id: 'EXP:2', status: 'pending' });
    shiftMs = 0;
    await e.sim.put('/_sim/faults', { error_rate: 1, status: 500 });
    const other = { mercant_id: 'REF', item: [{ name: 'a', price: 100, quantity: 1 }] };
    expect((await post('/createtransaksi', other)).statusCode).toBe(502);
    await e.sim.del('/_sim/faults');
    const retried = await post('/createtransaksi', other);
    expect(retried.statusCode).toBe(201);
    expect(retried.json()).toMatchObject({
      order_id: 'REF:1',
      status: 'pending',
      payment_url: expect.stringContaining('/payment-links/'),
    });
  });

  it('an expire_at in Jakarta local time becomes the gateway expiry', async () => {
    const in2h = new Date(Date.now() + 2 * 3_600_000 + 7 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    const res = await post('/api/payment-links', { order_id: 'E-1', nominal: 10, expire_at: in2h });
    expect(res.statusCode).toBe(201);
    expect(res.json().expire_at).toBe(`${in2h.replace(' ', 'T')}+07:00`);
    const gw = (await e.sim.requests('/v1/payment-links'))[0]?.body as { expiry: { duration: number } };
    expect(gw.expiry.duration).toBeGreaterThanOrEqual(120);
    expect(gw.expiry.duration).toBeLessThanOrEqual(121);
  });

  it('the same direct request after its expire_at has passed is answered with its link, not refused', async () => {
    let t = Date.now();
    await e.close();
    e = await startE2E(kind, { env: { API_KEYS: KEY }, serviceOptions: { clock: { now: () => new Date(t) } } });
    const body = { order_id: 'EXP-1', nominal: 10, expire_at: new Date(t + 60 * 60_000).toISOString() };
    const first = await post('/api/payment-links', body);
    expect(first.statusCode).toBe(201);
    t += 2 * 60 * 60_000;
    const again = await post('/api/payment-links', body);
    expect(again.statusCode).toBe(200);
    expect(again.json().payment_url).toBe(first.json().payment_url);
    // a new order with a past expiry is still refused
    expect((await post('/api/payment-links', { ...body, order_id: 'EXP-2' })).json()).toMatchObject({
      code: 'EXPIRY_INVALID',
    });
    expect((await post('/api/payment-links', { ...body, expire_at: 'soon' })).statusCode).toBe(400);
  });

  it('ids the gateway could never be asked about, and control characters anywhere, are 400 before any gateway call', async () => {
    for (const order_id of ['::', '..', '/', ':7']) {
      const res = await post('/api/payment-links', { order_id, nominal: 10 });
      expect(res.statusCode, order_id).toBe(400);
      expect(res.json()).toMatchObject({ code: 'ORDER_ID_INVALID' });
    }
    const erp = await post('/createtransaksi', {
      mercant_id: 'M\u0000',
      order_id: 'X-1',
      item: [{ id: 'i', name: 'n', price: 10, quantity: 1 }],
    });
    expect(erp.statusCode).toBe(400);
    expect(erp.json().errors).toEqual([expect.objectContaining({ path: 'mercant_id' })]);
    for (const url of ['/api/payment-links/A%00B', '/api/payment-links/A%0AB', '/api/payments/A%00B/status']) {
      const res = await e.app.inject({ method: 'GET', url, headers: auth });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect((await e.app.inject({ method: 'DELETE', url: '/api/payment-links/A%00B', headers: auth })).statusCode).toBe(
      400,
    );
    expect(await e.sim.requests('/v1/payment-links')).toHaveLength(0);
  });

  it('DELETE of a paid link is 409; of an unknown link 404; of a cancelled one answers it again without a gateway call', async () => {
    await post('/api/payment-links', { order_id: 'D-1', nominal: 10 });
    await post('/api/payment-links', { order_id: 'D-2', nominal: 10 });
    const tx = await e.services.store.transactions.findByOrderId('D-1');
    await e.services.store.transactions.update(tx?.id ?? '', { status: 'paid' });
    const paid = await e.app.inject({ method: 'DELETE', url: '/api/payment-links/D-1', headers: auth });
    expect(paid.statusCode).toBe(409);
    expect(paid.json()).toMatchObject({ code: 'ORDER_CONFLICT', current_status: 'paid' });
    expect((await e.app.inject({ method: 'DELETE', url: '/api/payment-links/none', headers: auth })).statusCode).toBe(
      404,
    );
    expect(
      (await e.app.inject({ method: 'DELETE', url: '/api/payment-links/D-2', headers: auth })).json(),
    ).toMatchObject({ status: 'cancelled' });
    expect(
      (await e.app.inject({ method: 'DELETE', url: '/api/payment-links/D-2', headers: auth })).json(),
    ).toMatchObject({ status: 'cancelled' });
    expect((await e.sim.requests('/v1/payment-links')).filter((r) => r.method === 'DELETE')).toHaveLength(1);
  });
});
