import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig, seedTransaction } from '../helpers/seed.js';
import { ingestGatewayReport } from '../../src/domain/reports/ingest.js';
import { signedReport } from '../../src/domain/reports/trust.js';

describe.each(DATABASE_KINDS)('GET /api/deliveries, POST /api/deliveries/{id}/retry (%s)', (kind) => {
  let ctx: TestContext;
  let erp: ErpReceiver;
  const auth = { authorization: basicAuth() };
  beforeEach(async () => {
    erp = await startErpReceiver();
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    await patchRuntimeConfig(ctx.services.runtimeConfig, { erp: { notify_url: erp.url, timeout_ms: 2_000 } });
  });
  afterEach(async () => {
    await ctx.close();
    await erp.close();
  });

  async function events(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const t = await seedTransaction(ctx.services.store, { orderId: `D:${i}` });
      const r = await ingestGatewayReport(
        ctx.services,
        signedReport({
          order_id: t.gatewayOrderId,
          status_code: '200',
          gross_amount: '150000.00',
          transaction_status: 'settlement',
          transaction_id: `t${i}`,
        }),
        'webhook',
      );
      if (r.eventId) ids.push(r.eventId);
    }
    return ids;
  }

  it('needs operator auth', async () => {
    expect((await ctx.app.inject({ method: 'GET', url: '/api/deliveries' })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'POST', url: '/api/deliveries/x/retry' })).statusCode).toBe(401);
  });

  it('lists deliveries newest first with their attempts, filters by status, pages with a cursor', async () => {
    const ids = await events(3);
    erp.setScript((d) => (d.webhookId === ids[0] ? { kind: 'fail', status: 503 } : undefined));
    await ctx.services.outbox.runOnce();
    const all = await ctx.app.inject({ method: 'GET', url: '/api/deliveries', headers: auth });
    expect(all.statusCode).toBe(200);
    const body = all.json();
    expect(body.items.map((d: { id: string }) => d.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(body.items[2]).toMatchObject({
      id: ids[0],
      event_id: ids[0],
      type: 'payment.status_changed',
      status: 'failed',
      order_id: 'D:0',
      mercant_id: 'D',
      status_version: 1,
      attempts_count: 1,
      last_status_code: 503,
      delivered_at: null,
    });
    expect(body.items[2].attempts).toEqual([
      {
        attempt_no: 1,
        started_at: expect.any(String),
        status_code: 503,
        latency_ms: expect.any(Number),
        error: 'HTTP 503',
        outcome: 'failed',
        instance: expect.any(String),
      },
    ]);
    expect(body.items[2].payload).toMatchObject({ event_id: ids[0], status: 'paid' });
    expect(body.items[0]).toMatchObject({ status: 'delivered', next_attempt_at: null });
    const failed = await ctx.app.inject({ method: 'GET', url: '/api/deliveries?status=failed', headers: auth });
    expect(failed.json().items.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    const p1 = (await ctx.app.inject({ method: 'GET', url: '/api/deliveries?limit=2', headers: auth })).json();
    expect(p1.items).toHaveLength(2);
    const p2 = (
      await ctx.app.inject({ method: 'GET', url: `/api/deliveries?limit=2&cursor=${p1.next_cursor}`, headers: auth })
    ).json();
    expect(p2.items.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    expect(p2.next_cursor).toBeUndefined();
  });

  it('rejects bad filters with 400', async () => {
    for (const q of ['status=lost', 'limit=0', 'limit=9999', 'cursor=%%%', 'unknown=1']) {
      const res = await ctx.app.inject({ method: 'GET', url: `/api/deliveries?${q}`, headers: auth });
      expect(res.statusCode, q).toBe(400);
    }
  });

  it('re-delivers a delivered or dead event now with the same event id; unknown id → 404', async () => {
    const [id] = await events(1);
    await ctx.services.outbox.runOnce();
    const retry = await ctx.app.inject({ method: 'POST', url: `/api/deliveries/${id}/retry`, headers: auth });
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({ id, status: 'pending', attempts_count: 1 });
    await ctx.services.outbox.runOnce();
    expect(erp.accepted().map((d) => d.webhookId)).toEqual([id, id]);
    expect(new Set(erp.accepted().map((d) => d.body)).size).toBe(1);
    const missing = await ctx.app.inject({
      method: 'POST',
      url: '/api/deliveries/00000000-0000-0000-0000-000000000000/retry',
      headers: auth,
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'NOT_FOUND' });
  });
});
