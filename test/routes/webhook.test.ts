import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { DATABASE_KINDS, freshDatabase, type TestDatabase } from '../helpers/stores.js';
import { appOver, basicAuth, OPERATOR } from '../helpers/services.js';
import { signedNotification } from '../helpers/notifications.js';
import { seedTransaction } from '../helpers/seed.js';
import { loadConfig } from '../../src/config/env.js';
import type { Services } from '../../src/types.js';
import type { App } from '../../src/http/types.js';

interface Ctx {
  app: App;
  services: Services;
  db: TestDatabase;
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Like makeTestApp, but keeps the log lines so security events can be asserted. */
async function makeApp(kind: 'sqlite' | 'postgres', env: Record<string, string> = {}): Promise<Ctx> {
  const db = freshDatabase(kind);
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const store = await db.open({ logger });
  // These tests drive the status machine with hand-signed notifications; confirmation has its own tests.
  const config = { ...loadConfig({ PORT: '0', MIDTRANS_CONFIRM_NOTIFICATIONS: 'false', ...env }), database: db.config };
  const instance = await appOver(
    config,
    { logger, store },
    { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 },
  );
  return {
    app: instance.app,
    services: instance.services,
    db,
    logs,
    async close() {
      await instance.close();
      await db.dispose();
    },
  };
}

const post = (ctx: Ctx, body: unknown, url = '/webhook/midtrans', headers: Record<string, string> = {}) =>
  ctx.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });

