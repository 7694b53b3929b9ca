/**
 * Two merchants in one service: two accounts created through the API, each with its own API key,
 * server key and MID (merchants of the simulator) and its own ERP. The same order id in both is two
 * payments; each ERP gets exactly its own event, signed with its own secret and naming its account;
 * a notification never crosses accounts; a revoked key and a disabled account are refused at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import net from 'node:net';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { E2E_SERVER_KEY, simClient, type SimClient } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { appOver, basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import pino from 'pino';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';

const ENV_KEY = 'env-key-default-account-0123456789';
const A = {
  id: 'shop-a',
  serverKey: 'SB-Mid-server-shop-a-0001',
  mid: 'GA00000001',
  secret: 'whsec_c2hvcC1hLWVycC1zZWNyZXQtMDAwMQ==',
};
const B = {
  id: 'shop-b',
  serverKey: 'SB-Mid-server-shop-b-0002',
  mid: 'GB00000002',
  secret: 'raw-secret-of-shop-b-erp-0002',
};

/** A loopback port nobody listens on now: the service must know its public URL before it listens. */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

const sign = (orderId: string, statusCode: string, gross: string, key: string) =>
  createHash('sha512').update(`${orderId}${statusCode}${gross}${key}`).digest('hex');

describe.each(DATABASE_KINDS)('accounts: two merchants in one service (%s)', (kind) => {
  let ctx: TestContext;
  let simulator: RunningSimulator;
  let sim: SimClient;
  let erpA: ErpReceiver;
  let erpB: ErpReceiver;
  const keys: Record<string, string> = {};
  const op = { authorization: basicAuth() };

  const api = (key: string, method: 'GET' | 'POST', url: string, payload?: unknown) =>
    ctx.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}` },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  beforeAll(async () => {
    erpA = await startErpReceiver({ secret: A.secret });
    erpB = await startErpReceiver({ secret: B.secret });
    simulator = await startSimulator({
      serverKey: E2E_SERVER_KEY,
      logger: false,
      notificationTimeoutMs: 2_000,
      merchants: [A, B].map((m) => ({ serverKey: m.serverKey, merchantId: m.mid })),
    });
    sim = simClient(simulator.baseUrl);
    const port = await freePort();
    ctx = await makeTestApp(
      kind,
      {
        MIDTRANS_MODE: 'simulator',
        MIDTRANS_SERVER_KEY: E2E_SERVER_KEY,
        API_KEYS: ENV_KEY,
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      },
      { runtimeConfigCacheMs: 0, simulatorBaseUrl: simulator.baseUrl },
    );
    await ctx.app.listen({ host: '127.0.0.1', port });
    simulator.setNotificationUrl(`http://127.0.0.1:${port}/webhook/midtrans`);
    ctx.services.outbox.start();
    for (const [m, erp] of [
      [A, erpA],
      [B, erpB],
    ] as const) {
      const created = await ctx.app.inject({
        method: 'POST',
        url: '/api/accounts',
        headers: op,
        payload: {
          id: m.id,
          config: {
            gateway: { mode: 'simulator', server_key: m.serverKey, merchant_id: m.mid },
            erp: { notify_url: erp.url, webhook_secret: m.secret, timeout_ms: 2_000 },
          },
        },
      });
      expect(created.statusCode).toBe(201);
      const key = await ctx.app.inject({ method: 'POST', url: `/api/accounts/${m.id}/api-keys`, headers: op });
      expect(key.statusCode).toBe(201);
      keys[m.id] = (key.json() as { key: string }).key;
    }
  });
  afterAll(async () => {
    await ctx?.close();
    await simulator?.close();
    await erpA?.close();
    await erpB?.close();
  });

  it('the same order id in two accounts is two payments, each paid and reported to its own ERP only', async () => {
    const a = await api(keys[A.id] ?? '', 'POST', '/api/payment-links', { order_id: 'SAME-1', nominal: 10_000 });
    const b = await api(keys[B.id] ?? '', 'POST', '/api/payment-links', { order_id: 'SAME-1', nominal: 20_000 });
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect((await api(keys[A.id] ?? '', 'GET', '/api/payment-links/SAME-1')).json()).toMatchObject({ nominal: 10_000 });
    expect((await api(keys[B.id] ?? '', 'GET', '/api/payment-links/SAME-1')).json()).toMatchObject({ nominal: 20_000 });
    // The default account's key sees neither.
    expect((await api(ENV_KEY, 'GET', '/api/payment-links/SAME-1')).statusCode).toBe(404);

    for (const m of [A, B])
      expect(
        (await sim.post(`/_sim/transactions/SAME-1/pay?merchant_id=${m.mid}`, { payment_type: 'bank_transfer' }))
          .status,
      ).toBe(200);
    await erpA.waitFor((r) => r.accepted().length >= 1);
    await erpB.waitFor((r) => r.accepted().length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    for (const [erp, m, amount] of [
      [erpA, A, 10_000],
      [erpB, B, 20_000],
    ] as const) {
      expect(erp.accepted()).toHaveLength(1);
      const [d] = erp.accepted();
      expect(d?.verified).toBe(true);
      expect(d?.json).toMatchObject({ account: m.id, order_id: 'SAME-1', status: 'paid', gross_amount: amount });
    }
    // Jakarta's yesterday to tomorrow: the payments of a moment ago, whenever the test runs.
    const day = (d: number) => new Date(Date.now() + 7 * 3_600_000 + d * 86_400_000).toISOString().slice(0, 10);
    const report = async (account: string) =>
      (
        await ctx.app.inject({
          method: 'GET',
          url: `/api/reports/daily?from=${day(-1)}&to=${day(1)}&account=${account}`,
          headers: op,
        })
      ).json() as { items: Array<{ paid_amount: number }> };
    expect((await report(A.id)).items.map((r) => r.paid_amount)).toEqual([10_000]);
    expect((await report(B.id)).items.map((r) => r.paid_amount)).toEqual([20_000]);
    const deliveries = await ctx.app.inject({ method: 'GET', url: `/api/deliveries?account=${B.id}`, headers: op });
    expect((deliveries.json() as { items: Array<{ event_id: string }> }).items.map((d) => d.event_id)).toEqual([
      erpB.accepted()[0]?.webhookId,
    ]);
    // Each create call named its account's notification URL.
    const creates = await sim.requests('/v1/payment-links');
    expect(creates.filter((r) => r.method === 'POST')).toHaveLength(2);
    // Per-payment counters carry the account (other than default's, whose series stay as they were).
    const metrics = (await ctx.app.inject({ url: '/metrics', headers: op })).body;
    for (const m of [A, B]) {
      expect(metrics).toMatch(
        new RegExp(`paylink_notifications_total\\{source="webhook",result="applied",account="${m.id}"\\} 1\\b`),
      );
      expect(metrics).toMatch(
        new RegExp(`paylink_erp_deliveries_total\\{outcome="delivered",account="${m.id}"\\} 1\\b`),
      );
      expect(metrics).toMatch(new RegExp(`paylink_outbox_oldest_pending_seconds\\{account="${m.id}"\\} 0\\b`));
    }
  });

  it("another account's order answers 404 exactly as an unknown one", async () => {
    expect(
      (await api(keys[A.id] ?? '', 'POST', '/api/payment-links', { order_id: 'ONLY-A', nominal: 5_000 })).statusCode,
    ).toBe(201);
    const shape = (res: { statusCode: number; json(): unknown }, id: string) => {
      const { request_id: _r, ...rest } = res.json() as Record<string, unknown>;
      return { status: res.statusCode, ...rest, detail: String(rest.detail).replace(id, 'ID') };
    };
    for (const path of ['/api/payment-links/', '/api/payments/']) {
      const suffix = path === '/api/payments/' ? '/status' : '';
      const foreign = await api(keys[B.id] ?? '', 'GET', `${path}ONLY-A${suffix}`);
      const unknown = await api(keys[B.id] ?? '', 'GET', `${path}NONE-A${suffix}`);
      expect(foreign.statusCode).toBe(404);
      expect(shape(foreign, 'ONLY-A')).toEqual(shape(unknown, 'NONE-A'));
    }
  });

  it("a notification of A posted to B's URL, or naming another MID, changes nothing (401)", async () => {
    const [note] = (
      (await sim.get(`/_sim/notifications?order_id=SAME-1&merchant_id=${A.mid}`)).body as {
        notifications: Array<{ payload: Record<string, string> }>;
      }
    ).notifications;
    expect(note?.payload.merchant_id).toBe(A.mid);
    const countB = async () =>
      (await ctx.store.db.selectFrom('notifications').select('id').where('account', '=', B.id).execute()).length;
    const before = await countB();
    const post = (account: string, body: unknown) =>
      ctx.app.inject({ method: 'POST', url: `/webhook/midtrans/${account}`, payload: body as Record<string, unknown> });
    expect((await post(B.id, note?.payload)).statusCode).toBe(401);
    // Signed with B's own key, but naming A's MID.
    const p = { ...note?.payload, status_code: '200', gross_amount: '20000.00', merchant_id: A.mid };
    const forged = { ...p, signature_key: sign(note?.payload.order_id ?? '', '200', '20000.00', B.serverKey) };
    expect((await post(B.id, forged)).statusCode).toBe(401);
    expect((await post('nobody', forged)).statusCode).toBe(404);
    expect(await countB()).toBe(before);
    expect(erpB.accepted()).toHaveLength(1);
    // The same body naming B's own MID is B's to judge: the signature above was right.
    expect((await post(B.id, { ...forged, merchant_id: B.mid })).statusCode).toBe(200);
  });

  it("a gateway report imported for an account is matched with that account's payments only", async () => {
    const csv = 'Order ID,Transaction Status,Amount\r\nSAME-1,settlement,20000.00\r\n';
    const upload = (account?: string) =>
      ctx.app.inject({
        method: 'POST',
        url: `/api/reconciliation/imports${account ? `?account=${account}` : ''}`,
        headers: { ...op, 'content-type': 'text/csv' },
        payload: csv,
      });
    const inB = await upload(B.id);
    expect(inB.statusCode).toBe(201);
    expect(inB.json()).toMatchObject({ account: B.id, rows: 1, matched: 1, amount_mismatch: 0 });
    // The same file is another account's report too: matched there with A's own payment (another amount).
    const inA = await upload(A.id);
    expect(inA.statusCode).toBe(201);
    expect(inA.json()).toMatchObject({ account: A.id, matched: 0, amount_mismatch: 1 });
    expect((await upload()).json()).toMatchObject({ account: 'default', matched: 0, missing_here: 1 });
    expect((await upload(B.id)).statusCode).toBe(200);
    expect((await upload('nobody')).statusCode).toBe(404);
  });

  it("one account's ERP being down never holds back the other's events of the same order id", async () => {
    for (const [key, nominal] of [
      [keys[A.id], 11_000],
      [keys[B.id], 22_000],
    ] as const)
      expect((await api(key ?? '', 'POST', '/api/payment-links', { order_id: 'SAME-2', nominal })).statusCode).toBe(
        201,
      );
    erpA.setMode({ kind: 'fail', status: 503 });
    try {
      await sim.post(`/_sim/transactions/SAME-2/pay?merchant_id=${A.mid}`, { payment_type: 'bank_transfer' });
      await erpA.waitFor((r) => r.deliveries.some((d) => d.json?.order_id === 'SAME-2'));
      await sim.post(`/_sim/transactions/SAME-2/pay?merchant_id=${B.mid}`, { payment_type: 'bank_transfer' });
      await erpB.waitFor((r) => r.accepted().some((d) => d.json?.order_id === 'SAME-2'));
      expect(erpB.accepted().filter((d) => d.json?.order_id === 'SAME-2')[0]?.json).toMatchObject({
        account: B.id,
        gross_amount: 22_000,
      });
    } finally {
      erpA.setMode({ kind: 'ok' });
    }
  });

  it.runIf(kind === 'postgres')(
    'a second instance on the same database: a key made on the first works there at once, and each ERP still gets exactly its own events',
    async () => {
      const logger = pino({ level: 'silent' });
      const second = await appOver(
        ctx.services.config,
        { logger, store: await ctx.db.open({ logger }) },
        { runtimeConfigCacheMs: 0, simulatorBaseUrl: simulator.baseUrl },
      );
      try {
        second.services.outbox.start();
        const made = await ctx.app.inject({ method: 'POST', url: `/api/accounts/${B.id}/api-keys`, headers: op });
        const keyB = (made.json() as { key: string }).key;
        const onSecond = (url: string, payload?: Record<string, unknown>) =>
          second.app.inject({
            method: payload ? 'POST' : 'GET',
            url,
            headers: { authorization: `Bearer ${keyB}` },
            ...(payload ? { payload } : {}),
          });
        expect((await onSecond('/api/payment-links/SAME-1')).json()).toMatchObject({ nominal: 20_000 });
        expect((await onSecond('/api/payment-links', { order_id: 'TWO-1', nominal: 33_000 })).statusCode).toBe(201);
        const beforeA = erpA.accepted().length;
        await sim.post(`/_sim/transactions/TWO-1/pay?merchant_id=${B.mid}`, { payment_type: 'bank_transfer' });
        await erpB.waitFor((r) => r.accepted().some((d) => d.json?.order_id === 'TWO-1'));
        // Both instances' workers run: the event is still delivered once, to B's ERP only.
        await new Promise((r) => setTimeout(r, 500));
        const twos = erpB.accepted().filter((d) => d.json?.order_id === 'TWO-1');
        expect(twos.map((d) => d.json)).toEqual([expect.objectContaining({ account: B.id, gross_amount: 33_000 })]);
        expect(erpA.accepted()).toHaveLength(beforeA);
        // Revoked on the first instance: refused on the second at once.
        const id = (made.json() as { key_id: string }).key_id;
        expect(
          (await ctx.app.inject({ method: 'DELETE', url: `/api/accounts/${B.id}/api-keys/${id}`, headers: op }))
            .statusCode,
        ).toBe(204);
        expect((await onSecond('/api/payment-links/SAME-1')).statusCode).toBe(401);
      } finally {
        await second.close();
      }
    },
  );

  it('a revoked key is refused at once; a disabled account refuses its keys and its notifications', async () => {
    const extra = (
      await ctx.app.inject({ method: 'POST', url: `/api/accounts/${B.id}/api-keys`, headers: op, payload: {} })
    ).json() as { key: string; key_id: string };
    expect((await api(extra.key, 'GET', '/api/payment-links/SAME-1')).statusCode).toBe(200);
    await ctx.app.inject({ method: 'DELETE', url: `/api/accounts/${B.id}/api-keys/${extra.key_id}`, headers: op });
    expect((await api(extra.key, 'GET', '/api/payment-links/SAME-1')).statusCode).toBe(401);

    const [note] = (
      (await sim.get(`/_sim/notifications?order_id=SAME-1&merchant_id=${A.mid}`)).body as {
        notifications: Array<{ payload: Record<string, string> }>;
      }
    ).notifications;
    const replay = () =>
      ctx.app.inject({ method: 'POST', url: `/webhook/midtrans/${A.id}`, payload: note?.payload ?? {} });
    expect((await replay()).json()).toMatchObject({ result: 'duplicate' });
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/accounts/${A.id}`, headers: op })).statusCode).toBe(
      200,
    );
    expect((await api(keys[A.id] ?? '', 'GET', '/api/payment-links/SAME-1')).statusCode).toBe(401);
    expect((await replay()).statusCode).toBe(401);
    // B goes on.
    expect((await api(keys[B.id] ?? '', 'GET', '/api/payment-links/SAME-1')).statusCode).toBe(200);
  });
});
