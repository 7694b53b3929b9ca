/**
 * The console with two accounts: a payment of the second account is listed with its account, opens,
 * is refunded and has its failed ERP delivery retried from the console, while the same order id in
 * `default` is untouched; an operator limited to `default` gets 404 for it, as for an unknown one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { E2E_SERVER_KEY, simClient, type SimClient } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { formState, hiddenFields } from '../helpers/console-forms.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';

const ENV_KEY = 'env-key-console-accounts-0123456789';
const A = {
  id: 'shop-a',
  serverKey: 'SB-Mid-server-console-a-01',
  mid: 'GC00000001',
  secret: 'erp-secret-of-shop-a-0001',
};
const LIMITED = { user: 'dina', pass: 'default-only-password-01' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const PAGE = `/console/transactions/CA-1?account=${A.id}`;

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

describe.each(DATABASE_KINDS)('console with two accounts (%s)', (kind) => {
  let ctx: LoggedApp;
  let simulator: RunningSimulator;
  let sim: SimClient;
  let erp: ErpReceiver;
  let keyA = '';
  const admin = { authorization: basicAuth() };
  const limited = { authorization: basicAuth(LIMITED.user, LIMITED.pass) };

  const charge = async (key: string, nominal: number, mid?: string) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/charge',
      payload: { order_id: 'CA-1', nominal, payment_type: 'qris' },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(201);
    const gid = (res.json() as { gateway_order_id: string }).gateway_order_id;
    const paid = await sim.post(`/_sim/transactions/${gid}/pay${mid ? `?merchant_id=${mid}` : ''}`);
    expect(paid.status).toBe(200);
    await ctx.app.inject({ url: '/api/payments/CA-1/status', headers: { authorization: `Bearer ${key}` } });
  };

  /** A form of the page at `url` posted as a browser does (its CSRF token, its one-time key), with the cookie used. */
  const post = async (url: string, action: string, extra: Record<string, string> = {}) => {
    const page = await ctx.app.inject({ url, headers: admin });
    const { cookie } = formState(page);
    const fields = { ...hiddenFields(page.body, action), ...extra };
    expect(fields._csrf).toBeTruthy();
    const res = await ctx.app.inject({
      method: 'POST',
      url: action,
      payload: new URLSearchParams(fields).toString(),
      headers: { ...admin, cookie, ...FORM },
    });
    return Object.assign(res, { cookie });
  };

  beforeAll(async () => {
    erp = await startErpReceiver({ secret: A.secret });
    erp.setMode({ kind: 'fail', status: 503 });
    simulator = await startSimulator({
      serverKey: E2E_SERVER_KEY,
      logger: false,
      notificationTimeoutMs: 2_000,
      merchants: [{ serverKey: A.serverKey, merchantId: A.mid }],
    });
    sim = simClient(simulator.baseUrl);
    const port = await freePort();
    ctx = await makeLoggedApp(
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
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/api/accounts',
      headers: admin,
      payload: {
        id: A.id,
        config: {
          gateway: { mode: 'simulator', server_key: A.serverKey, merchant_id: A.mid },
          erp: { notify_url: erp.url, webhook_secret: A.secret, timeout_ms: 2_000 },
        },
      },
    });
    expect(created.statusCode).toBe(201);
    keyA = (
      (await ctx.app.inject({ method: 'POST', url: `/api/accounts/${A.id}/api-keys`, headers: admin })).json() as {
        key: string;
      }
    ).key;
    const op = await ctx.app.inject({
      method: 'POST',
      url: '/api/operators',
      headers: admin,
      payload: { username: LIMITED.user, role: 'finance', accounts: ['default'], password: LIMITED.pass },
    });
    expect(op.statusCode).toBe(201);
    await charge(ENV_KEY, 40_000);
    await charge(keyA, 50_000, A.mid);
  });
  afterAll(async () => {
    await ctx?.close();
    await simulator?.close();
    await erp?.close();
  });

  const txOf = (account: string) => ctx.services.store.forAccount(account).transactions.findByOrderId('CA-1');

  it('lists each payment with its account and filters by account', async () => {
    const all = await ctx.app.inject({ url: '/console/transactions', headers: admin });
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain('data-account-switcher');
    expect(all.body).toContain(`href="/console/transactions/CA-1?account=${A.id}"`);
    expect(all.body).toContain('href="/console/transactions/CA-1"');
    const onlyA = await ctx.app.inject({ url: `/console/transactions?account=${A.id}`, headers: admin });
    expect(onlyA.body).toContain(`data-account="${A.id}"`);
    expect(onlyA.body).not.toContain('data-account="default"');
    const id = await ctx.app.inject({ url: '/console/transactions?lang=id', headers: admin });
    expect(id.body).toContain('Semua akun');
  });

  it("opens the second account's payment, retries its failed delivery and refunds it from the console", async () => {
    await expect
      .poll(
        async () =>
          (await ctx.services.store.forAccount(A.id).console.eventsForOrder(`${A.id}\u001fCA-1`)).map((e) => e.state),
        {
          timeout: 20_000,
        },
      )
      .toContain('failed');
    const page = await ctx.app.inject({ url: PAGE, headers: admin });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-refunded="0"');
    expect(page.body).toMatch(/Rp.50\.000/);

    erp.setMode({ kind: 'ok' });
    const retried = await post(PAGE, `/console/transactions/CA-1/retry-deliveries?account=${A.id}`);
    expect(retried.statusCode).toBe(303);
    expect(retried.headers.location).toBe(`${PAGE}&done=retry-deliveries`);
    await erp.waitFor((r) => r.accepted().some((d) => d.json?.order_id === 'CA-1'), 20_000);
    expect(erp.accepted().find((d) => d.json?.order_id === 'CA-1')?.json).toMatchObject({ account: A.id });

    const action = `/console/transactions/CA-1/refund?account=${A.id}`;
    const asked = await post(PAGE, action, { amount: '10000' });
    expect(asked.statusCode).toBe(200);
    const confirmed = await ctx.app.inject({
      method: 'POST',
      url: action,
      payload: new URLSearchParams(hiddenFields(asked.body, action)).toString(),
      headers: { ...admin, cookie: asked.cookie, ...FORM },
    });
    expect(confirmed.statusCode).toBe(303);
    expect((await txOf(A.id))?.refundedAmount).toBe(10_000);
    expect((await txOf('default'))?.refundedAmount).toBe(0);
    // The timeline names who retried, from the audit log; the same order id of default names nobody.
    await expect
      .poll(
        async () => {
          await ctx.rawLogs();
          return (await ctx.app.inject({ url: PAGE, headers: admin })).body;
        },
        { timeout: 10_000 },
      )
      .toMatch(/Retrying the ERP delivery asked<br><span class="muted">by operator:ops</);
    const other = await ctx.app.inject({ url: '/console/transactions/CA-1', headers: admin });
    expect(other.body).not.toContain('Retrying the ERP delivery asked');
  });

  it("the overview of an operator limited to default counts default's payments, events and money only", async () => {
    const figures = async (headers: Record<string, string>) => {
      const body = (await ctx.app.inject({ url: '/console', headers })).body;
      const count = (name: string) =>
        Number(/data-count="([^"]+)">(?:<a [^>]*>)?(\d+)/.exec(body.slice(body.indexOf(`data-count="${name}"`)))?.[2]);
      return {
        today: count('today-all'),
        events: ['waiting', 'failing', 'dead', 'delivered'].reduce((n, k) => n + count(k), 0),
        money: /data-money="today">([^<]+)</.exec(body)?.[1]?.replace(/\s/g, ' '),
      };
    };
    const eventsOf = async (account: string) =>
      (
        await ctx.services.store
          .forAccount(account)
          .console.eventsForOrder(`${account === 'default' ? '' : `${account}\u001f`}CA-1`)
      ).length;
    const all = await figures(admin);
    const own = await figures(limited);
    expect(all.today).toBe(2);
    expect(own.today).toBe(1);
    expect(all.money).toMatch(/^Rp.90\.000$/);
    expect(own.money).toMatch(/^Rp.40\.000$/);
    expect(own.events).toBeLessThan(all.events);
    expect(all.events - own.events).toBe(await eventsOf(A.id));
  });

  it('an operator limited to default gets 404 for the other account, as for an unknown one', async () => {
    const foreign = await ctx.app.inject({ url: PAGE, headers: limited });
    const unknown = await ctx.app.inject({ url: '/console/transactions/NONE-1', headers: limited });
    expect([foreign.statusCode, unknown.statusCode]).toEqual([404, 404]);
    expect((await ctx.app.inject({ url: '/console/transactions/CA-1', headers: limited })).statusCode).toBe(200);
    const list = await ctx.app.inject({ url: '/console/transactions', headers: limited });
    expect(list.body).not.toContain(`account=${A.id}`);
    expect(list.body).not.toContain('data-account-switcher');

    const api = (url: string) => ctx.app.inject({ url, headers: limited });
    const items = async (url: string) => ((await api(url)).json() as { items: Array<{ order_id?: string }> }).items;
    expect(await items(`/api/transactions?account=${A.id}`)).toEqual([]);
    expect((await items('/api/transactions')).length).toBe(1);
    expect(await items(`/api/deliveries?account=${A.id}`)).toEqual([]);
    expect(((await api('/api/accounts')).json() as { data: Array<{ id: string }> }).data.map((a) => a.id)).toEqual([
      'default',
    ]);
    const config = await api(`/api/accounts/${A.id}/config`);
    const none = await api('/api/accounts/nobody/config');
    expect([config.statusCode, none.statusCode]).toEqual([404, 404]);
    expect((config.json() as { code: string }).code).toBe((none.json() as { code: string }).code);
    const [event] = await ctx.services.store.forAccount(A.id).console.eventsForOrder(`${A.id}\u001fCA-1`);
    const retry = await ctx.app.inject({
      method: 'POST',
      url: `/api/deliveries/${event?.eventId ?? ''}/retry`,
      headers: limited,
    });
    expect(retry.statusCode).toBe(404);
  });
});