describe.each(DATABASE_KINDS)('POST /webhook/midtrans (%s)', (kind) => {
  let ctx: Ctx;
  beforeEach(async () => {
    ctx = await makeApp(kind);
  });
  afterEach(async () => ctx.close());

  it('applies a signed settlement in one go: status paid, one outbox event with the contract body', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'INV/2026/0042:1', nominal: 150_000 });
    const n = signedNotification({
      order_id: 'INV.2026.0042.1',
      transaction_status: 'settlement',
      fraud_status: 'accept',
      transaction_id: 'tx-1',
    });
    const res = await post(ctx, n);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', result: 'applied' });
    const after = await ctx.services.store.transactions.findById(tx.id);
    expect(after).toMatchObject({
      status: 'paid',
      transactionStatus: 'settlement',
      gatewayTransactionId: 'tx-1',
      statusVersion: 1,
      settlementTime: '2026-11-22T10:05:00+07:00',
    });
    const page = await ctx.services.store.outbox.list({});
    expect(page.items).toHaveLength(1);
    const ev = page.items[0];
    expect(ev).toBeDefined();
    const body = JSON.parse(ev?.payload ?? '{}');
    expect(body).toEqual({
      type: 'payment.status_changed',
      event_id: ev?.eventId,
      mercant_id: 'INV/2026/0042',
      order_id: 'INV/2026/0042:1',
      gateway_order_id: 'INV.2026.0042.1',
      status: 'paid',
      transaction_status: 'settlement',
      fraud_status: 'accept',
      payment_type: 'bank_transfer',
      gross_amount: 150000,
      transaction_id: 'tx-1',
      transaction_time: '2026-11-22T10:00:00+07:00',
      settlement_time: '2026-11-22T10:05:00+07:00',
      occurred_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+07:00$/),
      status_version: 1,
      expected_amount: 150000,
      amount_mismatch: false,
    });
    expect(ev?.state).toBe('pending');
    const notes = await ctx.services.store.notifications.listForOrder('INV.2026.0042.1');
    expect(notes.map((x) => [x.source, x.result])).toEqual([['webhook', 'applied']]);
  });

  it('a duplicate is answered 200 and produces no second event or record', async () => {
    await seedTransaction(ctx.services.store, { orderId: 'SO-1' });
    const n = signedNotification({ order_id: 'SO-1', transaction_status: 'settlement', transaction_id: 'tx-1' });
    expect((await post(ctx, n)).json()).toMatchObject({ result: 'applied' });
    const again = await post(ctx, n);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ result: 'duplicate' });
    expect((await ctx.services.store.outbox.list({})).items).toHaveLength(1);
    expect(await ctx.services.store.notifications.listForOrder('SO-1')).toHaveLength(1);
  });

  it('out of order: settlement then a late pending, then expire → stays paid, nothing forwarded', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'SO-2' });
    expect(
      (
        await post(
          ctx,
          signedNotification({ order_id: 'SO-2', transaction_status: 'settlement', transaction_id: 'tx-2' }),
        )
      ).json(),
    ).toMatchObject({ result: 'applied' });
    expect(
      (
        await post(ctx, signedNotification({ order_id: 'SO-2', transaction_status: 'pending', transaction_id: 'tx-2' }))
      ).json(),
    ).toMatchObject({ result: 'stale' });
    expect(
      (
        await post(ctx, signedNotification({ order_id: 'SO-2', transaction_status: 'expire', transaction_id: 'tx-2' }))
      ).json(),
    ).toMatchObject({ result: 'stale' });
    expect((await ctx.services.store.transactions.findById(tx.id))?.status).toBe('paid');
    expect((await ctx.services.store.outbox.list({})).items).toHaveLength(1);
  });

  it('a card capture voided before settlement reaches the ERP as cancelled; a late capture after the void changes nothing', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'SO-2c' });
    const card = { order_id: 'SO-2c', transaction_id: 'tx-2c', payment_type: 'credit_card' };
    expect(
      (await post(ctx, signedNotification({ ...card, transaction_status: 'capture', fraud_status: 'accept' }))).json(),
    ).toMatchObject({ result: 'applied' });
    expect((await post(ctx, signedNotification({ ...card, transaction_status: 'cancel' }))).json()).toMatchObject({
      result: 'applied',
    });
    expect((await ctx.services.store.transactions.findById(tx.id))?.status).toBe('cancelled');
    const statuses = async () =>
      (await ctx.services.store.outbox.list({})).items.map((e) => JSON.parse(e.payload).status).reverse();
    expect(await statuses()).toEqual(['paid', 'cancelled']);

    const late = await seedTransaction(ctx.services.store, { orderId: 'SO-2d' });
    const card2 = { order_id: 'SO-2d', transaction_id: 'tx-2d', payment_type: 'credit_card' };
    expect((await post(ctx, signedNotification({ ...card2, transaction_status: 'cancel' }))).json()).toMatchObject({
      result: 'applied',
    });
    expect(
      (await post(ctx, signedNotification({ ...card2, transaction_status: 'capture', fraud_status: 'accept' }))).json(),
    ).toMatchObject({ result: 'stale' });
    expect((await ctx.services.store.transactions.findById(late.id))?.status).toBe('cancelled');
  });

  it('an order reused after expiry with a new transaction id moves expired → pending → paid', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'SO-3', kind: 'charge' });
    for (const [status, id, result] of [
      ['pending', 'a', 'duplicate'],
      ['expire', 'a', 'applied'],
      ['pending', 'b', 'applied'],
      ['expire', 'a', 'duplicate'],
      ['settlement', 'b', 'applied'],
    ] as const) {
      const res = await post(
        ctx,
        signedNotification({
          order_id: 'SO-3',
          transaction_status: status,
          transaction_id: id,
          transaction_time: id === 'a' ? '2026-11-22 10:00:00' : '2026-11-23 09:00:00',
        }),
      );
      expect(res.json().result, `${status}/${id}`).toBe(result);
    }
    // a late duplicate-looking report from the superseded transaction is stale
    const late = await post(
      ctx,
      signedNotification({
        order_id: 'SO-3',
        transaction_status: 'expire',
        transaction_id: 'a',
        status_code: '407',
        transaction_time: '2026-11-22 10:00:00',
      }),
    );
    expect(late.json().result).toBe('stale');
    const events = (await ctx.services.store.outbox.list({})).items.reverse().map((e) => JSON.parse(e.payload));
    expect(events.map((e) => [e.status, e.transaction_id, e.status_version])).toEqual([
      ['expired', 'a', 1],
      ['pending', 'b', 2],
      ['paid', 'b', 3],
    ]);
    expect((await ctx.services.store.transactions.findById(tx.id))?.status).toBe('paid');
  });

  it('an unknown order is accepted: an external transaction named by the gateway id, forwarded', async () => {
    const res = await post(
      ctx,
      signedNotification({ order_id: 'EXT-99', transaction_status: 'pending', gross_amount: '99000.00' }),
    );
    expect(res.json()).toMatchObject({ result: 'applied' });
    const tx = await ctx.services.store.transactions.findByGatewayOrderId('EXT-99');
    expect(tx).toMatchObject({
      kind: 'external',
      orderId: 'EXT-99',
      mercantId: 'EXT-99',
      nominal: 99_000,
      status: 'pending',
      flags: 'unknown_order',
    });
    const ev = JSON.parse((await ctx.services.store.outbox.list({})).items[0]?.payload ?? '{}');
    expect(ev).toMatchObject({ mercant_id: 'EXT-99', order_id: 'EXT-99', status: 'pending', gross_amount: 99000 });
  });

  it('a payment-link purchase (link id + -suffix) resolves to the link', async () => {
    const link = await seedTransaction(ctx.services.store, { orderId: 'INV:1', kind: 'payment_link' });
    const res = await post(
      ctx,
      signedNotification({ order_id: 'INV.1-1732250000000', transaction_status: 'settlement', transaction_id: 'p1' }),
    );
    expect(res.json()).toMatchObject({ result: 'applied' });
    expect(await ctx.services.store.transactions.findByGatewayOrderId('INV.1-1732250000000')).toBeUndefined();
    expect((await ctx.services.store.transactions.findById(link.id))?.status).toBe('paid');
    const ev = JSON.parse((await ctx.services.store.outbox.list({})).items[0]?.payload ?? '{}');
    expect(ev).toMatchObject({ mercant_id: 'INV', order_id: 'INV:1', gateway_order_id: 'INV.1', status: 'paid' });
  });

  it('an unknown gateway status is recorded and flagged, never guessed', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'SO-4' });
    const res = await post(
      ctx,
      signedNotification({ order_id: 'SO-4', transaction_status: 'teleported', transaction_id: 't' }),
    );
    expect(res.json()).toMatchObject({ result: 'unknown_status' });
    const after = await ctx.services.store.transactions.findById(tx.id);
    expect(after).toMatchObject({ status: 'pending', statusVersion: 0 });
    expect(after?.flags).toContain('unknown_status:teleported');
    expect((await ctx.services.store.outbox.list({})).items).toHaveLength(0);
    expect(ctx.logs.some((l) => l.flag === 'unknown_gateway_status' && l.level === 40)).toBe(true);
  });

  it('forged, re-targeted and unsigned notifications → 401 SIGNATURE_INVALID, logged, nothing changed', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'SO-5' });
    const genuine = signedNotification({ order_id: 'SO-5', transaction_status: 'pending', transaction_id: 'x' });
    const forged = [
      { ...genuine, transaction_status: 'settlement', status_code: '200' },
      { ...genuine, gross_amount: '1.00' },
      signedNotification({ order_id: 'SO-5', transaction_status: 'settlement' }, 'SB-Mid-server-wrong'),
      { ...genuine, signature_key: 'abc' },
      { ...genuine, signature_key: '' },
      { ...genuine, signature_key: undefined },
    ];
    for (const body of forged) {
      const res = await post(ctx, body);
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'SIGNATURE_INVALID', status: 401 });
    }
    expect(await ctx.services.store.transactions.findById(tx.id)).toMatchObject({
      status: 'pending',
      statusVersion: 0,
    });
    expect(await ctx.services.store.notifications.listForOrder('SO-5')).toHaveLength(0);
    expect((await ctx.services.store.outbox.list({})).items).toHaveLength(0);
    expect(ctx.logs.filter((l) => l.security_event === 'webhook_signature_invalid')).toHaveLength(forged.length);
  });

  it('a signed body lacking a required field → 400, never 500; non-JSON → 400', async () => {
    const n = signedNotification({ order_id: 'SO-6', transaction_status: 'settlement' });
    delete n.status_code;
    const res = await post(ctx, n);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    const bad = await ctx.app.inject({
      method: 'POST',
      url: '/webhook/midtrans',
      headers: { 'content-type': 'application/json' },
      payload: '{"order_id":',
    });
    expect(bad.statusCode).toBe(400);
  });

  it('ignores unknown fields and accepts the gateway amount format exactly as signed', async () => {
    await seedTransaction(ctx.services.store, { orderId: 'SO-7' });
    const n = signedNotification({
      order_id: 'SO-7',
      transaction_status: 'settlement',
      gross_amount: '150000.0',
      va_numbers: [{ bank: 'bca', va_number: '1' }],
      new_field: { deep: [1, 2] },
    });
    expect((await post(ctx, n)).json()).toMatchObject({ result: 'applied' });
  });

  it('fields of unexpected types (null fraud_status, numeric times, objects) never cost a signed notification a 400', async () => {
    await seedTransaction(ctx.services.store, { orderId: 'SO-7b' });
    const n = {
      ...signedNotification({ order_id: 'SO-7b', transaction_status: 'settlement' }),
      fraud_status: null,
      settlement_time: 1763884800,
      transaction_time: { at: 'now' },
      payment_type: 7,
      transaction_id: null,
    };
    const res = await post(ctx, n);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ result: 'applied' });
    expect((await ctx.services.store.transactions.findByOrderId('SO-7b'))?.status).toBe('paid');
    // a non-string signature is no signature: 401 and logged, never a schema 400
    const odd = {
      ...signedNotification({ order_id: 'SO-7b', transaction_status: 'settlement' }),
      signature_key: 12345,
    };
    const forged = await post(ctx, odd);
    expect(forged.statusCode).toBe(401);
    expect(ctx.logs.some((l) => l.security_event === 'webhook_signature_invalid')).toBe(true);
  });

  it('bodies over 64 KiB → 413', async () => {
    const n = signedNotification({
      order_id: 'SO-8',
      transaction_status: 'settlement',
      padding: 'x'.repeat(70 * 1024),
    });
    const res = await post(ctx, n);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('database unavailable → 503 (the gateway retries a 503 four times)', async () => {
    await ctx.services.store.close();
    const res = await post(ctx, signedNotification({ order_id: 'SO-9', transaction_status: 'settlement' }));
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
  });

  it('with confirmation on and the status API unreachable: recorded as unverified, 200, nothing applied', async () => {
    await ctx.services.runtimeConfig.save({ gateway: { confirm_notifications: true } }, 0, 'test');
    const tx = await seedTransaction(ctx.services.store, { orderId: 'SO-10' });
    const n = signedNotification({ order_id: 'SO-10', transaction_status: 'settlement', transaction_id: 'c1' });
    const res = await post(ctx, n);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', result: 'unverified' });
    expect((await ctx.services.store.transactions.findById(tx.id))?.status).toBe('pending');
    expect(
      (await ctx.services.store.notifications.listByResult('unverified', 10)).map((x) => x.gatewayOrderId),
    ).toEqual(['SO-10']);
    expect((await ctx.services.store.outbox.list({})).items).toHaveLength(0);
  });
});

