import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import type { PaymentStatus } from '../../src/model/payment.js';

const auth = { authorization: basicAuth() };

describe.each(DATABASE_KINDS)('operations endpoints (%s)', (kind) => {
  let ctx: TestContext;
  const get = (url: string) => ctx.app.inject({ method: 'GET', url, headers: auth });

  async function seed(orderId: string, mercantId: string, status: PaymentStatus, createdAt: string) {
    const t = await ctx.services.store.transactions.insert({
      id: randomUUID(),
      orderId,
      gatewayOrderId: orderId.replace(/[^A-Za-z0-9\-_~.]/g, '.'),
      mercantId,
      kind: 'payment_link',
      attempt: 1,
      nominal: 15_000,
      status,
      paymentUrl: `https://pay.example/${orderId}`,
      paymentLinkId: null,
      snapToken: 'snap-token-not-for-operators',
      requestHash: null,
      requestJson: '{"customer":{"email":"a@b.c"}}',
      gatewayJson: null,
      expireAt: null,
    });
    await ctx.store.db.updateTable('transactions').set({ created_at: createdAt }).where('id', '=', t.id).execute();
  }

  beforeAll(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
    await seed('INV-1:1', 'INV-1', 'expired', '2026-11-20T01:00:00.000Z');
    await seed('INV-1:2', 'INV-1', 'paid', '2026-11-21T01:00:00.000Z');
    await seed('INV-2:1', 'INV-2', 'pending', '2026-11-22T01:00:00.000Z');
  });
  afterAll(async () => ctx.close());

  it('lists transactions newest first, without request bodies or Snap tokens', async () => {
    const res = await get('/api/transactions');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.items.map((t: { order_id: string }) => t.order_id)).toEqual(['INV-2:1', 'INV-1:2', 'INV-1:1']);
    expect(body.items[0]).toMatchObject({
      order_id: 'INV-2:1',
      gateway_order_id: 'INV-2.1',
      mercant_id: 'INV-2',
      status: 'pending',
      nominal: 15_000,
      payment_url: 'https://pay.example/INV-2:1',
    });
    expect(body.next_cursor).toBeUndefined();
    expect(res.body).not.toContain('snap-token');
    expect(res.body).not.toContain('a@b.c');
  });

  it('filters by status, mercant_id and since (any offset)', async () => {
    const ids = async (q: string) =>
      (await get(`/api/transactions?${q}`)).json().items.map((t: { order_id: string }) => t.order_id);
    expect(await ids('status=paid')).toEqual(['INV-1:2']);
    expect(await ids('mercant_id=INV-1')).toEqual(['INV-1:2', 'INV-1:1']);
    expect(await ids('since=2026-11-21T08:00:00%2B07:00')).toEqual(['INV-2:1', 'INV-1:2']);
  });

  it('pages with a cursor', async () => {
    const first = (await get('/api/transactions?limit=2')).json();
    expect(first.items).toHaveLength(2);
    const second = (await get(`/api/transactions?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second.items.map((t: { order_id: string }) => t.order_id)).toEqual(['INV-1:1']);
    expect(second.next_cursor).toBeUndefined();
  });

  it('rejects bad filters with 400', async () => {
    for (const q of [
      'status=settled',
      'limit=0',
      'limit=1001',
      'since=today',
      'since=2026-06-30T23:59:60Z',
      'since=2026-02-30T00:00:00Z',
      'cursor=zzzz',
      'mercant_id=',
      'other=1',
    ]) {
      expect((await get(`/api/transactions?${q}`)).statusCode, q).toBe(400);
    }
  });

  it('GET /metrics serves Prometheus text with requests counted by route pattern', async () => {
    await ctx.app.inject({ method: 'GET', url: '/api/transactions?status=paid', headers: auth });
    await ctx.app.inject({ method: 'GET', url: '/no/such/path' });
    const res = await get('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toMatch(
      /paylink_http_requests_total\{route="\/api\/transactions",method="GET",status="200"\} \d+/,
    );
    expect(res.body).toMatch(/paylink_http_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
    expect(res.body).toContain(
      'paylink_http_request_duration_seconds_bucket{le="0.005",route="/api/transactions",method="GET"}',
    );
    expect(res.body).toMatch(/paylink_outbox_depth\{state="\w+"\} \d+/);
    expect(res.body).not.toContain('status=paid');
  });
});
