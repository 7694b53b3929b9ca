/**
 * The alerts the status sweeper raises, against the real simulator and a real alert receiver on
 * loopback: a payment still pending past its expiry (the gateway still calls it pending) fires
 * `payment_stuck_pending` once and a check that finds it paid resolves it; status calls that get
 * no answer (the connection to the gateway dropped) past the threshold fire `gateway_unreachable`
 * once and its next answer resolves it; a reconciliation import with exceptions fires
 * `reconciliation_mismatch` once for that import. The sweeper's time is an injected clock; the
 * simulator keeps its own.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { E2E_SERVER_KEY, simClient, startE2E, type E2EContext } from '../helpers/e2e.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { jakartaDay } from '../../src/platform/time.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { createReconciler } from '../../src/workers/status-sweeper.js';

const KEY = 'erp-key-alerts-gateway-0123456789';
const ALERT_SECRET = 'alert-receiver-secret-gateway-0123';

class FakeClock {
  t = Date.now();
  now = () => new Date(this.t);
  set(ms: number) {
    this.t = ms;
  }
  advance(ms: number) {
    this.t += ms;
  }
}

const alertsOf = (r: ErpReceiver, alert: string) => r.accepted().filter((d) => d.json?.alert === alert);

describe.each(DATABASE_KINDS)('alerts from the status sweeper and reconciliation imports (%s)', (kind) => {
  let e: E2EContext;
  let rx: ErpReceiver;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    rx = await startErpReceiver({ secret: ALERT_SECRET });
    e = await startE2E(kind, { env: { API_KEYS: KEY }, serviceOptions: { clock, runtimeConfigCacheMs: 0 } });
    await patchRuntimeConfig(e.services.runtimeConfig, {
      reconcile: { pending_after_minutes: 1 },
      alerts: { url: rx.url, secret: ALERT_SECRET, stuck_pending_after_minutes: 1, erp_failing_after_minutes: 0.5 },
    });
  });
  afterEach(async () => {
    await e.close();
    await rx.close();
  });

  async function charge(orderId: string): Promise<{ gatewayOrderId: string; expireAt: number }> {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      headers: { authorization: `Bearer ${KEY}` },
      payload: { order_id: orderId, nominal: 150000, payment_type: 'qris' },
    });
    expect(res.statusCode).toBe(201);
    const tx = await e.services.store.transactions.findByOrderId(orderId);
    expect(tx?.status).toBe('pending');
    expect(tx?.expireAt).toEqual(expect.any(String));
    return {
      gatewayOrderId: res.json<{ gateway_order_id: string }>().gateway_order_id,
      expireAt: Date.parse(tx?.expireAt ?? ''),
    };
  }

  it('pending past its expiry while the gateway still calls it pending: one payment_stuck_pending; resolved once a check finds it paid', async () => {
    const sweeper = createReconciler(e.services, { ratePerSecond: 1000 });
    const { gatewayOrderId, expireAt } = await charge('STUCK-1');
    // Past its expiry, not yet past the threshold: nothing.
    clock.set(expireAt + 30_000);
    await sweeper.sweepOnce();
    await e.services.outbox.drain();
    expect(rx.deliveries).toHaveLength(0);

    clock.set(expireAt + 2 * 60_000);
    await sweeper.sweepOnce();
    await e.services.outbox.drain();
    expect((await e.services.store.transactions.findByOrderId('STUCK-1'))?.status).toBe('pending');
    clock.advance(60_000);
    await sweeper.sweepOnce();
    await e.services.outbox.drain();
    const firing = alertsOf(rx, 'payment_stuck_pending');
    expect(firing).toHaveLength(1);
    expect(firing[0]).toMatchObject({ verified: true });
    expect(firing[0]?.json).toMatchObject({
      type: 'alert.firing',
      subject: 'STUCK-1',
      details: { order_id: 'STUCK-1', gateway_order_id: gatewayOrderId },
    });
    expect((await e.services.store.alerts.listOpen()).map((a) => [a.alert, a.subject])).toEqual([
      ['payment_stuck_pending', 'STUCK-1'],
    ]);

    expect((await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    clock.advance(60_000);
    await sweeper.sweepOnce();
    await e.services.outbox.drain();
    expect((await e.services.store.transactions.findByOrderId('STUCK-1'))?.status).toBe('paid');
    expect(alertsOf(rx, 'payment_stuck_pending').map((d) => d.json?.type)).toEqual(['alert.firing', 'alert.resolved']);
    expect(await e.services.store.alerts.listOpen()).toEqual([]);
  });

  it('an import with exceptions: one reconciliation_mismatch naming the import; the same file again raises none', async () => {
    const op = { authorization: basicAuth() };
    const day = jakartaDay(new Date(Date.now() - 2 * 86_400_000).toISOString());
    const rows: string[] = [];
    for (const [i, nominal] of [50_000, 75_000].entries()) {
      const orderId = `MISMATCH-${i}`;
      const { gatewayOrderId } = await charge(orderId);
      expect((await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
      await e.app.inject({
        method: 'GET',
        url: `/api/payments/${encodeURIComponent(orderId)}/status`,
        headers: { authorization: `Bearer ${KEY}` },
      });
      const tx = await e.services.store.transactions.findByOrderId(orderId);
      expect(tx?.status).toBe('paid');
      await e.services.store.transactions.update(tx?.id ?? '', { settlementTime: `${day}T10:15:00+07:00` });
      // The second row's amount differs from what paylink recorded (150,000).
      const amount = i === 1 ? 150_500 : 150_000;
      rows.push(
        `${gatewayOrderId},${tx?.gatewayTransactionId ?? ''},qris,settlement,${amount}.00,${nominal / 100},${day} 09:15:00,${day} 10:15:00`,
      );
    }
    const csv =
      [
        'Order ID,Transaction ID,Payment Type,Transaction Status,Amount,Fee,Transaction Time,Settlement Time',
        ...rows,
      ].join('\r\n') + '\r\n';
    const upload = () =>
      e.app.inject({
        method: 'POST',
        url: '/api/reconciliation/imports',
        headers: { ...op, 'content-type': 'text/csv' },
        payload: Readable.from([Buffer.from(csv)]),
      });
    const first = await upload();
    expect(first.statusCode).toBe(201);
    const summary = first.json<{ id: string | number; matched: number; amount_mismatch: number }>();
    expect(summary).toMatchObject({ matched: 1, amount_mismatch: 1 });
    await e.services.outbox.drain();
    const firing = alertsOf(rx, 'reconciliation_mismatch');
    expect(firing).toHaveLength(1);
    expect(firing[0]).toMatchObject({ verified: true });
    expect(firing[0]?.json).toMatchObject({ type: 'alert.firing', subject: String(summary.id) });

    expect((await upload()).statusCode).toBe(200);
    await e.services.outbox.drain();
    expect(alertsOf(rx, 'reconciliation_mismatch')).toHaveLength(1);
  });
});

/** Forwards to the simulator; while `down`, every connection is dropped before an answer. */
async function switchableGateway(target: string): Promise<{ url: string; down: boolean; close(): Promise<void> }> {
  const gw = { url: '', down: false, close: (): Promise<void> => Promise.resolve() };
  const server = http.createServer((req, res) => {
    if (gw.down) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      fetch(`${target}${req.url ?? '/'}`, {
        method: req.method,
        headers,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
      }).then(
        async (r) =>
          res
            .writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' })
            .end(Buffer.from(await r.arrayBuffer())),
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  gw.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gw.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return gw;
}

describe.each(DATABASE_KINDS)('gateway_unreachable from the status sweeper (%s)', (kind) => {
  let sim: RunningSimulator;
  let gw: Awaited<ReturnType<typeof switchableGateway>>;
  let ctx: TestContext;
  let rx: ErpReceiver;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    rx = await startErpReceiver({ secret: ALERT_SECRET });
    sim = await startSimulator({ serverKey: E2E_SERVER_KEY, logger: false });
    gw = await switchableGateway(sim.baseUrl);
    ctx = await makeTestApp(
      kind,
      { MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: E2E_SERVER_KEY, API_KEYS: KEY },
      { simulatorBaseUrl: gw.url, clock, runtimeConfigCacheMs: 0 },
    );
    await patchRuntimeConfig(ctx.services.runtimeConfig, {
      reconcile: { pending_after_minutes: 1 },
      alerts: { url: rx.url, secret: ALERT_SECRET, erp_failing_after_minutes: 0.5 },
    });
  });
  afterEach(async () => {
    await ctx.close();
    await gw.close();
    await sim.close();
    await rx.close();
  });

  it('status calls without an answer past the threshold: one gateway_unreachable; resolved by the next answer', async () => {
    const sweeper = createReconciler(ctx.services, { ratePerSecond: 1000 });
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/charge',
      headers: { authorization: `Bearer ${KEY}` },
      payload: { order_id: 'UNREACH-1', nominal: 150000, payment_type: 'qris' },
    });
    expect(res.statusCode).toBe(201);
    const gatewayOrderId = res.json<{ gateway_order_id: string }>().gateway_order_id;
    gw.down = true;
    clock.advance(2 * 60_000);
    // The first failure starts the count; 10 s later the threshold (30 s) is not reached yet.
    expect((await sweeper.sweepOnce()).errors).toBe(1);
    clock.advance(10_000);
    expect((await sweeper.sweepOnce()).errors).toBe(1);
    await ctx.services.outbox.drain();
    expect(rx.deliveries).toHaveLength(0);

    clock.advance(60_000);
    await sweeper.sweepOnce();
    clock.advance(60_000);
    await sweeper.sweepOnce();
    await ctx.services.outbox.drain();
    const firing = alertsOf(rx, 'gateway_unreachable');
    expect(firing).toHaveLength(1);
    expect(firing[0]).toMatchObject({ verified: true });
    expect(firing[0]?.json).toMatchObject({ type: 'alert.firing', subject: gw.url });

    // The gateway answers again, and says the order was paid meanwhile.
    gw.down = false;
    expect((await simClient(sim.baseUrl).post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    clock.advance(60_000);
    await sweeper.sweepOnce();
    await ctx.services.outbox.drain();
    expect(alertsOf(rx, 'gateway_unreachable').map((d) => d.json?.type)).toEqual(['alert.firing', 'alert.resolved']);
    expect(await ctx.services.store.alerts.listOpen()).toEqual([]);
    expect((await ctx.services.store.transactions.findByOrderId('UNREACH-1'))?.status).toBe('paid');
  });
});