describe.each(DATABASE_KINDS)('POST /webhook/midtrans/replay (%s)', (kind) => {
  let ctx: Ctx;
  beforeEach(async () => {
    ctx = await makeApp(kind);
  });
  afterEach(async () => ctx.close());

  it('needs operator auth', async () => {
    const res = await post(
      ctx,
      signedNotification({ order_id: 'R-1', transaction_status: 'settlement' }),
      '/webhook/midtrans/replay',
    );
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic/);
  });

  it('re-runs a captured notification through the pipeline and says what happened', async () => {
    await seedTransaction(ctx.services.store, { orderId: 'R:2' });
    const n = signedNotification({ order_id: 'R.2', transaction_status: 'settlement', transaction_id: 'r2' });
    const auth = { authorization: basicAuth() };
    const first = await post(ctx, n, '/webhook/midtrans/replay', auth);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      result: 'applied',
      confirmed: false,
      order_id: 'R:2',
      status: 'paid',
      event_id: expect.any(String),
    });
    const again = await post(ctx, n, '/webhook/midtrans/replay', auth);
    expect(again.json()).toMatchObject({ result: 'duplicate', status: 'paid' });
    expect(again.json().event_id).toBeUndefined();
    const forged = await post(ctx, { ...n, gross_amount: '1.00' }, '/webhook/midtrans/replay', auth);
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toMatchObject({ code: 'SIGNATURE_INVALID' });
    // One audit line per replay that ran; the forged one was refused before it.
    const audit = ctx.logs
      .filter(
        (l) =>
          typeof l.audit === 'object' && l.audit !== null && 'action' in l.audit && l.audit.action === 'webhook_replay',
      )
      .map((l) => l.audit);
    const by = `operator:${OPERATOR.user}`;
    expect(audit).toEqual([
      { actor: by, action: 'webhook_replay', subject: 'R.2', outcome: 'applied' },
      { actor: by, action: 'webhook_replay', subject: 'R.2', outcome: 'duplicate' },
    ]);
  });
});

describe.each(DATABASE_KINDS)('POST /test-notify-erp audit (%s)', (kind) => {
  let ctx: Ctx;
  beforeEach(async () => {
    ctx = await makeApp(kind, { LOG_EXPOSE_API: 'true' });
  });
  afterEach(async () => ctx.close());

  it('a test event sent by an operator is on the audit log with what became of it', async () => {
    const res = await post(ctx, { order_id: 'T-1' }, '/test-notify-erp', { authorization: basicAuth() });
    expect(res.statusCode).toBe(200);
    const { event_id: eventId } = res.json();
    const audit = ctx.logs.filter(
      (l) =>
        typeof l.audit === 'object' && l.audit !== null && 'action' in l.audit && l.audit.action === 'test_event_send',
    );
    expect(audit).toEqual([
      expect.objectContaining({
        audit: { actor: `operator:${OPERATOR.user}`, action: 'test_event_send', subject: 'T-1', outcome: 'pending' },
        event_id: eventId,
      }),
    ]);
  });
});
