import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';

const KEY = 'erp-key-0123456789';

describe.each(DATABASE_KINDS)('payment operation routes (%s)', (kind) => {
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E(kind, { env: { API_KEYS: KEY } });
  });
  afterEach(async () => e.close());
  const post = (url: string, payload: object, key?: string) =>
    e.app.inject({
      method: 'POST',
      url,
      payload,
      headers: { 'x-api-key': KEY, ...(key ? { 'idempotency-key': key } : {}) },
    });

  it.each([
    [
      '/api/charge',
      { order_id: 'I-1', nominal: 500, payment_type: 'qris' },
      { order_id: 'I-1', nominal: 501, payment_type: 'qris' },
    ],
    ['/api/snap/token', { order_id: 'I-2', nominal: 500 }, { order_id: 'I-2', nominal: 501 }],
  ])('%s honours Idempotency-Key: replay, 422 on another body, one gateway call', async (url, body, other) => {
    const first = await post(url, body, 'idem-ops');
    expect(first.statusCode).toBe(201);
    const replay = await post(url, body, 'idem-ops');
    expect(replay.statusCode).toBe(201);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await post(url, other, 'idem-ops')).statusCode).toBe(422);
    expect((await e.sim.requests()).filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('50 concurrent charges with one key make exactly one gateway call', async () => {
    await e.sim.put('/_sim/faults', { latency_ms: 100 });
    const body = { order_id: 'C-50', nominal: 7000, payment_type: 'bank_transfer', bank_transfer: { bank: 'bri' } };
    const results = await Promise.all(Array.from({ length: 50 }, () => post('/api/charge', body, 'c50')));
    expect(results.every((r) => r.statusCode === 201 || r.statusCode === 409)).toBe(true);
    expect(await e.sim.requests('/v2/charge')).toHaveLength(1);
  });

  it('card charges: an empty token is 400 before the gateway; an accepted card is paid at once, a challenged one is challenge', async () => {
    const empty = await post('/api/charge', {
      order_id: 'CC-1',
      nominal: 10000,
      payment_type: 'credit_card',
      credit_card: { token_id: '' },
    });
    expect(empty.statusCode).toBe(400);
    expect(await e.sim.requests('/v2/charge')).toHaveLength(0);
    const ok = await post('/api/charge', {
      order_id: 'CC-2',
      nominal: 10000,
      payment_type: 'credit_card',
      credit_card: { token_id: '481111-4811111111111114-tok' },
    });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toMatchObject({ status: 'paid', transaction_status: 'capture', payment_type: 'credit_card' });
    const challenged = await post('/api/charge', {
      order_id: 'CC-3',
      nominal: 10000,
      payment_type: 'credit_card',
      credit_card: { token_id: '491111-4911111111111113-tok' },
    });
    expect(challenged.statusCode).toBe(201);
    expect(challenged.json()).toMatchObject({ status: 'challenge', transaction_status: 'capture' });
    const events = (await e.services.store.outbox.list({ limit: 10 })).items.map((ev) => [
      ev.orderId,
      JSON.parse(ev.payload).status,
    ]);
    expect(events).toEqual(
      expect.arrayContaining([
        ['CC-2', 'paid'],
        ['CC-3', 'challenge'],
      ]),
    );
  });

  it('ShopeePay charges return the app deeplink', async () => {
    const res = await post('/api/charge', {
      order_id: 'SP-1',
      nominal: 10000,
      payment_type: 'shopeepay',
      shopeepay: { callback_url: 'https://shop.example.com/done' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      payment_type: 'shopeepay',
      status: 'pending',
      actions: [expect.objectContaining({ name: 'deeplink-redirect' })],
    });
    const [call] = await e.sim.requests('/v2/charge');
    expect(call?.body).toMatchObject({
      payment_type: 'shopeepay',
      shopeepay: { callback_url: 'https://shop.example.com/done' },
    });
  });
});
