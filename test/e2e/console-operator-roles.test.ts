/**
 * Roles at the gateway simulator: a finance operator signed in to the console refunds a paid
 * payment and the timeline and the refund name them; a viewer who reaches the confirmation anyway
 * is refused by the refund itself, and nothing reaches the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { E2E_SERVER_KEY, simClient, type SimClient } from '../helpers/e2e.js';
import { formState, hiddenFields } from '../helpers/console-forms.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';

const KEY = 'operator-roles-key-0123456789';
const FINANCE = { user: 'fina', pass: 'finance-password-001' };
const VIEWER = { user: 'vera', pass: 'viewer-password-0001' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe.each(DATABASE_KINDS)('operator roles at the gateway (%s)', (kind) => {
  let simulator: RunningSimulator;
  let sim: SimClient;
  let t: TestContext;
  beforeAll(async () => {
    simulator = await startSimulator({ serverKey: E2E_SERVER_KEY, logger: false, seed: 5 });
    sim = simClient(simulator.baseUrl);
    t = await makeTestApp(
      kind,
      { API_KEYS: KEY, MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: E2E_SERVER_KEY },
      { simulatorBaseUrl: simulator.baseUrl, runtimeConfigCacheMs: 0 },
    );
    for (const [o, role] of [
      [FINANCE, 'finance'],
      [VIEWER, 'viewer'],
    ] as const)
      await t.app.inject({
        method: 'POST',
        url: '/api/operators',
        headers: { authorization: basicAuth() },
        payload: { username: o.user, role, password: o.pass },
      });
  });
  afterAll(async () => {
    await t.close();
    await simulator.close();
  });

  async function paid(orderId: string): Promise<void> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/charge',
      payload: { order_id: orderId, nominal: 50000, payment_type: 'qris' },
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(res.statusCode).toBe(201);
    await sim.post(`/_sim/transactions/${(res.json() as { gateway_order_id: string }).gateway_order_id}/pay`);
    await t.app.inject({ url: `/api/payments/${orderId}/status`, headers: { authorization: `Bearer ${KEY}` } });
  }

  async function session(who: { user: string; pass: string }): Promise<string> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      payload: new URLSearchParams({ username: who.user, password: who.pass }).toString(),
      headers: FORM,
    });
    expect(res.statusCode).toBe(303);
    return String(res.headers['set-cookie']).split(';')[0] ?? '';
  }

  /** The refund as a person does it: the form, then the confirmation's form. */
  async function refund(cookie: string, orderId: string, amount: string) {
    const url = `/console/transactions/${orderId}`;
    const { token, cookie: csrf } = formState(await t.app.inject({ url, headers: { cookie } }));
    const headers = { cookie: `${cookie}; ${csrf}`, ...FORM };
    const first = await t.app.inject({
      method: 'POST',
      url: `${url}/refund`,
      payload: new URLSearchParams({ _csrf: token, amount }).toString(),
      headers,
    });
    expect(first.statusCode).toBe(200);
    const form = hiddenFields(first.body, `${url}/refund`);
    return t.app.inject({
      method: 'POST',
      url: `${url}/refund`,
      payload: new URLSearchParams(form).toString(),
      headers,
    });
  }

  it('a finance operator refunds from the console; the timeline and the refund name them', async () => {
    await paid('RL-1');
    const cookie = await session(FINANCE);
    const page = await t.app.inject({ url: '/console/transactions/RL-1', headers: { cookie } });
    expect(page.body).toContain('action="/console/transactions/RL-1/refund"');
    const res = await refund(cookie, 'RL-1', '10000');
    expect(res.statusCode).toBe(303);
    const tx = await t.services.store.transactions.findByOrderId('RL-1');
    expect(tx?.refundedAmount).toBe(10000);
    expect((await t.services.store.refunds.listFor(tx?.id ?? '')).map((r) => r.actor)).toEqual(['operator:fina']);
    const shown = await t.app.inject({ url: '/console/transactions/RL-1', headers: { cookie } });
    expect(shown.body).toContain('by operator:fina');
  });

  it('a viewer who reaches the confirmation is refused by the refund itself (403), and the gateway is not asked', async () => {
    await paid('RL-2');
    const cookie = await session(VIEWER);
    expect((await t.app.inject({ url: '/console/transactions/RL-2', headers: { cookie } })).body).not.toContain(
      '/refund"',
    );
    const before = (await sim.requests('/refund')).length;
    const res = await refund(cookie, 'RL-2', '10000');
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('FORBIDDEN');
    expect((await sim.requests('/refund')).length).toBe(before);
    expect((await t.services.store.transactions.findByOrderId('RL-2'))?.refundedAmount).toBe(0);
  });
});
