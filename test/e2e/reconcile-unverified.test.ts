/**
 * Unverified notifications whose status check keeps failing must not starve newer ones: the
 * reconciler rechecks never-checked ones first, then the least recently checked. The gateway is
 * the real simulator behind a loopback filter that fails the status API for some orders.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { E2E_SERVER_KEY, simClient } from '../helpers/e2e.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { signedNotification } from '../helpers/notifications.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { createReconciler } from '../../src/workers/status-sweeper.js';

const OLD = 50;

/** Forwards to the simulator, except the status API of the ids in `failing` (paylink asks by the signed order id): 503. */
async function filteringGateway(
  target: string,
  failing: Set<string>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = /^\/v2\/([^/]+)\/status/.exec(req.url ?? '')?.[1];
      if (req.method === 'GET' && id !== undefined && failing.has(decodeURIComponent(id))) {
        res
          .writeHead(503, { 'content-type': 'application/json' })
          .end('{"status_code":"503","status_message":"unavailable"}');
        return;
      }
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
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe.each(DATABASE_KINDS)('reconciler: unverified notifications (%s)', (kind) => {
  let sim: RunningSimulator;
  let gw: { url: string; close(): Promise<void> };
  let ctx: TestContext;
  const failing = new Set<string>();
  beforeEach(async () => {
    sim = await startSimulator({ serverKey: E2E_SERVER_KEY, logger: false });
    gw = await filteringGateway(sim.baseUrl, failing);
    ctx = await makeTestApp(
      kind,
      { MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: E2E_SERVER_KEY },
      { simulatorBaseUrl: gw.url, runtimeConfigCacheMs: 0 },
    );
    await patchRuntimeConfig(ctx.services.runtimeConfig, { gateway: { confirm_notifications: true } });
  });
  afterEach(async () => {
    await ctx.close();
    await gw.close();
    await sim.close();
    failing.clear();
  });

  it(`${OLD} older ones whose status check keeps failing do not keep a newer one from being confirmed`, async () => {
    const gateway = simClient(sim.baseUrl, E2E_SERVER_KEY);
    const charged = await gateway.gateway('POST', '/v2/charge', {
      payment_type: 'bank_transfer',
      transaction_details: { order_id: 'NEW-1', gross_amount: 150000 },
      bank_transfer: { bank: 'bca' },
    });
    expect(charged.status).toBe(200);
    expect((await gateway.post('/_sim/transactions/NEW-1/pay')).status).toBe(200);
    const truth = (await gateway.gateway('GET', '/v2/NEW-1/status')).body as Record<string, unknown>;
    failing.add('NEW-1');

    for (let i = 0; i < OLD; i++) {
      failing.add(`OLD-${i}`);
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/webhook/midtrans',
        payload: signedNotification(
          { order_id: `OLD-${i}`, transaction_id: `old-tx-${i}`, transaction_status: 'settlement' },
          E2E_SERVER_KEY,
        ),
      });
      expect(res.json()).toMatchObject({ result: 'unverified' });
    }
    const newest = await ctx.app.inject({ method: 'POST', url: '/webhook/midtrans', payload: truth });
    expect(newest.json()).toMatchObject({ result: 'unverified' });

    // From now on only the old ones keep failing.
    failing.delete('NEW-1');
    const sweeper = createReconciler(ctx.services, { ratePerSecond: 1000 });
    const first = await sweeper.sweepOnce();
    const second = await sweeper.sweepOnce();
    expect((first.outcomes.rechecked ?? 0) + (second.outcomes.rechecked ?? 0)).toBe(1);
    expect((await ctx.services.store.transactions.findByGatewayOrderId('NEW-1'))?.status).toBe('paid');
    const left = await ctx.services.store.notifications.listByResult('unverified', 100);
    expect(left.map((n) => n.gatewayOrderId).sort()).toEqual(Array.from({ length: OLD }, (_, i) => `OLD-${i}`).sort());
  });
});
