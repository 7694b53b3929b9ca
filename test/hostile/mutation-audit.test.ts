/**
 * Tests a mutation audit asked for: each fails when the code is broken in the way named.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS, tempDir } from '../helpers/stores.js';
import { makeTestApp, OPERATOR, type TestContext } from '../helpers/services.js';
import { signedNotification, TEST_SERVER_KEY } from '../helpers/notifications.js';
import { patchRuntimeConfig, seedTransaction } from '../helpers/seed.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { midtransSignature, verifyMidtransSignature } from '../../src/gateway/midtrans/signature.js';
import { loadConfig } from '../../src/config/env.js';
import { startService, type RunningService } from '../../src/server.js';
import { openStore } from '../../src/storage/kysely/store.js';

describe('signature: over the exact gross_amount string', () => {
  it('a signature made over "162500.00" does not verify for "162500" (nor the other way round)', () => {
    const sig = midtransSignature('SO-1', '200', '162500.00', TEST_SERVER_KEY);
    expect(
      verifyMidtransSignature(
        { order_id: 'SO-1', status_code: '200', gross_amount: '162500.00', signature_key: sig },
        TEST_SERVER_KEY,
      ),
    ).toBe(true);
    expect(
      verifyMidtransSignature(
        { order_id: 'SO-1', status_code: '200', gross_amount: '162500', signature_key: sig },
        TEST_SERVER_KEY,
      ),
    ).toBe(false);
    const short = midtransSignature('SO-1', '200', '162500', TEST_SERVER_KEY);
    expect(
      verifyMidtransSignature(
        { order_id: 'SO-1', status_code: '200', gross_amount: '162500.00', signature_key: short },
        TEST_SERVER_KEY,
      ),
    ).toBe(false);
  });

  it('the webhook answers 401 for such a notification and records nothing', async () => {
    const ctx = await makeTestApp('sqlite', {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
    try {
      const n = signedNotification({ order_id: 'SO-1', transaction_status: 'settlement', gross_amount: '162500.00' });
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/webhook/midtrans',
        payload: { ...n, gross_amount: '162500' },
      });
      expect(res.statusCode).toBe(401);
      expect(await ctx.store.db.selectFrom('notifications').selectAll().execute()).toHaveLength(0);
    } finally {
      await ctx.close();
    }
  });
});

describe.each(DATABASE_KINDS)('settlement below the order amount (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    await patchRuntimeConfig(ctx.services.runtimeConfig, { gateway: { confirm_notifications: false } });
  });
  afterAll(async () => ctx.close());

  it('is paid, flagged amount_mismatch, and the ERP is told the amount actually paid', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'AM-1', nominal: 150_000 });
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/webhook/midtrans',
      payload: signedNotification({ order_id: 'AM-1', transaction_status: 'settlement', gross_amount: '100000.00' }),
    });
    expect(res.json()).toEqual({ status: 'ok', result: 'applied' });
    const after = await ctx.services.store.transactions.findById(tx.id);
    expect(after?.status).toBe('paid');
    expect(after?.flags?.split(',')).toContain('amount_mismatch');
    const [ev] = (await ctx.services.store.outbox.list({})).items.filter((e) => e.orderId === 'AM-1');
    // The ERP is told explicitly: the amount paid, the amount expected, and that they differ.
    expect(JSON.parse(ev?.payload ?? '{}')).toMatchObject({
      status: 'paid',
      gross_amount: 100_000,
      expected_amount: 150_000,
      amount_mismatch: true,
    });
    expect(after).toMatchObject({ paidAmount: 100_000, originalAmount: null });
  });

  it('more than the order amount, without a fee the gateway names, is a mismatch too', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'AM-3', nominal: 150_000 });
    await ctx.app.inject({
      method: 'POST',
      url: '/webhook/midtrans',
      payload: signedNotification({ order_id: 'AM-3', transaction_status: 'settlement', gross_amount: '175000.00' }),
    });
    expect((await ctx.services.store.transactions.findById(tx.id))?.flags ?? '').toContain('amount_mismatch');
  });

  it('a customer-imposed fee raises the gross but keeps the original amount: paid in full, no flag, both amounts kept', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'AM-4', nominal: 150_000 });
    const body = signedNotification({
      order_id: 'AM-4',
      transaction_status: 'settlement',
      gross_amount: '151050.00',
      extra_info: {
        gross_amount_info: { original_amount: '150000', gross_amount: 151050, customer_imposed_payment_fee: '1050' },
      },
    });
    await ctx.app.inject({ method: 'POST', url: '/webhook/midtrans', payload: body });
    const after = await ctx.services.store.transactions.findById(tx.id);
    expect(after).toMatchObject({ status: 'paid', paidAmount: 151_050, originalAmount: 150_000 });
    expect(after?.flags ?? '').not.toContain('amount_mismatch');
    const [ev] = (await ctx.services.store.outbox.list({})).items.filter((e) => e.orderId === 'AM-4');
    expect(JSON.parse(ev?.payload ?? '{}')).toMatchObject({
      gross_amount: 151_050,
      expected_amount: 150_000,
      amount_mismatch: false,
    });
  });

  it('a settlement of the full amount carries no such flag', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'AM-2', nominal: 150_000 });
    await ctx.app.inject({
      method: 'POST',
      url: '/webhook/midtrans',
      payload: signedNotification({ order_id: 'AM-2', transaction_status: 'settlement', gross_amount: '150000.00' }),
    });
    const after = await ctx.services.store.transactions.findById(tx.id);
    expect(after?.status).toBe('paid');
    expect(after?.flags ?? '').not.toContain('amount_mismatch');
    expect(after?.paidAmount).toBe(150_000);
  });
});

describe.each(DATABASE_KINDS)('gateway round trips (%s)', (kind) => {
  const K1 = 'erp-key-one-0123456789';
  const K2 = 'erp-key-two-0123456789';
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E(kind, { env: { API_KEYS: `${K1},${K2}` } });
  });
  afterEach(async () => e.close());
  const post = (key: string, payload: object, headers: Record<string, string> = {}) =>
    e.app.inject({
      method: 'POST',
      url: '/api/payment-links',
      payload,
      headers: { authorization: `Bearer ${key}`, ...headers },
    });

  it('the same Idempotency-Key under two API keys gives two independent results', async () => {
    const a = await post(K1, { order_id: 'IK-A', nominal: 5000 }, { 'idempotency-key': 'shared-key-1' });
    const b = await post(K2, { order_id: 'IK-B', nominal: 6000 }, { 'idempotency-key': 'shared-key-1' });
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(a.json().order_id).toBe('IK-A');
    expect(b.json().order_id).toBe('IK-B');
    // Each key's replay is its own first answer.
    const a2 = await post(K1, { order_id: 'IK-A', nominal: 5000 }, { 'idempotency-key': 'shared-key-1' });
    expect(a2.body).toBe(a.body);
  });

  it('after a timeout, a gateway link with another payment_link_id is not adopted: 409', async () => {
    await e.close();
    e = await startE2E(kind, { env: { API_KEYS: `${K1},${K2}` }, serviceOptions: { gatewayTimeoutMs: 300 } });
    await e.sim.put('/_sim/faults', { timeout_rate: 1 });
    expect((await post(K1, { order_id: 'AD-1', nominal: 7000 })).statusCode).toBe(504);
    await e.sim.del('/_sim/faults');
    // The link the gateway holds for AD-1 is not the one this record asked for.
    await e.store.db
      .updateTable('transactions')
      .set({ payment_link_id: 'pl-someone-else-0001' })
      .where('order_id', '=', 'AD-1')
      .execute();
    const retry = await post(K1, { order_id: 'AD-1', nominal: 7000 });
    expect(retry.statusCode).toBe(409);
    expect(retry.json()).toMatchObject({ code: 'ORDER_CONFLICT' });
    expect((await e.services.store.transactions.findByOrderId('AD-1'))?.paymentUrl ?? null).toBeNull();
  });

  it('a link created by someone else under the same order id (gateway 409) is not adopted either', async () => {
    const other = await e.sim.gateway('POST', '/v1/payment-links', {
      transaction_details: { order_id: 'AD-2', gross_amount: 7000, payment_link_id: 'someone-else-0002' },
      usage_limit: 1,
      item_details: [{ id: 'x', name: 'x', price: 7000, quantity: 1 }],
    });
    expect(other.status).toBeLessThan(300);
    const res = await post(K1, { order_id: 'AD-2', nominal: 7000 });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'ORDER_CONFLICT' });
  });
});

describe('the composition root starts the reconciler', () => {
  let dir: string;
  let service: RunningService | undefined;
  beforeAll(() => {
    dir = tempDir('paylink-root-');
  });
  afterAll(async () => {
    await service?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a service started as server.ts does expires an overdue order by itself', async () => {
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: path.join(dir, 'data'),
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'simulator',
      log_user: OPERATOR.user,
      log_pass: OPERATOR.pass,
    });
    // Before start: an order whose expiry has passed and that the gateway never heard of.
    const store = await openStore(config.database, { logger: pino({ level: 'silent' }) });
    const tx = await seedTransaction(store, {
      orderId: 'OVERDUE-1',
      expireAt: new Date(Date.now() - 60_000).toISOString(),
    });
    await store.close();
    service = await startService(config, { stdoutLogs: false });
    const running = service;
    const deadline = Date.now() + 30_000;
    let status = 'pending';
    while (status === 'pending' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await running.services.store.transactions.findById(tx.id))?.status ?? 'missing';
    }
    expect(status).toBe('expired');
    const events = (await running.services.store.outbox.list({})).items.filter((ev) => ev.orderId === 'OVERDUE-1');
    expect(events.map((ev) => JSON.parse(ev.payload).status)).toEqual(['expired']);
  }, 45_000);
});
