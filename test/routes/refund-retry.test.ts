/**
 * POST /api/payments/{order_id}/refund when the gateway's first answer never arrives: a gateway in
 * front of the simulator that performs the first refund but holds its answer past the client's
 * timeout, then answers normally. The same request retried (same Idempotency-Key) must send the same
 * refund_key, and the money must move once; a new request must be a refund of its own. The console's
 * confirmed refund form, sent again, is that same request: its one-time key is its Idempotency-Key.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { formState, hiddenFields } from '../helpers/console-forms.js';
import { simClient, E2E_SERVER_KEY, type SimClient } from '../helpers/e2e.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';

const KEY = 'route-key-refund-retry-0123';
const auth = { authorization: `Bearer ${KEY}` };

interface SlowGateway {
  url: string;
  /** Bodies of the refund calls that reached it, in order. */
  refunds: Array<{ refund_key?: string; amount?: number }>;
  close(): Promise<void>;
}

/** Forwards everything to `target`; the first refund is performed there, but its answer is held until the gateway closes. */
async function slowFirstRefund(target: string): Promise<SlowGateway> {
  const refunds: SlowGateway['refunds'] = [];
  const held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const isRefund = req.method === 'POST' && (req.url ?? '').endsWith('/refund');
        if (isRefund) refunds.push(JSON.parse(body.toString('utf8')) as SlowGateway['refunds'][number]);
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(
            ([k, v]) => typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k),
          ),
        ) as Record<string, string>;
        const answer = await fetch(target + (req.url ?? '/'), {
          method: req.method,
          headers,
          body: body.length > 0 ? body : undefined,
        });
        const text = await answer.text();
        if (isRefund && refunds.length === 1) {
          held.push(res);
          return;
        }
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refunds,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of held) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.each(DATABASE_KINDS)('a refund retried after a gateway timeout (%s)', (kind) => {
  let simulator: RunningSimulator;
  let sim: SimClient;
  let gateway: SlowGateway;
  let t: TestContext;
  beforeEach(async () => {
    simulator = await startSimulator({ serverKey: E2E_SERVER_KEY, logger: false, seed: 7 });
    sim = simClient(simulator.baseUrl);
    gateway = await slowFirstRefund(simulator.baseUrl);
    t = await makeTestApp(
      kind,
      { API_KEYS: KEY, MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: E2E_SERVER_KEY },
      { simulatorBaseUrl: gateway.url, gatewayTimeoutMs: 300 },
    );
  });
  afterEach(async () => {
    await t.close();
    await gateway.close();
    await simulator.close();
  });
  const post = (url: string, payload?: object, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url, ...(payload ? { payload } : {}), headers: { ...auth, ...headers } });

  async function paidCharge(orderId: string, nominal: number): Promise<string> {
    const c = await post('/api/charge', { order_id: orderId, nominal, payment_type: 'qris' });
    expect(c.statusCode).toBe(201);
    const gatewayOrderId: string = c.json().gateway_order_id;
    expect((await sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    const status = await t.app.inject({
      method: 'GET',
      url: `/api/payments/${encodeURIComponent(orderId)}/status`,
      headers: auth,
    });
    expect(status.json()).toMatchObject({ status: 'paid' });
    return gatewayOrderId;
  }

  it('the same request again (same Idempotency-Key) sends the same refund_key and the gateway refunds once', async () => {
    const gatewayOrderId = await paidCharge('RT/1', 60000);
    const first = await post('/api/payments/RT%2F1/refund', { amount: 20000 }, { 'idempotency-key': 'rt-1' });
    expect(first.statusCode).toBe(504);
    expect((await t.services.store.transactions.findByOrderId('RT/1'))?.refundedAmount).toBe(0);
    const retry = await post('/api/payments/RT%2F1/refund', { amount: 20000 }, { 'idempotency-key': 'rt-1' });
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({ status: 'partially_refunded', refunded_amount: 20000 });
    expect(gateway.refunds).toHaveLength(2);
    expect(gateway.refunds[0]).toMatchObject({ amount: 20000, refund_key: expect.stringMatching(/^rf-[0-9a-f]{32}$/) });
    expect(gateway.refunds[1]?.refund_key).toBe(gateway.refunds[0]?.refund_key);
    const at = (await sim.gateway('GET', `/v2/${gatewayOrderId}/status`)).body as { refund_amount?: string };
    expect(at.refund_amount).toBe('20000.00');
    const tx = await t.services.store.transactions.findByOrderId('RT/1');
    expect(tx?.refundedAmount).toBe(20000);
    const kept = await t.services.store.refunds.listFor(tx?.id ?? '');
    expect(kept.map((r) => [r.refundKey, r.state])).toEqual([[gateway.refunds[0]?.refund_key, 'approved']]);
  });

  it('a new request (no key) after a lost answer is a refund of its own, made once the lost one is known to be made', async () => {
    const gatewayOrderId = await paidCharge('RT/2', 60000);
    expect((await post('/api/payments/RT%2F2/refund', { amount: 20000, reason: 'first' })).statusCode).toBe(504);
    const second = await post('/api/payments/RT%2F2/refund', { amount: 20000, reason: 'second' });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ status: 'partially_refunded', refunded_amount: 40000 });
    expect(gateway.refunds).toHaveLength(2);
    expect(gateway.refunds[1]?.refund_key).not.toBe(gateway.refunds[0]?.refund_key);
    const at = (await sim.gateway('GET', `/v2/${gatewayOrderId}/status`)).body as { refund_amount?: string };
    expect(at.refund_amount).toBe('40000.00');
    const tx = await t.services.store.transactions.findByOrderId('RT/2');
    const kept = await t.services.store.refunds.listFor(tx?.id ?? '');
    expect(kept.map((r) => [r.reason, r.state])).toEqual([
      ['first', 'approved'],
      ['second', 'approved'],
    ]);
  });

  it("the console's confirmed refund form sent again after a timeout sends the same refund_key and the gateway refunds once", async () => {
    const gatewayOrderId = await paidCharge('RT/3', 60000);
    const txPage = '/console/transactions/RT%2F3';
    const page = await t.app.inject({ url: txPage, headers: { authorization: basicAuth() } });
    const { token, cookie } = formState(page);
    const send = (fields: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: `${txPage}/refund`,
        payload: new URLSearchParams(fields).toString(),
        headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
    const confirmation = await send({ _csrf: token, amount: '20.000', reason: '' });
    expect(confirmation.statusCode).toBe(200);
    const form = hiddenFields(confirmation.body, `${txPage}/refund`);
    const first = await send(form);
    expect(first.statusCode).toBe(504);
    expect(first.body).toContain('(GATEWAY_TIMEOUT)');
    const again = await send(form);
    expect([again.statusCode, again.headers.location]).toEqual([303, '/console/transactions/RT%2F3?done=refund']);
    expect(gateway.refunds).toHaveLength(2);
    expect(gateway.refunds[1]?.refund_key).toBe(gateway.refunds[0]?.refund_key);
    const at = (await sim.gateway('GET', `/v2/${gatewayOrderId}/status`)).body as { refund_amount?: string };
    expect(at.refund_amount).toBe('20000.00');
    expect((await t.services.store.transactions.findByOrderId('RT/3'))?.refundedAmount).toBe(20000);
  });
});
