/**
 * Refunds are serialised per payment: N requests at once, over real HTTP (and, on PostgreSQL, over
 * two instances sharing the database), must leave the gateway holding exactly the refunds that were
 * answered 200, never more than the payment, and never ask the gateway for an amount paylink could
 * have refused itself.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { appOver, type AppInstance } from '../helpers/services.js';
import { loadConfig } from '../../src/config/env.js';

const KEY = 'erp-key-refund-race-0123456789';
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

interface Answer {
  status: number;
  code?: string;
}

describe.each(DATABASE_KINDS)('refunds at once on one payment (%s)', (kind) => {
  let e: E2EContext;
  let second: AppInstance | undefined;
  const urls: string[] = [];
  afterEach(async () => {
    await second?.close();
    second = undefined;
    urls.length = 0;
    await e.close();
  });

  async function start(): Promise<void> {
    e = await startE2E(kind, { listen: true, env: { API_KEYS: KEY }, serviceOptions: { runtimeConfigCacheMs: 0 } });
    urls.push(e.url ?? '');
    if (kind !== 'postgres') return;
    // A second instance over the same database and gateway: the serialisation must hold across instances.
    const logger = pino({ level: 'silent' });
    const config = {
      ...loadConfig({ PORT: '0', MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: e.serverKey, API_KEYS: KEY }),
      database: e.db.config,
    };
    second = await appOver(
      config,
      { logger, store: await e.db.open({ logger }) },
      { simulatorBaseUrl: e.simulator.baseUrl, runtimeConfigCacheMs: 0 },
    );
    urls.push(await second.app.listen({ host: '127.0.0.1', port: 0 }));
  }

  async function paidCharge(orderId: string, nominal: number): Promise<string> {
    const res = await fetch(`${e.url}/api/charge`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ order_id: orderId, nominal, payment_type: 'qris' }),
    });
    expect(res.status).toBe(201);
    const gatewayOrderId = String(((await res.json()) as { gateway_order_id: string }).gateway_order_id);
    expect((await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    await expect
      .poll(async () => (await e.services.store.transactions.findByOrderId(orderId))?.status, {
        timeout: 5_000,
        interval: 20,
      })
      .toBe('paid');
    return gatewayOrderId;
  }

  async function refundsAtOnce(orderId: string, amounts: number[]): Promise<Answer[]> {
    return Promise.all(
      amounts.map(async (amount, i) => {
        const url = urls[i % urls.length] ?? '';
        const res = await fetch(`${url}/api/payments/${encodeURIComponent(orderId)}/refund`, {
          method: 'POST',
          headers: { ...auth, 'idempotency-key': `${orderId}-${i}` },
          body: JSON.stringify({ amount, reason: `request ${i}` }),
        });
        const body = (await res.json()) as { code?: string };
        return { status: res.status, code: body.code };
      }),
    );
  }

  /** What the gateway holds for the order: its refunds as it lists them in the status answer. */
  async function gatewayRefunds(gatewayOrderId: string): Promise<number[]> {
    const st = (await e.sim.gateway('GET', `/v2/${gatewayOrderId}/status`)).body as {
      refunds?: Array<{ refund_amount: string }>;
    };
    return (st.refunds ?? []).map((r) => Number(r.refund_amount));
  }

  it('10 distinct refunds at once: the gateway holds exactly as many refunds as were answered 200', async () => {
    await start();
    const gatewayOrderId = await paidCharge('RACE-10', 100_000);
    const answers = await refundsAtOnce(
      'RACE-10',
      Array.from({ length: 10 }, () => 1_000),
    );
    const ok = answers.filter((a) => a.status === 200).length;
    expect(answers.every((a) => a.status === 200 || (a.status === 409 && a.code === 'REFUND_IN_PROGRESS'))).toBe(true);
    const held = await gatewayRefunds(gatewayOrderId);
    expect(held).toHaveLength(ok);
    expect(ok).toBeGreaterThan(0);
    expect((await e.services.store.transactions.findByOrderId('RACE-10'))?.refundedAmount).toBe(ok * 1_000);
    // Every refund request that reached the gateway carried a key of its own.
    const keys = (await e.sim.requests('/refund')).map((r) => (r.body as { refund_key: string }).refund_key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('20 refunds at once that together ask twice the payment: the gateway is asked for at most the payment, and refuses nothing', async () => {
    await start();
    const gatewayOrderId = await paidCharge('RACE-20', 100_000);
    const amounts = Array.from({ length: 20 }, (_, i) => 10_000 + i);
    const answers = await refundsAtOnce('RACE-20', amounts);
    const asked = (await e.sim.requests('/refund')).map((r) => (r.body as { amount: number }).amount);
    expect(asked.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(100_000);
    expect(answers.filter((a) => a.status === 502)).toEqual([]);
    expect(
      answers.every(
        (a) =>
          a.status === 200 ||
          (a.status === 400 && a.code === 'AMOUNT_INVALID') ||
          (a.status === 409 && a.code === 'REFUND_IN_PROGRESS'),
      ),
    ).toBe(true);
    const held = await gatewayRefunds(gatewayOrderId);
    expect(held).toHaveLength(answers.filter((a) => a.status === 200).length);
    expect(held.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(100_000);
    // Nine fit (90,036 of 100,000); the tenth never does.
    expect(held.length).toBe(9);
  });
});
